package main

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/urfave/cli/v2"

	"github.com/toolharness/toolharness/agent"
	"github.com/toolharness/toolharness/chat"
)

// console shows a session live: the model's answer as it streams, its
// reasoning between "Thinking..." and "...done thinking." (as ollama run
// shows it), each call as "● name(args)" and its result as a one-line
// summary. The markup around the reasoning is not shown.
type console struct {
	mu   sync.Mutex
	w    io.Writer // where text, calls and notices go
	bol  bool      // at the beginning of a line
	text bool      // the current exchange streamed any text
	// dim shows reasoning faint (a terminal); hideReasoning not at all.
	dim, hideReasoning bool
	thinking           bool // reasoning is being shown
	// trimNL drops the newlines that start the text after "Thinking..."
	// or "...done thinking." (what follows <think> and </think>).
	trimNL bool
	// clean drops control sequences from the model's text (a terminal,
	// without --raw); each stream keeps its filter's state.
	clean                 bool
	textCtl, reasoningCtl ctlFilter
	// calls are the calls shown or waiting to be, in the order the model
	// wrote them: a call's line is shown once every call before it has
	// its result, so that each result is under its own call.
	calls []*shownCall
}

// shownCall is a call of the exchange and its result once it came.
type shownCall struct {
	call   chat.ToolCall
	shown  bool
	result *agent.Outcome
}

func newConsole(w io.Writer) *console { return &console{w: w, bol: true} }

// agentConsole is the console of run and chat: faint reasoning on a
// terminal (live), none with --hide-reasoning.
func agentConsole(c *cli.Context, w io.Writer, live bool) *console {
	con := newConsole(w)
	con.dim, con.hideReasoning = live, c.Bool("hide-reasoning")
	con.clean = isTerminal(w) && !c.Bool("raw")
	return con
}

func (c *console) hooks() agent.Hooks {
	return agent.Hooks{
		OnText:      c.onText,
		OnReasoning: c.onReasoning,
		OnCall:      c.onCall,
		OnResult:    c.onResult,
		OnNotice:    c.onNotice,
	}
}

func (c *console) onText(s string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if s == "" {
		return
	}
	c.doneThinking()
	if c.clean {
		s = c.textCtl.filter(s)
	}
	if s = c.trimmed(s); s == "" {
		return
	}
	c.text = true
	c.write(s)
}

// trimmed is s without the newlines trimNL drops.
func (c *console) trimmed(s string) string {
	if c.trimNL {
		if s = strings.TrimLeft(s, "\r\n"); s != "" {
			c.trimNL = false
		}
	}
	return s
}

func (c *console) write(s string) {
	io.WriteString(c.w, s)
	c.bol = strings.HasSuffix(s, "\n")
}

const (
	faint  = "\x1b[2m"
	normal = "\x1b[0m"
)

func (c *console) onReasoning(s string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if s == "" {
		return
	}
	if c.hideReasoning {
		// What follows the hidden block starts at the top.
		c.trimNL = c.bol
		return
	}
	if !c.thinking {
		if !c.bol {
			c.write("\n")
		}
		c.thinking, c.trimNL = true, true
		c.styled("Thinking...\n")
	}
	if c.clean {
		s = c.reasoningCtl.filter(s)
	}
	if s = c.trimmed(s); s != "" {
		c.styled(s)
	}
}

// styled writes s faint where the console dims reasoning.
func (c *console) styled(s string) {
	if c.dim {
		io.WriteString(c.w, faint+s+normal)
		c.bol = strings.HasSuffix(s, "\n")
		return
	}
	c.write(s)
}

// doneThinking closes the reasoning shown, before anything else is.
func (c *console) doneThinking() {
	if !c.thinking {
		return
	}
	c.thinking, c.trimNL = false, true
	if !c.bol {
		c.write("\n")
	}
	c.styled("...done thinking.\n\n")
}

func (c *console) line(s string) {
	c.doneThinking()
	if !c.bol {
		io.WriteString(c.w, "\n")
	}
	io.WriteString(c.w, s+"\n")
	c.bol = true
}

func (c *console) onCall(call chat.ToolCall) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls = append(c.calls, &shownCall{call: call})
	c.showCalls()
}

func (c *console) onResult(o agent.Outcome) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, sc := range c.calls {
		if sc.result == nil && sameCall(sc.call, o.Call) {
			sc.result = &o
			c.showCalls()
			return
		}
	}
	// A result of no call shown (a call the parser could not read).
	c.line("  ⎿ " + resultLine(o))
}

// sameCall matches a result to its call: by id, else by what was called.
func sameCall(a, b chat.ToolCall) bool {
	if a.ID != "" || b.ID != "" {
		return a.ID == b.ID
	}
	return a.Name == b.Name && string(a.Arguments) == string(b.Arguments)
}

// showCalls shows the calls in order, each with its result as soon as
// the calls before it have theirs.
func (c *console) showCalls() {
	for len(c.calls) > 0 {
		sc := c.calls[0]
		if !sc.shown {
			c.line("● " + callLine(sc.call))
			sc.shown = true
		}
		if sc.result == nil {
			return
		}
		c.line("  ⎿ " + resultLine(*sc.result))
		c.calls = c.calls[1:]
	}
}

func (c *console) onNotice(msg string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.clean {
		// A notice may quote the model.
		msg = withoutControls(msg)
	}
	c.line("toolharness: " + msg)
}

// endExchange finishes the streamed output of one exchange.
func (c *console) endExchange() {
	c.mu.Lock()
	defer c.mu.Unlock()
	// Calls that got no result (the exchange was interrupted) are shown.
	for _, sc := range c.calls {
		if !sc.shown {
			c.line("● " + callLine(sc.call))
		}
	}
	c.calls = nil
	if rest := c.textCtl.flush() + c.reasoningCtl.flush(); rest != "" && c.clean {
		c.write(rest)
	}
	c.doneThinking()
	if !c.bol {
		io.WriteString(c.w, "\n")
		c.bol = true
	}
	c.text, c.trimNL = false, false
}

// callLine writes a call as name(key=value, …) with JSON values, in the
// order the model wrote them, cut to one screen line.
func callLine(call chat.ToolCall) string {
	var b strings.Builder
	b.WriteString(call.Name + "(")
	v, err := chat.DecodeOrdered(call.Arguments)
	if o, ok := v.(*chat.Object); err == nil && ok {
		for i, m := range o.Members {
			if i > 0 {
				b.WriteString(", ")
			}
			val, _ := chat.EncodeOrdered(m.Value)
			b.WriteString(m.Key + "=" + string(val))
		}
	} else if len(call.Arguments) > 0 {
		b.WriteString(string(call.Arguments))
	}
	b.WriteString(")")
	return cut(withoutControls(b.String()), 120)
}

// resultLine summarises a result: its first line and how many more.
func resultLine(o agent.Outcome) string {
	content := strings.TrimSpace(withoutControls(o.Result.Content))
	lines := strings.Count(content, "\n") + 1
	first, _, _ := strings.Cut(content, "\n")
	prefix := ""
	switch {
	case o.Mistake != "":
		prefix = "✗ refused (" + o.Mistake + "): "
	case o.Result.IsError:
		prefix = "✗ "
	}
	if content == "" {
		return prefix + "(empty)"
	}
	s := prefix + cut(first, 100)
	if lines > 1 {
		s += fmt.Sprintf(" … (%d lines)", lines)
	}
	return s
}

func cut(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

package main

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/toolharness/toolharness/agent"
	"github.com/toolharness/toolharness/chat"
)

// console shows a session live: the model's text as it streams, each call
// as "● name(args)" and its result as a one-line summary.
type console struct {
	mu   sync.Mutex
	w    io.Writer // where text, calls and notices go
	bol  bool      // at the beginning of a line
	text bool      // the current exchange streamed any text
}

func newConsole(w io.Writer) *console { return &console{w: w, bol: true} }

func (c *console) hooks() agent.Hooks {
	return agent.Hooks{
		OnText:   c.onText,
		OnCall:   c.onCall,
		OnResult: c.onResult,
		OnNotice: c.onNotice,
	}
}

func (c *console) onText(s string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if s == "" {
		return
	}
	c.text = true
	io.WriteString(c.w, s)
	c.bol = strings.HasSuffix(s, "\n")
}

func (c *console) line(s string) {
	if !c.bol {
		io.WriteString(c.w, "\n")
	}
	io.WriteString(c.w, s+"\n")
	c.bol = true
}

func (c *console) onCall(call chat.ToolCall) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.line("● " + callLine(call))
}

func (c *console) onResult(o agent.Outcome) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.line("  ⎿ " + resultLine(o))
}

func (c *console) onNotice(msg string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.line("toolharness: " + msg)
}

// endExchange finishes the streamed output of one exchange.
func (c *console) endExchange() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.bol {
		io.WriteString(c.w, "\n")
		c.bol = true
	}
	c.text = false
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
	return cut(b.String(), 120)
}

// resultLine summarises a result: its first line and how many more.
func resultLine(o agent.Outcome) string {
	content := strings.TrimSpace(o.Result.Content)
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

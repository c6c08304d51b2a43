package agent

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/toolharness/toolharness/backend"
	"github.com/toolharness/toolharness/chat"
	"github.com/toolharness/toolharness/parse"
)

// Step is one generation of the loop, as the trace records it. Content is
// all text outside calls, whatever its part (the history keeps it, and Raw,
// as written); Answer is its content parts alone, what a front end shows
// (Answer of the events), and Reasoning its reasoning parts.
type Step struct {
	Exchange    int               `json:"exchange"`
	Step        int               `json:"step"`
	Turn        int               `json:"turn"`
	Time        time.Time         `json:"time"`
	Mode        backend.Mode      `json:"mode"`
	Format      string            `json:"format"`
	Constrained bool              `json:"constrained,omitempty"`
	PromptHash  string            `json:"prompt_sha256"`
	PromptLen   int               `json:"prompt_bytes"`
	Raw         string            `json:"raw"`
	Content     string            `json:"content"`
	Answer      string            `json:"answer,omitempty"`
	Reasoning   string            `json:"reasoning,omitempty"`
	Events      []Event           `json:"events,omitempty"`
	Calls       []chat.ToolCall   `json:"-"`
	Results     []chat.ToolResult `json:"-"`
	Ran         []string          `json:"ran,omitempty"` // IDs of calls whose handler ran
	Mistakes    []Mistake         `json:"mistakes,omitempty"`
	Attempts    int               `json:"attempts"` // 1 + retries after faults with nothing consumed
	Fault       string            `json:"fault,omitempty"`
	StopReason  string            `json:"stop_reason,omitempty"`
	Usage       backend.Usage     `json:"-"`
	Duration    time.Duration     `json:"-"`
	Divergence  *Divergence       `json:"divergence,omitempty"`
	// Shrunk is set when the server counted fewer prompt tokens than for
	// the previous generation although the prompt only grew: the server
	// cut the prompt (a context window too small) and its KV cache cannot
	// cover the transcript.
	Shrunk *Shrink `json:"prompt_shrunk,omitempty"`
	// Notes are what the backend changed in the request (a BOS stripped,
	// …), and StopSequence the stop sequence that ended generation where
	// the server says which.
	Notes        []string `json:"notes,omitempty"`
	StopSequence string   `json:"stop_sequence,omitempty"`
	// Reuse is the prompt prefix the server took from its cache, where it
	// says (token-exact history keeps it at the whole previous request).
	Reuse *Reuse `json:"reuse,omitempty"`
}

// Shrink is a prompt the server counted shorter than the previous one.
type Shrink struct {
	Previous int `json:"previous_tokens"`
	Now      int `json:"tokens"`
}

// Mistake is a model mistake that costs a retry.
type Mistake struct {
	Kind    string `json:"kind"`
	Message string `json:"message"`
	CallID  string `json:"call_id,omitempty"`
}

// promptKey is the text whose growth the prefix check follows: the raw
// prompt, or in chat mode a flat rendering of the message list (each
// message is role, NUL, content, RS), so the same check applies.
func promptKey(prompt string, msgs []chat.Message) string {
	if msgs == nil {
		return prompt
	}
	var b strings.Builder
	for _, m := range msgs {
		b.WriteString(string(m.Role))
		b.WriteByte(0)
		b.WriteString(m.Content)
		b.WriteByte(0x1e)
	}
	return b.String()
}

// chatKeyPrefix is what promptKey of the next request must start with
// after the model answered raw in chat mode.
func chatKeyAfter(key, raw string) string {
	return key + string(chat.RoleAssistant) + "\x00" + raw
}

func (s *Session) render(mustCall bool) (req backend.Request, key string, parser StreamParser, err error) {
	r := s.cfg.Renderer
	req = backend.Request{Model: s.cfg.Model, Mode: s.cfg.Mode, Stop: r.Stop(), Options: s.cfg.Options, ReturnTokens: s.tokenHistory}
	if s.cfg.Constrained {
		if req.Format, err = CallSchema(s.sys.Tools, SchemaOptions{AllowAnswer: !mustCall, MaxString: s.cfg.ConstrainMaxString}); err != nil {
			return req, "", nil, err
		}
		parser = &constrainedParser{}
	} else if parser, err = r.NewParser(s.allTools()); err != nil {
		return req, "", nil, fmt.Errorf("agent: parser: %w", err)
	}
	if s.cfg.Mode == backend.ModeChat {
		if req.Messages, err = s.tr.Messages(s.hist); err != nil {
			return req, "", nil, err // the transcript's errors say "agent: …" already
		}
		return req, promptKey("", req.Messages), parser, nil
	}
	if req.Prompt, err = s.tr.Prompt(s.hist); err != nil {
		return req, "", nil, err
	}
	if s.tokenHistory {
		req.TokenSpans = s.spansFor(req.Prompt)
	}
	return req, req.Prompt, parser, nil
}

// allTools are the tools the parser decodes values by: the core catalog.
// Calls to other names are not lost: the registry decides on them
// (deferred tools are valid calls).
func (s *Session) allTools() []chat.Tool { return s.sys.Tools }

// running collects the outcomes of calls started while the model streams.
type running struct {
	wg       sync.WaitGroup
	mu       sync.Mutex
	outcomes []*Outcome
}

func (s *Session) generate(ctx context.Context, turn int, mustCall bool) (Step, error) {
	s.step++
	st := Step{Exchange: s.exchange, Step: s.step, Turn: turn, Time: s.now(), Mode: s.cfg.Mode,
		Format: s.cfg.Renderer.Format(), Constrained: s.cfg.Constrained}
	if s.cfg.Constrained {
		st.Format = "constrained-json"
	}
	req, key, parser, err := s.render(mustCall)
	if err != nil {
		st.Fault = err.Error()
		s.writeStep(&st)
		return st, err
	}
	sum := sha256.Sum256([]byte(key))
	st.PromptHash, st.PromptLen = hex.EncodeToString(sum[:]), len(key)
	if s.prevPrompt != "" {
		if d := s.cfg.Renderer.Diverge(s.prevPrompt, key); d != nil {
			st.Divergence = d
			s.notice("prompt prefix diverged at byte %d (want %q, got %q): the server cannot reuse its cache past it", d.Offset, d.Want, d.Got)
		}
	}

	hooks := &lockedHooks{h: s.cfg.Hooks}
	run := &running{}
	var raw strings.Builder
	var content strings.Builder
	handle := func(evs []Event) {
		for _, ev := range evs {
			st.Events = append(st.Events, ev)
			switch ev.Kind {
			case EventText:
				content.WriteString(ev.Text)
				switch ev.Part {
				case parse.PartContent:
					hooks.text(ev.Text)
				case parse.PartReasoning:
					hooks.reasoning(ev.Text)
				}
			case EventCallStart:
				if ev.Call != nil {
					hooks.callStart(ev.Call.Name)
				}
			case EventCall:
				if ev.Call == nil {
					continue
				}
				call := *ev.Call
				call.ID = s.nextID(call.ID)
				st.Calls = append(st.Calls, call)
				hooks.call(call)
				o := &Outcome{Call: call}
				run.outcomes = append(run.outcomes, o)
				// A name the parser's catalog lacks may still be a deferred
				// tool: the registry decides (and suggests names if not).
				if ev.Err != nil && ev.Err.Kind != "unknown_tool" {
					// Recognised but malformed: the parse error is the result.
					o.Mistake = ev.Err.Kind
					o.Result = s.cfg.Renderer.ErrorResult(call, ev.Err.Message)
					hooks.result(*o)
					continue
				}
				// Run the call now, while the model may still be writing.
				run.wg.Add(1)
				go func() {
					defer run.wg.Done()
					out := s.tools.Execute(ctx, call)
					run.mu.Lock()
					*o = out
					run.mu.Unlock()
					hooks.result(out)
				}()
			case EventError:
				if ev.Err != nil {
					st.Mistakes = append(st.Mistakes, Mistake{Kind: ev.Err.Kind, Message: fmt.Sprintf("%s at byte %d: %s", ev.Err.Kind, ev.Err.Offset, ev.Err.Message)})
				}
			}
		}
	}

	start := time.Now()
	var resp backend.Response
	for attempt := 1; ; attempt++ {
		st.Attempts = attempt
		resp, err = s.cfg.Backend.Generate(ctx, req, func(chunk string) error {
			raw.WriteString(chunk)
			handle(parser.Feed(chunk))
			return nil
		})
		if err == nil || raw.Len() > 0 || !backend.Retryable(err) || attempt > s.cfg.FaultRetries {
			break
		}
		// Nothing arrived, so nothing ran: safe to ask again.
		s.notice("generation failed before any output (%v); retrying (%d/%d)", err, attempt, s.cfg.FaultRetries)
		select {
		case <-ctx.Done():
		case <-time.After(time.Duration(attempt*attempt) * 250 * time.Millisecond):
		}
		if ctx.Err() != nil {
			err = fmt.Errorf("agent: %w", ctx.Err())
			break
		}
	}
	if raw.Len() == 0 && resp.Text != "" && err == nil {
		raw.WriteString(resp.Text)
		handle(parser.Feed(resp.Text))
	}
	handle(parser.Close())
	run.wg.Wait()
	st.Duration = time.Since(start)
	st.Usage, st.StopReason = resp.Usage, resp.StopReason
	st.Notes, st.StopSequence = resp.Notes, resp.StopSequence
	for _, n := range resp.Notes {
		// Said once per session; the trace has them on every step.
		if !s.notesSeen[n] {
			s.notesSeen[n] = true
			s.notice("%s", n)
		}
	}
	st.Reuse = reuseOf(resp.Usage, s.prevSlot, req.TokenSpans)
	s.prevSlot = resp.Usage.SlotTokens
	if n := resp.Usage.PromptTokens; n > 0 {
		if s.prevTokens > 0 && n < s.prevTokens {
			st.Shrunk = &Shrink{Previous: s.prevTokens, Now: n}
			s.notice("the server counted %d prompt tokens, fewer than the %d of the previous request although the prompt grew: it truncated the prompt (raise the context window, e.g. --num-ctx or OLLAMA_CONTEXT_LENGTH)", n, s.prevTokens)
		}
		s.prevTokens = n
	}
	st.Raw, st.Content = raw.String(), content.String()
	st.Answer, st.Reasoning = Answer(st.Events), Reasoning(st.Events)

	// The transcript grows by exactly what the model wrote, and by the
	// ids it wrote it in when the backend gave them for exactly that text.
	var ids []int
	if err == nil && resp.Tokens != nil && resp.Text == st.Raw {
		ids = resp.Tokens
		s.keepIDs(len(key), st.Raw, ids)
	}
	s.hist = append(s.hist, Msg{Message: chat.Message{Role: chat.RoleAssistant, Content: st.Content, ToolCalls: st.Calls, Raw: st.Raw}, Tokens: ids})
	if s.cfg.Mode == backend.ModeChat {
		s.prevPrompt = chatKeyAfter(key, st.Raw)
	} else {
		s.prevPrompt = key + st.Raw
	}
	for _, o := range run.outcomes {
		st.Results = append(st.Results, o.Result)
		s.hist = append(s.hist, Msg{Message: o.Result.Message()})
		if o.Ran {
			st.Ran = append(st.Ran, o.Call.ID)
		}
		if o.Mistake != "" {
			st.Mistakes = append(st.Mistakes, Mistake{Kind: o.Mistake, Message: firstLine(o.Result.Content), CallID: o.Call.ID})
		}
	}
	if msg := looseErrors(st.Mistakes); msg != "" && err == nil {
		s.hist = append(s.hist, Msg{Message: chat.Message{Role: chat.RoleUser, Content: msg}})
	}
	if err != nil {
		st.Fault = err.Error()
		s.writeStep(&st)
		var be *backend.Error
		if errors.As(err, &be) && be.Consumed {
			return st, fmt.Errorf("agent: generation %d failed after output began (%d bytes kept, %d call(s) ran, not retried): %w", st.Step, raw.Len(), len(st.Ran), err)
		}
		return st, fmt.Errorf("agent: generation %d: %w", st.Step, err)
	}
	s.writeStep(&st)
	return st, nil
}

// looseErrors is the user message that reports parse errors not attached
// to any call ("" when there are none).
func looseErrors(ms []Mistake) string {
	var lines []string
	for _, m := range ms {
		if m.CallID == "" && m.Kind != "no_call" {
			lines = append(lines, "- "+m.Message)
		}
	}
	if len(lines) == 0 {
		return ""
	}
	return "Your last reply contained a tool call that could not be read:\n" + strings.Join(lines, "\n") +
		"\nWrite the call again, exactly as the tool instructions say."
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return l
}

// writeStep writes a step to the trace.
func (s *Session) writeStep(st *Step) {
	if s.trace == nil {
		return
	}
	_ = s.trace.write(traceStep{Type: "step", Agent: s.agentName(), Step: st, Calls: traceCalls(st.Calls),
		Results: traceResults(st.Results), Usage: usageJSON(st.Usage), DurationMS: ms(st.Duration)})
}

func (s *Session) agentName() string {
	if s.depth > 0 {
		return fmt.Sprintf("sub%d", s.depth)
	}
	return "main"
}

type traceStep struct {
	Type  string `json:"type"`
	Agent string `json:"agent"`
	*Step
	Calls      []TraceCall   `json:"calls,omitempty"`
	Results    []TraceResult `json:"results,omitempty"`
	Usage      traceUsage    `json:"usage"`
	DurationMS float64       `json:"duration_ms"`
}

type traceUsage struct {
	PromptTokens    int     `json:"prompt_tokens"`
	GeneratedTokens int     `json:"generated_tokens"`
	CachedTokens    *int    `json:"cached_tokens,omitempty"`
	NewTokens       *int    `json:"new_prompt_tokens,omitempty"`
	SlotTokens      int     `json:"slot_tokens,omitempty"`
	TTFTMS          float64 `json:"ttft_ms"`
	PromptMS        float64 `json:"prompt_ms"`
	GenerateMS      float64 `json:"generate_ms"`
	TotalMS         float64 `json:"total_ms"`
}

func usageJSON(u backend.Usage) traceUsage {
	t := traceUsage{PromptTokens: u.PromptTokens, GeneratedTokens: u.GeneratedTokens,
		TTFTMS: ms(u.TimeToFirstChunk), PromptMS: ms(u.PromptDuration), GenerateMS: ms(u.GenerateDuration), TotalMS: ms(u.Total)}
	t.SlotTokens = u.SlotTokens
	if u.CachedKnown {
		c, n := u.CachedTokens, u.PromptTokens-u.CachedTokens
		t.CachedTokens, t.NewTokens = &c, &n
	}
	return t
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// traceWriter serialises JSON lines from a session and its sub-agents.
type traceWriter struct {
	mu sync.Mutex
	w  interface{ Write([]byte) (int, error) }
}

func (t *traceWriter) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.w.Write(p)
}

func (t *traceWriter) write(v any) error {
	data, err := chat.Marshal(v)
	if err != nil {
		return fmt.Errorf("agent: trace: %w", err)
	}
	_, err = t.Write(append(data, '\n'))
	return err
}

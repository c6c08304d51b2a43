package agent

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
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

	// Prompt is the whole prompt (the raw text, or the chat messages as
	// JSON) with Config.TracePrompts.
	Prompt string `json:"prompt,omitempty"`
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
	if s.cfg.Mode == backend.ModeServer {
		// The server renders the tools and knows its template's end of
		// turn: the renderer's stop sequences belong to the harness's
		// rendering, and one could cut a call before the server parses it.
		req.Stop, req.Tools = nil, s.sys.Tools
		if req.Messages, err = ServerMessages(s.sys, s.hist); err != nil {
			return req, "", nil, err
		}
		return req, promptKey("", req.Messages), textParser{}, nil
	}
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
	st := s.newStep(turn)
	req, key, parser, err := s.render(mustCall)
	if err != nil {
		st.Fault = err.Error()
		s.writeStep(&st)
		return st, err
	}
	s.notePrompt(&st, key)

	g := &generation{s: s, ctx: ctx, st: &st, parser: parser, hooks: &lockedHooks{h: s.cfg.Hooks}}
	start := time.Now()
	resp, err := g.stream(req)
	st.Duration = time.Since(start)
	s.noteResponse(&st, resp, req.TokenSpans)
	if resp.StopReason == cutByLimit {
		// A parse error of a cut reply is the limit's doing: say so to
		// the model and the user, or "unexpected end of JSON input" is
		// all either sees.
		for i := range st.Mistakes {
			st.Mistakes[i].Message += s.cutNote()
		}
	}
	st.Raw, st.Content = g.raw.String(), g.content.String()
	st.Answer, st.Reasoning = Answer(st.Events), Reasoning(st.Events)

	s.addReply(&st, key, resp, err)
	s.addResults(&st, g.run.outcomes)
	if msg := looseErrors(st.Mistakes); msg != "" && err == nil {
		s.hist = append(s.hist, Msg{Message: chat.Message{Role: chat.RoleUser, Content: msg}})
	}
	err = s.endStep(&st, err)
	return st, err
}

// newStep numbers the next step. The renderer's format is asked even when
// constrained decoding overrides it, as it always was.
func (s *Session) newStep(turn int) Step {
	s.step++
	st := Step{Exchange: s.exchange, Step: s.step, Turn: turn, Time: s.now(), Mode: s.cfg.Mode,
		Format: s.cfg.Renderer.Format(), Constrained: s.cfg.Constrained}
	if s.cfg.Constrained {
		st.Format = "constrained-json"
	}
	return st
}

// notePrompt records the prompt's identity and warns when it no longer
// extends the previous one, since the server's cache ends where it differs.
// A prompt that extends the previous one is compared and hashed only where
// it is new: the previous prompt is a prefix of it (the transcript appends
// to the same bytes, so the comparison finds them identical at once) and
// the hash state carries over.
func (s *Session) notePrompt(st *Step, key string) {
	st.PromptLen = len(key)
	if s.cfg.TracePrompts {
		st.Prompt = key
	}
	extends := false
	if s.prevKey != "" || s.prevRaw != "" {
		extends = strings.HasPrefix(key, s.prevKey) && strings.HasPrefix(key[len(s.prevKey):], s.prevRaw)
		if !extends {
			if d := s.cfg.Renderer.Diverge(s.prevKey+s.prevRaw, key); d != nil {
				st.Divergence = d
				s.notice("prompt prefix diverged at byte %d (want %q, got %q): the server cannot reuse its cache past it", d.Offset, d.Want, d.Got)
			}
		}
	}
	if !extends || s.keyHash == nil {
		s.keyHash, s.prevKey = sha256.New(), ""
	}
	io.WriteString(s.keyHash, key[len(s.prevKey):])
	st.PromptHash = hex.EncodeToString(s.keyHash.Sum(nil))
	s.prevKey, s.prevRaw = key, ""
}

// generation is one model reply as it streams: the parser's events become
// the step's events, hook calls and tool runs as they arrive.
type generation struct {
	s       *Session
	ctx     context.Context
	st      *Step
	parser  StreamParser
	hooks   *lockedHooks
	run     running
	raw     strings.Builder
	content strings.Builder
}

// stream generates the reply and returns once the parser is closed and
// every call it started has finished, so the outcomes are complete.
func (g *generation) stream(req backend.Request) (backend.Response, error) {
	resp, err := g.request(req)
	// A backend that does not stream gives the whole text at the end.
	if g.raw.Len() == 0 && resp.Text != "" && err == nil {
		g.feed(resp.Text)
	}
	g.handle(g.parser.Close())
	if err == nil {
		// Server mode: the calls the server's parser found (none in the
		// other modes), validated and run like parsed ones.
		g.handle(serverCallEvents(resp.ToolCalls))
	}
	g.run.wg.Wait()
	return resp, err
}

// request asks the backend for the reply, again after a retryable fault
// only while nothing has arrived: then nothing has run either.
func (g *generation) request(req backend.Request) (resp backend.Response, err error) {
	s := g.s
	for attempt := 1; ; attempt++ {
		g.st.Attempts = attempt
		resp, err = s.cfg.Backend.Generate(g.ctx, req, g.chunk)
		if err == nil || g.raw.Len() > 0 || !backend.Retryable(err) || attempt > s.cfg.FaultRetries {
			return resp, err
		}
		s.notice("generation failed before any output (%v); retrying (%d/%d)", err, attempt, s.cfg.FaultRetries)
		select {
		case <-g.ctx.Done():
		case <-time.After(time.Duration(attempt*attempt) * 250 * time.Millisecond):
		}
		if g.ctx.Err() != nil {
			return resp, fmt.Errorf("agent: %w", g.ctx.Err())
		}
	}
}

// chunk is the backend's stream callback; handling a chunk cannot fail.
func (g *generation) chunk(text string) error {
	g.feed(text)
	return nil
}

func (g *generation) feed(text string) {
	g.raw.WriteString(text)
	g.handle(g.parser.Feed(text))
}

func (g *generation) handle(evs []Event) {
	for _, ev := range evs {
		g.st.Events = append(g.st.Events, ev)
		switch ev.Kind {
		case EventText:
			g.text(ev.Text, ev.Part)
		case EventCallStart:
			if ev.Call != nil {
				g.hooks.callStart(ev.Call.Name)
			}
		case EventCall:
			if ev.Call != nil {
				g.call(*ev.Call, ev.Err)
			}
		case EventError:
			if ev.Err != nil {
				msg := fmt.Sprintf("%s at byte %d: %s", ev.Err.Kind, ev.Err.Offset, ev.Err.Message)
				if ev.Err.Kind == string(parse.KindMissingName) {
					msg += g.s.callPattern()
				}
				g.st.Mistakes = append(g.st.Mistakes, Mistake{Kind: ev.Err.Kind, Message: msg})
			}
		}
	}
}

// callPattern is a call written in the session's own syntax with NAME for
// the tool's name, for an error about a call whose name could not be read:
// a syntax derived from a template is best shown, not described.
func (s *Session) callPattern() string {
	ex, err := s.cfg.Renderer.FormatCall(chat.ToolCall{Name: "NAME", Arguments: json.RawMessage(`{}`)})
	if err != nil || strings.TrimSpace(ex) == "" {
		return ""
	}
	return "; write each call like this, with the tool's name for NAME:\n" + strings.TrimSpace(ex)
}

// text keeps every part in the content the history replays, but hooks see
// only the answer and the reasoning, not framing markup.
func (g *generation) text(text string, part parse.Part) {
	if part == parse.PartOverrun {
		// An invented next turn: not this turn's content (Raw keeps it).
		return
	}
	g.content.WriteString(text)
	switch part {
	case parse.PartContent:
		g.hooks.text(text)
	case parse.PartReasoning:
		g.hooks.reasoning(text)
	}
}

// call gives the call its id and an outcome, and starts it at once, while
// the model may still be writing, unless its parse error is the result.
func (g *generation) call(call chat.ToolCall, perr *ParseError) {
	call.ID = g.s.nextID(call.ID)
	g.st.Calls = append(g.st.Calls, call)
	g.hooks.call(call)
	o := &Outcome{Call: call}
	g.run.outcomes = append(g.run.outcomes, o)
	// A name the parser's catalog lacks may still be a deferred tool: the
	// registry decides (and suggests names if not).
	if perr != nil && perr.Kind != "unknown_tool" {
		// Recognised but malformed: the parse error is the result.
		o.Mistake = perr.Kind
		o.Result = g.s.cfg.Renderer.ErrorResult(call, perr.Message)
		g.hooks.result(*o)
		return
	}
	g.run.wg.Add(1)
	go g.execute(call, o)
}

func (g *generation) execute(call chat.ToolCall, o *Outcome) {
	defer g.run.wg.Done()
	out := g.s.tools.Execute(g.ctx, call)
	g.run.mu.Lock()
	*o = out
	g.run.mu.Unlock()
	g.hooks.result(out)
}

// noteResponse records what the server said about the generation, and
// tells the user what needs acting on: its notes, once per session, and a
// prompt it cut.
func (s *Session) noteResponse(st *Step, resp backend.Response, spans []backend.TokenSpan) {
	st.Usage, st.StopReason = resp.Usage, resp.StopReason
	st.Notes, st.StopSequence = resp.Notes, resp.StopSequence
	for _, n := range resp.Notes {
		// Said once per session; the trace has them on every step.
		if !s.notesSeen[n] {
			s.notesSeen[n] = true
			s.notice("%s", n)
		}
	}
	st.Reuse = reuseOf(resp.Usage, s.prevSlot, spans)
	s.prevSlot = resp.Usage.SlotTokens
	if n := resp.Usage.PromptTokens; n > 0 {
		if s.prevTokens > 0 && n < s.prevTokens {
			st.Shrunk = &Shrink{Previous: s.prevTokens, Now: n}
			s.notice("the server counted %d prompt tokens, fewer than the %d of the previous request although the prompt grew: it truncated the prompt (raise the context window, e.g. --num-ctx or OLLAMA_CONTEXT_LENGTH)", n, s.prevTokens)
		}
		s.prevTokens = n
	}
}

// addReply appends the reply to the history. The transcript grows by
// exactly what the model wrote, and by the ids it wrote it in when the
// backend gave them for exactly that text.
func (s *Session) addReply(st *Step, key string, resp backend.Response, err error) {
	var ids []int
	if err == nil && resp.Tokens != nil && resp.Text == st.Raw {
		ids = resp.Tokens
		s.idSpans = appendIDSpan(s.idSpans, len(key), st.Raw, resp.TokenText, ids)
	}
	s.hist = append(s.hist, Msg{Message: chat.Message{Role: chat.RoleAssistant, Content: st.Content, ToolCalls: st.Calls, Raw: st.Raw}, Tokens: ids})
	if s.cfg.Mode == backend.ModeChat || s.cfg.Mode == backend.ModeServer {
		s.prevKey, s.prevRaw = key, chatKeyAfter("", st.Raw)
	} else {
		s.prevKey, s.prevRaw = key, st.Raw
	}
}

// addResults appends each call's result to the history, in the order the
// calls were written, whatever order they finished in.
func (s *Session) addResults(st *Step, outcomes []*Outcome) {
	for _, o := range outcomes {
		st.Results = append(st.Results, o.Result)
		s.hist = append(s.hist, Msg{Message: o.Result.Message()})
		if o.Ran {
			st.Ran = append(st.Ran, o.Call.ID)
		}
		if o.Mistake != "" {
			st.Mistakes = append(st.Mistakes, Mistake{Kind: o.Mistake, Message: firstLine(o.Result.Content), CallID: o.Call.ID})
		}
	}
}

// endStep writes the step to the trace, and says whether output had begun
// when the generation failed, since then it was not retried.
func (s *Session) endStep(st *Step, err error) error {
	if err == nil {
		s.writeStep(st)
		return nil
	}
	st.Fault = err.Error()
	s.writeStep(st)
	var be *backend.Error
	if errors.As(err, &be) && be.Consumed {
		return fmt.Errorf("agent: generation %d failed after output began (%d bytes kept, %d call(s) ran, not retried): %w", st.Step, len(st.Raw), len(st.Ran), err)
	}
	return fmt.Errorf("agent: generation %d: %w", st.Step, err)
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
	s.trace.write(traceStep{Type: "step", Agent: s.agentName(), Step: st, Calls: traceCalls(st.Calls),
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
	// err is the first write that failed: the trace is incomplete from
	// there on, and every Send says so (see Session.traceFailure).
	err error
}

// ErrTrace is returned (wrapped, beside any other error of the exchange)
// by Send when a trace record could not be written: the trace, where
// usage and cache reuse are reported, is incomplete.
var ErrTrace = errors.New("agent: trace incomplete")

func (t *traceWriter) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.w.Write(p)
}

// write writes one record; a failure is kept (the first one) for
// Session.traceFailure.
func (t *traceWriter) write(v any) {
	data, err := chat.Marshal(v)
	if err == nil {
		_, err = t.Write(append(data, '\n'))
	}
	if err != nil {
		t.mu.Lock()
		if t.err == nil {
			t.err = fmt.Errorf("%w: %w", ErrTrace, err)
		}
		t.mu.Unlock()
	}
}

// failure is the first failed write, nil when every write succeeded.
func (t *traceWriter) failure() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.err
}

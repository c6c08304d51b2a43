package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/toolharness/toolharness/backend"
	"github.com/toolharness/toolharness/chat"
	"github.com/toolharness/toolharness/registry"
)

// Case is one benchmark case: a conversation, its tools and how to ask.
type Case struct {
	Model    string
	Messages []chat.Message // a leading system message becomes the system text
	Tools    []chat.Tool
	Template string // family name (required unless Renderer is set)
	Format   string // tool-call format ("" = the family's native one)
	Mode     backend.Mode
	// Constrained sends the call schema. It has an answer alternative,
	// so restraint cases stay possible, unless RequireCall is set.
	Constrained bool
	// RequireCall, with Constrained, leaves the answer alternative out of
	// the schema: every attempt must be a call. Set it for cases that
	// expect calls; a model that may answer under the constraint mostly
	// answers (a random one always takes the shorter way out), so without
	// it a constrained run never measures a call. It has no effect
	// unconstrained (prose cannot be forbidden by the prompt alone).
	RequireCall bool
	// ConstrainMaxString bounds unbounded strings under the constraint
	// (see SchemaOptions.MaxString).
	ConstrainMaxString int
	// ConstrainTo, with Constrained, names the one tool the schema allows
	// (a caller's tool_choice naming a function); the catalog still lists
	// every tool, so the prompt does not change with the choice.
	ConstrainTo string
	// Strict disables the parser's repairs.
	Strict bool
	// MaxRetries is the number of attempts after the first that may follow
	// an attempt with parse errors or invalid calls.
	MaxRetries int
	Options    backend.Options
	// Renderer overrides Template and Format.
	Renderer Renderer
	// Replay renders raw prompts with ReplayPrompt: as the session that
	// produced the conversation's assistant turns did (serve).
	Replay bool
	// Now is the clock families that print a date print (zero: the
	// renderer's default).
	Now time.Time
	// Stop are stop sequences besides the renderer's (a caller's own).
	Stop []string
	// OnEvent, when set, gets every parse event of every attempt as it
	// streams (attempt counts from 0), for a caller that shows the reply
	// live (serve).
	OnEvent func(attempt int, ev Event)
	// Whole says the caller needs no stream (a benchmark): the reply is
	// asked for whole (no chunk callback unless OnEvent is set). On a
	// backend that takes token ids (llama.cpp) in raw mode, a retry sends
	// each failed attempt back as its generated ids, so the server reuses
	// its cache to the end of it; without Whole a streamed attempt's ids
	// go back too, but only up to a token that ends inside a UTF-8
	// character (a stream sends no id for it), the rest as text. An
	// attempt's TTFT is then the whole generation.
	Whole bool
	// Check, when set, judges each attempt after validation: a problem is
	// a mistake told to the model as a user message and retried like an
	// invalid call (a required call missing); final ends the case with
	// this attempt whatever its errors (the token budget ran out).
	Check func(a Attempt) (problem string, final bool)
	// TokenHistory, on a backend that takes token ids in raw mode, asks
	// every attempt for its generated ids (Attempt.Tokens) and, with
	// Replay, sends the assistant turns of Messages that TurnIDs names
	// as those ids where they lie in the prompt byte for byte: a
	// stateless caller (serve) that remembers them keeps its history
	// token for token, as a session does. Retries send failed attempts
	// as their ids, as Whole does.
	TokenHistory bool
	// TurnIDs are, by index in Messages, the ids assistant turns were
	// generated as (TokenHistory).
	TurnIDs map[int]TurnIDs
}

// TurnIDs are the ids an assistant turn was generated as, standing for
// the first Len bytes of its Raw (all of it when Len is 0), as
// Attempt.Tokens and Attempt.TokenText are.
type TurnIDs struct {
	IDs []int
	Len int
}

// Attempt is one generation of a case.
type Attempt struct {
	Raw         string          `json:"raw"`
	Content     string          `json:"content"`
	Calls       []chat.ToolCall `json:"calls"`
	ParseErrors []ParseError    `json:"parse_errors,omitempty"`
	// Invalid are the calls the registry refused (unknown tool, invalid or
	// malformed arguments), by call ID.
	Invalid []Mistake `json:"invalid,omitempty"`
	// StopReason is the server's: "length" is a reply cut by the token
	// limit.
	StopReason string        `json:"stop_reason,omitempty"`
	Usage      backend.Usage `json:"-"`
	TTFT       time.Duration `json:"-"`
	Duration   time.Duration `json:"-"`
	// Prompt is the raw prompt (raw mode) of the attempt.
	Prompt string `json:"-"`
	// Events are the attempt's parse events; StopSequence is the stop
	// sequence the server said ended it.
	Events       []Event `json:"-"`
	StopSequence string  `json:"-"`
	// Fixed are the calls that parsed, as validation left them (values
	// coerced where the format writes them as text), in order.
	Fixed []chat.ToolCall `json:"-"`
	// Problem is what Case.Check found wrong with the attempt.
	Problem string `json:"-"`
	// Tokens are the generated ids (raw mode on a backend that takes ids,
	// see Case.Whole), exactly covering Raw or its first TokenText bytes.
	Tokens    []int `json:"-"`
	TokenText int   `json:"-"`
}

// OK reports whether the attempt had neither parse errors nor invalid
// calls.
func (a Attempt) OK() bool { return len(a.ParseErrors) == 0 && len(a.Invalid) == 0 && a.Problem == "" }

// CaseResult is every attempt of a case.
type CaseResult struct {
	Attempts []Attempt
	// Retries is len(Attempts)-1.
	Retries int
	// OK is true when the last attempt had no errors.
	OK bool
	// Retried are the messages the retries added after the case's own
	// (each failed attempt, its error results and notes): the last
	// attempt's prompt renders Messages followed by them.
	Retried []Msg
}

// noRun is the handler of benchmark tools: RunCase validates, never runs.
func noRun(context.Context, json.RawMessage) (string, error) {
	return "", errors.New("agent: benchmark tools are not executed")
}

// RunCase runs one case: generate, parse, validate; after an attempt with
// errors, feed the model-facing errors back and try again while the retry
// budget lasts. No tool is executed. A backend failure ends the case with
// the attempts so far and the error.
func RunCase(ctx context.Context, b backend.Backend, c Case) (CaseResult, error) {
	var res CaseResult
	r := c.Renderer
	if r == nil {
		var err error
		if r, err = NewRenderer(RendererOptions{Template: c.Template, Format: c.Format, Strict: c.Strict, Chat: c.Mode == backend.ModeChat || c.Mode == backend.ModeServer}); err != nil {
			return res, err
		}
	}
	reg := registry.New(registry.Options{Coerce: CoercesValues(r.Format()), FormatCall: r.FormatCall})
	for _, t := range c.Tools {
		if err := reg.Register(registry.Spec{Tool: t, Handler: noRun}); err != nil {
			return res, fmt.Errorf("agent: case tools: %w", err)
		}
	}
	sys := System{Tools: c.Tools, Now: c.Now}
	var hist []Msg
	for i, m := range c.Messages {
		if i == 0 && (m.Role == chat.RoleSystem || m.Role == chat.RoleDeveloper) {
			sys.Text = m.Content
			continue
		}
		hist = append(hist, Msg{Message: m})
	}
	mode := c.Mode
	if mode == "" {
		mode = backend.ModeRaw
	}
	if err := checkServerMode(mode, c.Constrained); err != nil {
		return res, err
	}
	tools := RegistryTools(reg)
	// A benchmark's retries send failed attempts as their ids, streamed
	// (ids up to a token that ends inside a UTF-8 character, text after)
	// or whole (every id); a caller that shows the reply live (OnEvent)
	// asks for them only with Whole. A caller that replays its own turns
	// (serve) asks with TokenHistory and hands the turns' ids in TurnIDs.
	ids := &caseIDs{on: (c.TokenHistory || (c.Whole || c.OnEvent == nil) && !c.Replay) && mode == backend.ModeRaw && b.Capabilities().TokenPrompt}
	if ids.on && c.Replay && len(c.TurnIDs) > 0 {
		if err := ids.seed(r, sys, hist, c.TurnIDs, len(c.Messages)-len(hist)); err != nil {
			return res, fmt.Errorf("agent: %w", err)
		}
	}
	for attempt := 0; attempt <= c.MaxRetries; attempt++ {
		a, calls, err := caseAttempt(ctx, b, c, r, mode, sys, hist, attempt, ids)
		if err == nil {
			for i, call := range calls {
				if call.err != nil {
					continue
				}
				fixed, kind, problem := tools.Validate(call.ToolCall)
				calls[i].ToolCall = fixed
				a.Fixed = append(a.Fixed, fixed)
				if kind != "" {
					calls[i].problem, calls[i].kind = problem, kind
					a.Invalid = append(a.Invalid, Mistake{Kind: kind, Message: firstLine(problem), CallID: call.ID})
				}
			}
		}
		final := false
		if err == nil && c.Check != nil {
			a.Problem, final = c.Check(a)
		}
		res.Attempts = append(res.Attempts, a)
		if err != nil {
			res.Retries = len(res.Attempts) - 1
			return res, err
		}
		if a.OK() || final {
			res.OK = a.OK()
			break
		}
		before := len(hist)
		// Feed the errors back and ask again.
		hist = append(hist, Msg{Message: chat.Message{Role: chat.RoleAssistant, Content: a.Content, ToolCalls: a.Calls, Raw: a.Raw}})
		ids.keep(a)
		var loose []Mistake
		for _, call := range calls {
			switch {
			case call.err != nil:
				hist = append(hist, Msg{Message: r.ErrorResult(call.ToolCall, call.err.Message).Message()})
			case call.problem != "":
				hist = append(hist, Msg{Message: chat.ToolResult{CallID: call.ID, Name: call.Name, IsError: true, Content: call.problem}.Message()})
			default:
				hist = append(hist, Msg{Message: chat.ToolResult{CallID: call.ID, Name: call.Name, IsError: true,
					Content: "not run: another call of this turn was invalid; repeat the whole turn with every call corrected"}.Message()})
			}
		}
		for _, pe := range a.ParseErrors {
			if !pe.attached {
				loose = append(loose, Mistake{Kind: pe.Kind, Message: fmt.Sprintf("%s at byte %d: %s", pe.Kind, pe.Offset, pe.Message)})
			}
		}
		if msg := looseErrors(loose); msg != "" {
			hist = append(hist, Msg{Message: chat.Message{Role: chat.RoleUser, Content: msg}})
		}
		if a.Problem != "" && len(a.Invalid) == 0 {
			hist = append(hist, Msg{Message: chat.Message{Role: chat.RoleUser, Content: a.Problem}})
		}
		res.Retried = append(res.Retried, hist[before:]...)
	}
	res.Retries = len(res.Attempts) - 1
	return res, nil
}

// caseRequest is the request and parser of one attempt.
func caseRequest(c Case, r Renderer, mode backend.Mode, sys System, hist []Msg) (backend.Request, StreamParser, error) {
	req := backend.Request{Model: c.Model, Mode: mode, Stop: append(r.Stop(), c.Stop...), Options: c.Options}
	var p StreamParser
	var err error
	switch {
	case mode == backend.ModeServer:
		// The server renders the tools and parses the calls (servermode.go).
		req.Stop, req.Tools, p = c.Stop, c.Tools, textParser{}
		req.Messages, err = ServerMessages(sys, hist)
		return req, p, err
	case c.Constrained:
		if req.Format, err = CallSchema(constrainedTools(c), SchemaOptions{AllowAnswer: !c.RequireCall, MaxString: c.ConstrainMaxString}); err != nil {
			return req, nil, err
		}
		p = &constrainedParser{}
	default:
		if p, err = r.NewParser(c.Tools); err != nil {
			return req, nil, err
		}
	}
	switch {
	case mode == backend.ModeChat:
		req.Messages, err = r.Messages(sys, hist)
	case c.Replay:
		req.Prompt, err = ReplayPrompt(r, sys, hist)
	default:
		req.Prompt, err = r.Prompt(sys, hist)
	}
	if err != nil {
		return req, nil, fmt.Errorf("agent: %w", err) // package render's errors say "render: …"
	}
	return req, p, nil
}

type caseCall struct {
	chat.ToolCall
	err           *ParseError
	kind, problem string
}

func caseAttempt(ctx context.Context, b backend.Backend, c Case, r Renderer, mode backend.Mode, sys System, hist []Msg, attempt int, ids *caseIDs) (Attempt, []caseCall, error) {
	var a Attempt
	req, p, err := caseRequest(c, r, mode, sys, hist)
	if err != nil {
		return a, nil, err
	}
	a.Prompt = req.Prompt
	ids.prepare(&req)
	var raw, content strings.Builder
	var calls []caseCall
	handle := func(evs []Event) {
		for _, ev := range evs {
			a.Events = append(a.Events, ev)
			if c.OnEvent != nil {
				c.OnEvent(attempt, ev)
			}
			switch ev.Kind {
			case EventText:
				content.WriteString(ev.Text)
			case EventCall:
				cc := caseCall{ToolCall: *ev.Call}
				if ev.Err != nil {
					e := *ev.Err
					cc.err = &e
					e.attached = true
					a.ParseErrors = append(a.ParseErrors, e)
				}
				calls = append(calls, cc)
				a.Calls = append(a.Calls, cc.ToolCall)
			case EventError:
				if ev.Err != nil {
					a.ParseErrors = append(a.ParseErrors, *ev.Err)
				}
			}
		}
	}
	start := time.Now()
	onChunk := func(chunk string) error {
		if raw.Len() == 0 {
			a.TTFT = time.Since(start)
		}
		raw.WriteString(chunk)
		handle(p.Feed(chunk))
		return nil
	}
	if c.Whole && c.OnEvent == nil {
		onChunk = nil // a backend that can answers whole (llama.cpp, with every id)
	}
	resp, err := b.Generate(ctx, req, onChunk)
	if raw.Len() == 0 && resp.Text != "" {
		raw.WriteString(resp.Text)
		handle(p.Feed(resp.Text))
	}
	handle(p.Close())
	if err == nil {
		handle(serverCallEvents(resp.ToolCalls)) // server mode's calls
	}
	a.Duration = time.Since(start)
	a.Raw, a.Content, a.Usage, a.StopReason, a.StopSequence = raw.String(), content.String(), resp.Usage, resp.StopReason, resp.StopSequence
	if resp.Text == a.Raw {
		a.Tokens, a.TokenText = resp.Tokens, resp.TokenText
	}
	if a.StopReason == cutByLimit {
		for i := range a.ParseErrors {
			a.ParseErrors[i].Message += cutNote(c.Options.MaxTokens)
		}
	}
	if a.TTFT == 0 {
		a.TTFT = resp.Usage.TimeToFirstChunk
	}
	if err != nil {
		return a, calls, fmt.Errorf("agent: case generation: %w", err)
	}
	return a, calls, nil
}

// constrainedTools are the tools a constrained attempt may call.
func constrainedTools(c Case) []chat.Tool {
	if c.ConstrainTo == "" {
		return c.Tools
	}
	for _, t := range c.Tools {
		if t.Name == c.ConstrainTo {
			return []chat.Tool{t}
		}
	}
	return c.Tools
}

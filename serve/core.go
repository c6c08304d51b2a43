package serve

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/toolharness/toolharness/agent"
	"github.com/toolharness/toolharness/backend"
	"github.com/toolharness/toolharness/chat"
	"github.com/toolharness/toolharness/parse"
	"github.com/toolharness/toolharness/registry"
)

// Model is one model behind the server.
type Model struct {
	// Name is the name clients ask for; Upstream the backend's name for
	// the model (default Name).
	Name     string
	Upstream string
	Backend  backend.Backend
	// Renderer renders the model's prompts in raw mode with its own
	// template (or a named family and format) and parses its output.
	Renderer agent.Renderer
	// Options are the model's fixed options: NumCtx stays the same for
	// the life of the server, so no request makes the backend reload the
	// model; sampling fields are defaults a request may override.
	Options backend.Options
	// Window is the model's context window in tokens (0: unknown); a
	// request whose prompt cannot fit it is refused before generation.
	Window int
	// Retries bounds the generations after an invalid call (default 2;
	// negative: none).
	Retries int
	// ConstrainMaxString bounds unbounded strings when a call is
	// constrained (agent.SchemaOptions.MaxString); 0 leaves them be.
	ConstrainMaxString int
}

func (m *Model) upstream() string {
	if m.Upstream != "" {
		return m.Upstream
	}
	return m.Name
}

// Choice is a request's tool_choice.
type Choice struct {
	Mode ChoiceMode
	// Name is the tool a ChoiceTool request must call.
	Name string
}

// ChoiceMode says whether and which tool the model must call.
type ChoiceMode string

// The tool_choice modes of every API.
const (
	ChoiceAuto     ChoiceMode = "auto"
	ChoiceNone     ChoiceMode = "none"
	ChoiceRequired ChoiceMode = "required" // Anthropic "any"
	ChoiceTool     ChoiceMode = "tool"     // a named function
)

// Request is one decoded request of any API: the whole conversation (a
// leading system message is the system text), the tools and how to
// generate.
type Request struct {
	API      string // openai, anthropic or ollama
	Model    string
	Messages []chat.Message
	// Origins name, for each of Messages, the caller's field it came from
	// (an Anthropic message may become several); nil: messages[i].
	Origins []string
	Tools   []chat.Tool
	Choice  Choice
	// MaxTokens bounds the generated tokens of the reply (0: the model's
	// default).
	MaxTokens   int
	Stop        []string
	Temperature *float64
	TopP        *float64
	TopK        *int
	Seed        *int
	// IDPrefix starts the ids of the calls the reply returns (call_,
	// toolu_).
	IDPrefix string
}

// Finish says why the reply ended.
type Finish string

// The ways a reply ends, in OpenAI's words (the front doors translate).
const (
	FinishStop      Finish = "stop"
	FinishToolCalls Finish = "tool_calls"
	FinishLength    Finish = "length"
)

// Usage are the token figures of one request.
type Usage struct {
	PromptTokens     int
	CompletionTokens int
	// CachedTokens is the prompt prefix the backend reused from its cache
	// (meaningful when CachedKnown).
	CachedTokens int
	CachedKnown  bool
}

// Result is one model turn as the caller gets it.
type Result struct {
	Model string
	// Text is the answer of every generation of the turn, as streamed;
	// Reasoning the reasoning.
	Text      string
	Reasoning string
	// Calls are valid calls with ids the server minted.
	Calls  []chat.ToolCall
	Finish Finish
	// StopSequence is the caller's stop sequence that ended the reply.
	StopSequence string
	Usage        Usage
	Retries      int
	// Invalid says why the model's calls reached no client ("" when none
	// was dropped): the reply is then its text alone.
	Invalid string
	// Replayed counts the assistant turns of the history rendered from
	// the exact text the model wrote (the server's memory).
	Replayed int
}

// Stream receives the reply's text as it becomes certain. Calls come
// with the Result, once validated.
type Stream interface {
	Text(s string)
	Reasoning(s string)
}

// RequestError is a request the server cannot honour: the front doors
// answer 400 in the caller's error shape.
type RequestError struct {
	// Field names the request field, in the caller's API (tools[3],
	// messages[2].tool_call_id).
	Field   string
	Message string
}

func (e *RequestError) Error() string { return "serve: " + e.Field + ": " + e.Message }

func badField(field, format string, args ...any) *RequestError {
	return &RequestError{Field: field, Message: fmt.Sprintf(format, args...)}
}

// Engine runs model turns: the serving core every front door shares.
type Engine struct {
	models  map[string]*Model
	names   []string
	memory  *Memory
	metrics *Metrics
	log     *slog.Logger
	trace   *traceLog
	now     time.Time
}

// EngineConfig configures an Engine.
type EngineConfig struct {
	Models []*Model
	// MemoryTurns bounds the remembered assistant turns (default 4096).
	MemoryTurns int
	Metrics     *Metrics
	Log         *slog.Logger
	// Trace, when set, receives one JSON line per request.
	Trace interface{ Write([]byte) (int, error) }
	// Now is the clock date-printing templates print, fixed for the life
	// of the server so every prompt extends the previous one (default:
	// the time of NewEngine).
	Now time.Time
}

// NewEngine checks the models and returns the engine.
func NewEngine(cfg EngineConfig) (*Engine, error) {
	if len(cfg.Models) == 0 {
		return nil, errors.New("serve: no model to serve")
	}
	e := &Engine{models: map[string]*Model{}, memory: NewMemory(cfg.MemoryTurns), metrics: cfg.Metrics, log: cfg.Log, now: cfg.Now}
	if e.log == nil {
		e.log = slog.New(slog.DiscardHandler)
	}
	if e.now.IsZero() {
		e.now = time.Now()
	}
	if cfg.Trace != nil {
		e.trace = &traceLog{w: cfg.Trace}
	}
	for _, m := range cfg.Models {
		if m.Name == "" || m.Backend == nil || m.Renderer == nil {
			return nil, errors.New("serve: a model needs a name, a backend and a renderer")
		}
		if _, dup := e.models[m.Name]; dup {
			return nil, fmt.Errorf("serve: model %q is configured twice", m.Name)
		}
		e.models[m.Name] = m
		e.names = append(e.names, m.Name)
	}
	return e, nil
}

// Models are the served models' names, in configuration order.
func (e *Engine) Models() []string { return append([]string(nil), e.names...) }

// Model returns the model a request names: a served name, or with a
// single model any name (clients such as Claude Code send their own model
// names).
func (e *Engine) Model(name string) (*Model, error) {
	if m, ok := e.models[name]; ok {
		return m, nil
	}
	if len(e.names) == 1 {
		return e.models[e.names[0]], nil
	}
	return nil, badField("model", "no model %q here; served: %s", name, strings.Join(e.names, ", "))
}

// Turn runs one model turn: render the conversation with the model's own
// template, generate while streaming text to out, parse, validate the
// calls against the request's tools and retry invalid ones inside the
// request with the model-facing error. No tool is ever run. Invalid calls
// that outlast the retries are dropped (Result.Invalid says why). The
// error is a *RequestError for a request the server cannot honour, else
// the backend's failure.
func (e *Engine) Turn(ctx context.Context, req Request, out Stream) (Result, error) {
	m, err := e.Model(req.Model)
	if err != nil {
		return Result{}, err
	}
	// A failed turn still names its model, for the metrics and the log.
	failed := Result{Model: m.Name}
	if err := checkTools(req.Tools, req.Choice); err != nil {
		return failed, err
	}
	msgs, ids, replayed, err := e.history(m, req)
	if err != nil {
		return failed, err
	}
	tokens, err := e.checkWindow(ctx, m, msgs, req.Tools)
	if err != nil {
		return failed, err
	}
	c := e.turnCase(m, req, msgs, out)
	c.TurnIDs = ids
	if room := m.Window - 2*tokens; m.Window > 0 && c.Options.MaxTokens > room && room > 0 {
		// A reply cannot outgrow the window (Claude Code asks for 32,000
		// tokens of an 8k model): the bound is what is left of it, by the
		// backends' conservative two bytes a token, and a reply cut there
		// ends with finish length, as one cut at max_tokens would.
		c.Options.MaxTokens = room
	}
	start := time.Now()
	res, err := agent.RunCase(ctx, m.Backend, c)
	e.metrics.observeGeneration(req.API, m.Name, res, time.Since(start))
	if err != nil {
		return failed, generationError(ctx, err)
	}
	r := e.result(m, req, res)
	r.Replayed = replayed
	e.remember(m, res, r)
	e.traceTurn(req, r, res)
	return r, nil
}

// turnCase is the request as one case of the agent core, in raw mode.
func (e *Engine) turnCase(m *Model, req Request, msgs []chat.Message, out Stream) agent.Case {
	opts := m.Options
	if req.MaxTokens > 0 {
		opts.MaxTokens = req.MaxTokens
	}
	if req.Temperature != nil {
		opts.Temperature = req.Temperature
	}
	if req.TopP != nil {
		opts.TopP = req.TopP
	}
	if req.TopK != nil {
		opts.TopK = req.TopK
	}
	if req.Seed != nil {
		opts.Seed = req.Seed
	}
	retries := m.Retries
	if retries == 0 {
		retries = 2
	} else if retries < 0 {
		retries = 0
	}
	c := agent.Case{Model: m.upstream(), Messages: msgs, Tools: req.Tools, Mode: backend.ModeRaw, Renderer: m.Renderer,
		MaxRetries: retries, Options: opts, Replay: true, Stop: req.Stop, Now: e.now, Check: choiceCheck(req.Choice),
		// On a backend that takes ids (llama.cpp) every reply comes with the
		// ids it was generated in, remembered with its text, and a returning
		// turn goes back as them: re-tokenising a model's text does not
		// always give its ids back, and the server's cache compares ids.
		TokenHistory: true}
	if (req.Choice.Mode == ChoiceRequired || req.Choice.Mode == ChoiceTool) && m.Backend.Capabilities().Constrain {
		// The backend can hold the model to a call (Ollama format,
		// llama.cpp json_schema): the reply is then a call by
		// construction, its raw JSON the turn the history keeps.
		c.Constrained, c.RequireCall, c.ConstrainMaxString = true, true, m.ConstrainMaxString
		if req.Choice.Mode == ChoiceTool {
			c.ConstrainTo = req.Choice.Name
		}
	}
	if out != nil {
		c.OnEvent = func(_ int, ev agent.Event) {
			if ev.Kind != agent.EventText {
				return
			}
			switch ev.Part {
			case parse.PartContent:
				out.Text(ev.Text)
			case parse.PartReasoning:
				out.Reasoning(ev.Text)
			}
		}
	}
	return c
}

// choiceCheck enforces tool_choice on attempts whose calls are valid, and
// ends a reply cut by the token limit: retrying would be cut again.
func choiceCheck(ch Choice) func(a agent.Attempt) (string, bool) {
	return func(a agent.Attempt) (string, bool) {
		if a.StopReason == "length" {
			return "", true
		}
		switch ch.Mode {
		case ChoiceNone:
			if len(a.Calls) > 0 {
				return "tool_choice is none: no tool may be called", true
			}
		case ChoiceRequired:
			if len(a.Calls) == 0 && len(a.ParseErrors) == 0 {
				return "You must call one of the tools now. Write the call exactly as the tool instructions say.", false
			}
		case ChoiceTool:
			if len(a.Calls) == 0 && len(a.ParseErrors) == 0 {
				return fmt.Sprintf("You must call the tool %s now. Write the call exactly as the tool instructions say.", ch.Name), false
			}
			for _, c := range a.Calls {
				if c.Name != ch.Name {
					return fmt.Sprintf("Only the tool %s may be called now, not %s. Call %s, exactly as the tool instructions say.", ch.Name, c.Name, ch.Name), false
				}
			}
		}
		return "", false
	}
}

// result turns the case's attempts into the caller's reply.
func (e *Engine) result(m *Model, req Request, res agent.CaseResult) Result {
	r := Result{Model: m.Name, Retries: res.Retries, Finish: FinishStop}
	var text, reasoning strings.Builder
	for _, a := range res.Attempts {
		text.WriteString(agent.Answer(a.Events))
		reasoning.WriteString(agent.Reasoning(a.Events))
		r.Usage.CompletionTokens += a.Usage.GeneratedTokens
	}
	r.Text, r.Reasoning = text.String(), reasoning.String()
	last := res.Attempts[len(res.Attempts)-1]
	r.Usage.PromptTokens = last.Usage.PromptTokens
	r.Usage.CachedTokens, r.Usage.CachedKnown = last.Usage.CachedTokens, last.Usage.CachedKnown
	if last.StopReason == "length" {
		r.Finish = FinishLength
	}
	r.StopSequence = callerStop(req.Stop, last.StopSequence)
	switch {
	case last.OK() && len(last.Calls) > 0:
		prefix := req.IDPrefix
		if prefix == "" {
			prefix = "call_"
		}
		for _, c := range last.Fixed {
			c.ID = prefix + randomID()
			r.Calls = append(r.Calls, c)
		}
		r.Finish = FinishToolCalls
	case !last.OK():
		r.Invalid = invalidReason(last)
		e.metrics.invalidDropped(req.API, m.Name)
		e.log.Warn("serve: invalid calls reached no client", "model", m.Name, "api", req.API, "retries", res.Retries, "reason", r.Invalid)
	}
	return r
}

// callerStop is the caller's stop sequence that ended the reply, where the
// backend said which ended it (not the template's own stops).
func callerStop(stops []string, seq string) string {
	if seq != "" && slices.Contains(stops, seq) {
		return seq
	}
	return ""
}

// invalidReason is one line on why an attempt's calls were refused.
func invalidReason(a agent.Attempt) string {
	switch {
	case a.Problem != "":
		return firstLine(a.Problem)
	case len(a.Invalid) > 0:
		return a.Invalid[0].Kind + ": " + a.Invalid[0].Message
	case len(a.ParseErrors) > 0:
		pe := a.ParseErrors[0]
		return fmt.Sprintf("%s at byte %d: %s", pe.Kind, pe.Offset, pe.Message)
	}
	return "the reply was cut by the token limit"
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return l
}

func randomID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// checkTools refuses tools the model could not be held to: no name, a
// name given twice, a schema that does not compile; and a tool_choice
// naming none of them.
func checkTools(tools []chat.Tool, ch Choice) error {
	seen := map[string]int{}
	for i, t := range tools {
		field := fmt.Sprintf("tools[%d]", i)
		if t.Name == "" {
			return badField(field, "a tool needs a name")
		}
		if j, dup := seen[t.Name]; dup {
			return badField(field, "the tool name %q is also tools[%d]'s: names must be unique", t.Name, j)
		}
		seen[t.Name] = i
		if len(t.Parameters) > 0 {
			if _, err := registry.CompileSchema(t.Parameters); err != nil {
				return badField(field, "the schema of %q does not compile: %v", t.Name, err)
			}
		}
	}
	switch ch.Mode {
	case ChoiceTool:
		if _, ok := seen[ch.Name]; !ok {
			return badField("tool_choice", "names %q, which is not among the tools", ch.Name)
		}
	case ChoiceRequired:
		if len(tools) == 0 {
			return badField("tool_choice", "a call is required but the request has no tools")
		}
	}
	return nil
}

// generationError words a failed generation: a request past the server's
// deadline says so; the caller's cancellation stays itself; an overflow is the caller's request; anything else is the
// backend's.
func generationError(ctx context.Context, err error) error {
	if ctx.Err() == context.DeadlineExceeded {
		if cause := context.Cause(ctx); cause != nil && cause != ctx.Err() {
			return fmt.Errorf("%w: %w", cause, ctx.Err())
		}
	}
	if errors.Is(err, backend.ErrContextOverflow) {
		return badField("messages", "the conversation does not fit the model's context window: %v", err)
	}
	return &UpstreamError{Err: err}
}

// UpstreamError is a backend that failed the generation.
type UpstreamError struct{ Err error }

func (e *UpstreamError) Error() string { return "serve: the model server failed: " + e.Err.Error() }
func (e *UpstreamError) Unwrap() error { return e.Err }

package agent

import (
	"context"
	"errors"
	"fmt"
	"hash"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/toolharness/toolharness/backend"
	"github.com/toolharness/toolharness/chat"
	"github.com/toolharness/toolharness/registry"
)

// Config configures a session. Backend, Model and Renderer are required.
type Config struct {
	Backend  backend.Backend
	Model    string
	Mode     backend.Mode // default raw when the backend can, else chat
	Renderer Renderer
	// Tools is the registry; nil means no tools besides Local ones.
	Tools Toolbox
	// Local are tools the agent itself serves (skill, task).
	Local []LocalTool

	// Env is the environment for the system block; when zero it is
	// captured from Workspace at New.
	Env       Env
	Workspace string
	// SystemText replaces the identity, rules and environment text
	// (sub-agents use their own).
	SystemText string

	// Instructions is a project instructions text (AGENTS.md) and
	// InstructionsSource its file name; it goes into the first user
	// message's reminders.
	Instructions       string
	InstructionsSource string
	// Skills, when set, are listed in a reminder, expanded from /name and
	// loadable through the skill tool.
	Skills *Skills
	// Subagent, when set, adds the task tool.
	Subagent *SubagentConfig

	// Constrained sends a JSON Schema of the calls with every generation
	// (the backend must support it). RequireCall makes the first
	// generation after a user message a call: constrained to calls only,
	// or nudged once when unconstrained.
	Constrained bool
	RequireCall bool
	// ConstrainMaxString bounds unbounded strings under the constraint
	// (see SchemaOptions.MaxString); 0 leaves them unbounded.
	ConstrainMaxString int

	// MaxTurns bounds the generations per user message (default 10).
	MaxTurns int
	// MaxRetries bounds the generations that follow a mistake (parse
	// error, invalid call, missing call) per user message (default 3),
	// when Retry is nil.
	MaxRetries int
	// Retry is the retry policy; nil means MaxRetries per user message and
	// MaxRetries+1 consecutive mistakes.
	Retry *registry.RetryPolicy
	// FaultRetries bounds the retries of a generation that failed before
	// any output arrived (default 2).
	FaultRetries int
	Options      backend.Options
	// TextHistory sends the model's earlier turns back as text even to a
	// backend that takes token ids (Capabilities().TokenPrompt); by
	// default raw mode on such a backend sends them as the ids the model
	// generated, so the server's cache matches token for token.
	TextHistory bool

	// Trace receives one JSON line per generation.
	Trace io.Writer
	// TracePrompts keeps each generation's whole prompt in its trace
	// line (Step.Prompt), not only its hash and size.
	TracePrompts bool
	Hooks        Hooks
	// Clock is the session's clock (default time.Now).
	Clock func() time.Time
}

// Hooks let a front end follow a session live. They are never called
// concurrently: OnResult comes from the goroutine that ran the tool, the
// others from the one that runs Send, all under one lock.
type Hooks struct {
	// OnText gets the answer's text as it streams (the content parts);
	// OnReasoning the model's reasoning (a leading <think> block,
	// harmony's analysis channel). The markup that frames them goes to
	// neither; the trace has every byte.
	OnText      func(text string)
	OnReasoning func(text string)
	OnCallStart func(name string)
	OnCall      func(call chat.ToolCall)
	OnResult    func(o Outcome)
	// OnNotice reports what the harness did on its own: retries, nudges,
	// divergences, faults.
	OnNotice func(msg string)
}

// StopReason says how an exchange ended.
type StopReason string

// The ways an exchange ends.
const (
	StopAnswered StopReason = "answered"
	StopMaxTurns StopReason = "max_turns"
	StopRetries  StopReason = "retries"
	StopContext  StopReason = "context" // the prompt no longer fits the context window
	// StopLength is a reply cut by the token limit: what the model wrote
	// is not its whole answer.
	StopLength StopReason = "length"
	StopError  StopReason = "error"
)

// ErrLimit matches every *LimitError.
var ErrLimit = errors.New("agent: limit reached")

// LimitError is an exchange that hit a limit before the model answered.
type LimitError struct {
	Stop   StopReason
	Detail string
	// Err is the underlying error (the backend's context overflow).
	Err error
}

func (e *LimitError) Error() string        { return fmt.Sprintf("agent: %s: %s", e.Stop, e.Detail) }
func (e *LimitError) Is(target error) bool { return target == ErrLimit }
func (e *LimitError) Unwrap() error        { return e.Err }

// Exchange is one user message run to completion.
type Exchange struct {
	// Answer is the last generation's answer (Step.Answer), trimmed.
	Answer string
	// Reasoning is what the model reasoned in the exchange's
	// generations, each trimmed, in order, separated by blank lines.
	Reasoning string
	Stop      StopReason
	Steps     []Step
	Retries   int
	Calls     int
}

// Session is one conversation. It is not safe for concurrent Sends.
type Session struct {
	cfg   Config
	tools Toolbox
	sys   System
	tr    Transcript
	hist  []Msg
	trace *traceWriter
	now   func() time.Time

	exchange int
	step     int
	ids      *idSet
	// prevKey is the last prompt (promptKey) and prevRaw the model's raw
	// output after it: the next prompt must start with both.
	prevKey, prevRaw string
	// keyHash has hashed prevKey: a prompt that extends it hashes only
	// its new bytes.
	keyHash    hash.Hash
	prevTokens int // the server's prompt token count of the last request
	prevSlot   int // the tokens the server's cache slot held after the last request
	// tokenHistory is true when earlier assistant turns go to the server
	// as their generated ids; idSpans are where they lie in the prompt.
	tokenHistory bool
	idSpans      []idSpan
	notesSeen    map[string]bool
	remSent      map[string]string
	depth        int
	retry        *registry.RetryTracker
}

// New assembles the system block once and returns a session.
func New(ctx context.Context, cfg Config) (*Session, error) {
	if cfg.Backend == nil || cfg.Renderer == nil {
		return nil, errors.New("agent: a session needs a backend and a renderer")
	}
	caps := cfg.Backend.Capabilities()
	if cfg.Mode == "" {
		cfg.Mode = backend.ModeRaw
		if !caps.Raw {
			cfg.Mode = backend.ModeChat
		}
	}
	if !caps.Supports(cfg.Mode) {
		return nil, fmt.Errorf("agent: the backend cannot complete in %s mode", cfg.Mode)
	}
	if err := checkServerMode(cfg.Mode, cfg.Constrained); err != nil {
		return nil, err
	}
	if cfg.Constrained && !caps.Constrain {
		return nil, fmt.Errorf("agent: --constrained: the backend cannot constrain output to a schema: %w", backend.ErrUnsupported)
	}
	if cfg.MaxTurns <= 0 {
		cfg.MaxTurns = 10
	}
	if cfg.MaxRetries < 0 {
		cfg.MaxRetries = 0
	} else if cfg.MaxRetries == 0 {
		cfg.MaxRetries = 3
	}
	policy := registry.RetryPolicy{MaxRetriesPerTurn: cfg.MaxRetries, MaxConsecutive: cfg.MaxRetries + 1, AtLimit: registry.ActionHandBack}
	if cfg.Retry != nil {
		policy = *cfg.Retry
	}
	if cfg.FaultRetries == 0 {
		cfg.FaultRetries = 2
	}
	now := cfg.Clock
	if now == nil {
		now = time.Now
	}
	s := &Session{cfg: cfg, now: now, retry: policy.NewTracker(), ids: &idSet{used: map[string]bool{}}, remSent: map[string]string{}, notesSeen: map[string]bool{}}
	s.tokenHistory = caps.TokenPrompt && cfg.Mode == backend.ModeRaw && !cfg.TextHistory
	if tw, ok := cfg.Trace.(*traceWriter); ok {
		s.trace = tw
	} else if cfg.Trace != nil {
		s.trace = &traceWriter{w: cfg.Trace}
	}
	local := append([]LocalTool(nil), cfg.Local...)
	if cfg.Skills != nil && len(cfg.Skills.List()) > 0 {
		local = append(local, cfg.Skills.Tool())
	}
	if cfg.Subagent != nil {
		local = append(local, s.taskTool(*cfg.Subagent))
	}
	var err error
	if s.tools, err = addLocal(cfg.Tools, local); err != nil {
		return nil, err
	}
	if s.tools == nil {
		// No tools at all: a toolbox that knows none.
		s.tools = &withLocal{local: map[string]LocalTool{}, ran: map[string]Outcome{}}
	}
	text := cfg.SystemText
	if text == "" {
		env := cfg.Env
		if env == (Env{}) {
			env = CaptureEnv(ctx, cfg.Model, cfg.Workspace, now(), nil)
		}
		var err error
		if text, err = SystemText(env); err != nil {
			return nil, err
		}
	}
	// The system block is fixed here, once: text and core catalog.
	s.sys = System{Text: text, Tools: s.tools.Core(), Now: now()}
	if cfg.Constrained && len(s.sys.Tools) == 0 {
		return nil, errors.New("agent: --constrained needs at least one tool")
	}
	tr, err := cfg.Renderer.Transcript(s.sys)
	if err != nil {
		return nil, err
	}
	s.tr = tr
	return s, nil
}

// System returns the session's fixed system block.
func (s *Session) System() System { return s.sys }

// History returns the messages so far.
func (s *Session) History() []Msg { return append([]Msg(nil), s.hist...) }

// reminders returns the reminders the next user message carries: each kind
// is sent when it first appears and again only when its text changes.
func (s *Session) reminders() ([]string, error) {
	var out []string
	add := func(kind, text string) {
		if text == "" || s.remSent[kind] == text {
			return
		}
		s.remSent[kind] = text
		out = append(out, text)
	}
	if s.cfg.Instructions != "" {
		src := s.cfg.InstructionsSource
		if src == "" {
			src = "the project"
		}
		t, err := InstructionsReminder(src, s.cfg.Instructions)
		if err != nil {
			return nil, err
		}
		add("instructions", t)
	}
	if s.cfg.Skills != nil {
		t, err := s.cfg.Skills.Reminder()
		if err != nil {
			return nil, err
		}
		add("skills", t)
	}
	add("deferred", s.tools.Reminder())
	return out, nil
}

// Send runs one user message to completion. A message "/name args" runs a
// skill. The returned Exchange is complete even when err is a
// *LimitError; on a harness error (backend fault, cancellation) it holds
// what happened up to the error, and the history keeps it.
func (s *Session) Send(ctx context.Context, text string) (*Exchange, error) {
	if s.cfg.Skills != nil {
		expanded, _, err := s.cfg.Skills.Expand(text)
		if err != nil {
			return &Exchange{Stop: StopError}, err
		}
		text = expanded
	}
	rem, err := s.reminders()
	if err != nil {
		return &Exchange{Stop: StopError}, err
	}
	s.exchange++
	s.retry.NewTurn()
	s.hist = append(s.hist, Msg{Message: chat.Message{Role: chat.RoleUser, Content: text}, Reminders: rem})
	if s.trace != nil {
		s.trace.write(map[string]any{"type": "user", "agent": s.agentName(), "exchange": s.exchange, "content": text, "reminders": rem})
	}
	ex, err := s.loop(ctx)
	return ex, s.traceFailure(err)
}

// traceFailure adds a failed trace write to err (the exchange's own
// error, nil when it had none): a trace that lost records is an error of
// the exchange, never silent.
func (s *Session) traceFailure(err error) error {
	if s.trace == nil {
		return err
	}
	terr := s.trace.failure()
	switch {
	case terr == nil:
		return err
	case err == nil:
		return terr
	}
	return fmt.Errorf("%w; %w", err, terr)
}

func (s *Session) notice(format string, args ...any) string {
	msg := fmt.Sprintf(format, args...)
	if s.cfg.Hooks.OnNotice != nil {
		s.cfg.Hooks.OnNotice(msg)
	}
	return msg
}

func (s *Session) loop(ctx context.Context) (*Exchange, error) {
	ex := &Exchange{}
	nudged := false
	for turn := 1; ; turn++ {
		if turn > s.cfg.MaxTurns {
			ex.Stop = StopMaxTurns
			return ex, &LimitError{Stop: StopMaxTurns, Detail: fmt.Sprintf("the model did not answer within %d generations", s.cfg.MaxTurns)}
		}
		mustCall := s.cfg.RequireCall && turn == 1
		st, err := s.generate(ctx, turn, mustCall)
		ex.Steps = append(ex.Steps, st)
		if r := strings.TrimSpace(st.Reasoning); r != "" {
			if ex.Reasoning != "" {
				ex.Reasoning += "\n\n"
			}
			ex.Reasoning += r
		}
		ex.Calls += len(st.Calls)
		if err != nil {
			if errors.Is(err, backend.ErrContextOverflow) {
				// The context budget is a limit, not a fault: the exchange
				// ends, and the caller may start a fresh session.
				ex.Stop = StopContext
				s.finishTrace(ex)
				return ex, &LimitError{Stop: StopContext, Err: err, Detail: "the conversation no longer fits the context window" + overflowDetail(err) +
					" (raise the context window — Ollama --num-ctx, llama-server -c — or start a new session)"}
			}
			ex.Stop = StopError
			return ex, err
		}
		mistakes := len(st.Mistakes)
		if len(st.Calls) == 0 && mistakes == 0 {
			if mustCall && !nudged && !s.cfg.Constrained {
				// Nudge once: the model wrote prose where a call was required.
				nudged = true
				mistakes = 1
				st.Mistakes = append(st.Mistakes, Mistake{Kind: "no_call", Message: "a tool call was required"})
				ex.Steps[len(ex.Steps)-1] = st
				s.hist = append(s.hist, Msg{Message: chat.Message{Role: chat.RoleUser,
					Content: "You must call one of the tools now. Write the call exactly as the tool instructions say."}})
				s.notice("the model answered without the required tool call; nudging once")
			} else {
				ex.Answer = strings.TrimSpace(st.Answer)
				if st.StopReason == cutByLimit {
					ex.Stop = StopLength
					s.finishTrace(ex)
					return ex, &LimitError{Stop: StopLength, Detail: "the reply was cut by " + s.tokenLimit() + " before the model finished it (raise --max-tokens)"}
				}
				if ex.Answer == "" && strings.TrimSpace(st.Reasoning) != "" {
					s.notice("the model's reply has no answer, only reasoning (stop reason %q): it may have run out of tokens", st.StopReason)
				}
				ex.Stop = StopAnswered
				s.finishTrace(ex)
				return ex, nil
			}
		}
		if mistakes == 0 {
			s.retry.Success()
			continue
		}
		// One generation with mistakes costs one retry, whatever their number.
		if d := s.retry.Mistake(mistakeOf(st.Mistakes[0].Kind)); !d.Retry {
			ex.Stop = StopRetries
			s.finishTrace(ex)
			return ex, &LimitError{Stop: StopRetries, Detail: fmt.Sprintf("%v (last: %s)", d.Err, st.Mistakes[len(st.Mistakes)-1].Message)}
		}
		ex.Retries++
		s.notice("retry %d after %d mistake(s): %s", ex.Retries, mistakes, st.Mistakes[0].Message)
	}
}

// overflowDetail is the backend's own account of an overflow (the token
// counts, where the server counted them), as ": …", or "".
func overflowDetail(err error) string {
	var be *backend.Error
	if errors.As(err, &be) && be.Message != "" {
		return ": " + be.Message
	}
	return ""
}

func (s *Session) finishTrace(ex *Exchange) {
	if s.trace == nil {
		return
	}
	rec := map[string]any{"type": "exchange", "agent": s.agentName(), "exchange": s.exchange, "stop": ex.Stop,
		"retries": ex.Retries, "calls": ex.Calls, "answer": ex.Answer}
	if ex.Reasoning != "" {
		rec["reasoning"] = ex.Reasoning
	}
	s.trace.write(rec)
}

// nextID returns a call ID unique in the session, keeping the model's own
// (or the parser's positional) ID when it is still free.
func (s *Session) nextID(id string) string { return s.ids.next(id) }

// idSet hands out call IDs unique across a session and its sub-agents,
// which share the registry's at-most-once set keyed by call ID.
type idSet struct {
	mu   sync.Mutex
	used map[string]bool
}

func (s *idSet) next(id string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if id != "" && !s.used[id] {
		s.used[id] = true
		return id
	}
	for n := len(s.used); ; n++ {
		c := fmt.Sprintf("call_%d", n)
		if !s.used[c] {
			s.used[c] = true
			return c
		}
	}
}

// lockedHooks serialises hook calls made from tool goroutines.
type lockedHooks struct {
	mu sync.Mutex
	h  Hooks
}

func (l *lockedHooks) result(o Outcome) {
	if l.h.OnResult != nil {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.h.OnResult(o)
	}
}

func (l *lockedHooks) text(s string) {
	if l.h.OnText != nil {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.h.OnText(s)
	}
}

func (l *lockedHooks) reasoning(s string) {
	if l.h.OnReasoning != nil {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.h.OnReasoning(s)
	}
}

func (l *lockedHooks) callStart(name string) {
	if l.h.OnCallStart != nil {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.h.OnCallStart(name)
	}
}

func (l *lockedHooks) call(c chat.ToolCall) {
	if l.h.OnCall != nil {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.h.OnCall(c)
	}
}

package backend

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"syscall"
	"time"

	"github.com/toolharness/toolharness/chat"
)

// Mode says who renders the prompt and who reads the calls: the harness
// renders the whole prompt (raw); the server templates messages whose
// catalog the harness wrote as text, and the harness parses the reply
// (chat); or the server gets the tools in its API's tools field, renders
// them with its own template and returns the calls its own parser found
// (server), so what is measured is the server's parser, not the harness's.
type Mode string

// The three modes.
const (
	ModeRaw    Mode = "raw"
	ModeChat   Mode = "chat"
	ModeServer Mode = "server"
)

// Modes are the modes in the order they are listed to users.
var Modes = []Mode{ModeRaw, ModeChat, ModeServer}

// ParseMode reads a mode name; "" is an error (callers choose their
// default before asking).
func ParseMode(s string) (Mode, error) {
	for _, m := range Modes {
		if string(m) == s {
			return m, nil
		}
	}
	return "", fmt.Errorf("backend: unknown mode %q (want raw, chat or server)", s)
}

// Request is one completion request.
type Request struct {
	Model string
	Mode  Mode
	// Prompt is the complete rendered prompt in raw mode, special tokens
	// included.
	Prompt string
	// TokenSpans mark byte ranges of Prompt whose token ids are known
	// (what the model generated in earlier turns), in order and not
	// overlapping. A backend whose Capabilities().TokenPrompt is true sends
	// each range as its ids instead of its text, so the server's cached
	// prefix matches token for token; other backends send Prompt as text.
	TokenSpans []TokenSpan
	// ReturnTokens asks for Response.Tokens (backends with TokenPrompt).
	ReturnTokens bool
	// Messages is the conversation in chat and server mode. In chat mode
	// tools are never sent in the server's tools field: the catalog is
	// already text in the messages, and an assistant turn travels as the
	// text the model wrote. In server mode an assistant turn travels as
	// its content and structured tool calls, for the server's template to
	// render.
	Messages []chat.Message
	// Tools go in the API's tools field (server mode only; other modes
	// refuse a request that carries them).
	Tools []chat.Tool
	// ToolChoice is the API's tool_choice in server mode: "" (the
	// server's default, auto), "auto", "required" or "none".
	ToolChoice string
	// ParallelToolCalls is the API's parallel_tool_calls in server mode
	// (nil: the server's default). Ollama has none and refuses a request
	// that sets it.
	ParallelToolCalls *bool
	// Stop sequences end generation; the server does not include them in
	// the output.
	Stop []string
	// Format, when set, is a JSON Schema the output must satisfy
	// (constrained decoding). A backend whose server cannot constrain
	// returns an error of kind KindUnsupported.
	Format json.RawMessage
	// Grammar, when set, is a GBNF grammar for servers that take one
	// (llama.cpp). Backends whose server cannot take it return an error of
	// kind KindUnsupported.
	Grammar string
	Options Options
}

// TokenSpan is a byte range of Request.Prompt with the token ids that
// stand for it.
type TokenSpan struct {
	Offset int   `json:"offset"`
	Len    int   `json:"len"`
	IDs    []int `json:"ids"`
}

// Options are sampling and sizing options. Nil pointers leave the server's
// default.
type Options struct {
	Temperature *float64
	TopP        *float64
	TopK        *int
	Seed        *int
	// MaxTokens bounds the generated tokens (0 = server default).
	MaxTokens int
	// NumCtx is the context window to request where the server takes one
	// per request (Ollama num_ctx). 0 lets the backend choose.
	NumCtx int
}

// Usage are the figures the server reports for one completion. Zero means
// not reported, except where a Known flag says otherwise.
type Usage struct {
	PromptTokens    int
	GeneratedTokens int
	// CachedTokens is the prompt prefix the server reused from its cache
	// (PromptTokens - CachedTokens were evaluated anew); meaningful only
	// when CachedKnown. Each backend documents which server figure it is.
	CachedTokens int
	CachedKnown  bool
	// SlotTokens is how many tokens the server's cache slot holds after
	// the request (prompt and generated), where the server says
	// (llama.cpp tokens_cached): the most the next request can reuse.
	// It is not a reuse figure.
	SlotTokens int
	// TimeToFirstChunk is measured by the client from sending the request.
	TimeToFirstChunk time.Duration
	PromptDuration   time.Duration
	GenerateDuration time.Duration
	Total            time.Duration
}

// Response is a finished completion.
type Response struct {
	// Text is the whole generated text, exactly the concatenation of the
	// chunks passed to the callback.
	Text string
	// StopReason is "stop" (end of turn or a stop sequence), "length"
	// (token limit) or what the server said.
	StopReason string
	// StopSequence is the stop sequence that ended generation, when the
	// server says which.
	StopSequence string
	Usage        Usage
	// Tokens are the generated token ids, exactly covering Text (or its
	// first TokenText bytes), when the request asked for them and the
	// backend could check that they do (nil otherwise: then Text is all
	// there is).
	Tokens []int
	// TokenText, when not 0, is how many bytes of Text the Tokens stand
	// for: the rest of Text has no ids (a stream that skipped the ids of
	// tokens ending inside a UTF-8 character).
	TokenText int
	// ToolCalls are the calls the server's own parser returned (server
	// mode); Text is then the content outside them. A call whose
	// arguments the server sent as something other than a JSON object
	// has nil Arguments and the text it sent in Raw.
	ToolCalls []chat.ToolCall
	// Notes say what the backend changed in the request on its way to the
	// server (for example a rendered BOS stripped because the server adds
	// its own), so that nothing the harness does is silent.
	Notes []string
}

// Backend streams completions from one model server.
type Backend interface {
	// Generate runs req and calls onChunk with each piece of text as it
	// arrives (onChunk may be nil). An error from onChunk cancels the
	// request and is returned. The returned Response holds what arrived
	// even when err is not nil.
	Generate(ctx context.Context, req Request, onChunk func(text string) error) (Response, error)
	// Capabilities says what the server can do.
	Capabilities() Capabilities
}

// Capabilities of a backend.
type Capabilities struct {
	Raw       bool // completes raw prompts
	Chat      bool // completes message lists
	Constrain bool // honours Request.Format
	// AddsBOS is true when the server prepends a BOS token to raw prompts
	// by itself, so the harness must not render one.
	AddsBOS bool
	// TokenPrompt is true when the backend honours Request.TokenSpans and
	// Request.ReturnTokens (llama.cpp's mixed prompt arrays).
	TokenPrompt bool
	// ServerTools is true when the backend does server mode: tools in the
	// API's tools field, calls back from the server's own parser.
	ServerTools bool
}

// Supports reports whether caps allow mode m.
func (c Capabilities) Supports(m Mode) bool {
	switch m {
	case ModeRaw:
		return c.Raw
	case ModeChat:
		return c.Chat
	case ModeServer:
		return c.ServerTools
	}
	return false
}

// ContextSizer is implemented by backends whose server reports the
// model's context window (Ollama /api/show, llama.cpp /props).
type ContextSizer interface {
	ContextSize(ctx context.Context, model string) (int, error)
}

// TokenCounter is implemented by backends that can count tokens exactly
// (llama.cpp /tokenize).
type TokenCounter interface {
	CountTokens(ctx context.Context, model, text string) (int, error)
}

// Kind classifies a backend failure.
type Kind string

// The failure kinds, see Error.
const (
	KindUnreachable     Kind = "unreachable"      // connection refused, DNS, TLS
	KindServer          Kind = "server"           // a 4xx/5xx answer
	KindStreamCut       Kind = "stream_cut"       // the stream ended before completion
	KindStalled         Kind = "stalled"          // no data within the stall timeout
	KindCanceled        Kind = "canceled"         // the caller's context ended
	KindContextOverflow Kind = "context_overflow" // the prompt would not fit
	KindUnsupported     Kind = "unsupported"      // the server cannot do what was asked
	KindBadResponse     Kind = "bad_response"     // the server's answer could not be read
)

// Sentinels for errors.Is; every *Error matches the one of its Kind.
var (
	ErrUnreachable     = errors.New("backend: server unreachable")
	ErrServer          = errors.New("backend: server error")
	ErrStreamCut       = errors.New("backend: stream cut")
	ErrStalled         = errors.New("backend: stream stalled")
	ErrCanceled        = errors.New("backend: canceled")
	ErrContextOverflow = errors.New("backend: prompt exceeds the context window")
	ErrUnsupported     = errors.New("backend: unsupported")
	ErrBadResponse     = errors.New("backend: bad response")
)

var sentinels = map[Kind]error{
	KindUnreachable: ErrUnreachable, KindServer: ErrServer, KindStreamCut: ErrStreamCut,
	KindStalled: ErrStalled, KindCanceled: ErrCanceled, KindContextOverflow: ErrContextOverflow,
	KindUnsupported: ErrUnsupported, KindBadResponse: ErrBadResponse,
}

// Error is a backend failure.
type Error struct {
	Kind Kind
	// Backend names the implementation ("ollama", "llamacpp", "openai", …).
	Backend string
	// Status is the HTTP status for KindServer.
	Status int
	// Message is the server's own message where it gave one.
	Message string
	// Consumed is true when some output had already been delivered to the
	// caller; only requests with nothing consumed are safe to retry.
	Consumed bool
	Err      error
}

func (e *Error) Error() string {
	s := fmt.Sprintf("backend: %s: %s", e.Backend, e.Kind)
	if e.Status != 0 {
		s += fmt.Sprintf(" (HTTP %d)", e.Status)
	}
	if e.Message != "" {
		s += ": " + e.Message
	}
	if e.Err != nil && e.Message == "" {
		s += ": " + e.Err.Error()
	}
	return s
}

func (e *Error) Unwrap() error { return e.Err }

// Is matches the sentinel of the error's kind.
func (e *Error) Is(target error) bool { return sentinels[e.Kind] == target }

// Retryable reports whether err is a failure that may be retried: nothing
// was consumed and the failure is transient.
func Retryable(err error) bool {
	var e *Error
	if !errors.As(err, &e) || e.Consumed {
		return false
	}
	switch e.Kind {
	case KindUnreachable, KindStreamCut, KindStalled:
		return true
	case KindServer:
		return e.Status >= 500 || e.Status == 429
	}
	return false
}

// IsDial reports whether err means the server was never reached: a dial
// error, a DNS failure or a refused connection.
func IsDial(err error) bool {
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return true
	}
	var dns *net.DNSError
	return errors.As(err, &dns) || errors.Is(err, syscall.ECONNREFUSED)
}

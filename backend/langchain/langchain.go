package langchain

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"time"

	"github.com/tmc/langchaingo/llms"

	"github.com/toolharness/toolharness/backend"
	"github.com/toolharness/toolharness/chat"
)

// DefaultName is the backend name errors carry when Config.Name is empty.
const DefaultName = "langchain"

// Config tunes the adapter.
type Config struct {
	// Name is the backend name in errors (DefaultName when empty).
	Name string
	// ToolResultsAsHuman sends tool results as human messages. By default
	// they go as tool messages with a text part, which Ollama's provider
	// templates natively; providers that demand a preceding structured tool
	// call (OpenAI's) reject those, so set this for them.
	ToolResultsAsHuman bool
	// RawCompletion says the model completes a single prompt verbatim (a
	// text-completion provider), so Capabilities reports Raw. Chat
	// providers template even a single message, so by default Raw is false
	// and the harness renders for chat mode; raw requests are served
	// either way.
	RawCompletion bool
}

// Backend serves backend requests with a langchaingo model.
type Backend struct {
	model llms.Model
	cfg   Config
}

var _ backend.Backend = (*Backend)(nil)

// New adapts m.
func New(m llms.Model, cfg Config) (*Backend, error) {
	if m == nil {
		return nil, errors.New("langchain: nil llms.Model")
	}
	if cfg.Name == "" {
		cfg.Name = DefaultName
	}
	return &Backend{model: m, cfg: cfg}, nil
}

// Capabilities: chat, and raw only when Config.RawCompletion says the
// provider completes prompts verbatim; no constrained decoding, since
// langchaingo's only knob, JSON mode, takes no schema; BOS is the
// provider's business.
func (b *Backend) Capabilities() backend.Capabilities {
	return backend.Capabilities{Raw: b.cfg.RawCompletion, Chat: true}
}

// Generate runs req through the model's GenerateContent.
func (b *Backend) Generate(ctx context.Context, req backend.Request, onChunk func(string) error) (backend.Response, error) {
	if len(req.Format) > 0 {
		return backend.Response{}, b.fail(backend.KindUnsupported, "langchaingo models take no JSON Schema constraint", nil, false)
	}
	msgs, err := b.messages(req)
	if err != nil {
		return backend.Response{}, err
	}
	start := time.Now()
	resp, err := b.generate(ctx, msgs, req, start, onChunk)
	resp.Usage.Total = time.Since(start)
	return resp, err
}

func (b *Backend) generate(ctx context.Context, msgs []llms.MessageContent, req backend.Request, start time.Time, onChunk func(string) error) (backend.Response, error) {
	var resp backend.Response
	var cbErr error
	opts := append(callOptions(req), llms.WithStreamingFunc(func(_ context.Context, chunk []byte) error {
		if len(chunk) == 0 {
			return nil
		}
		if resp.Usage.TimeToFirstChunk == 0 {
			resp.Usage.TimeToFirstChunk = time.Since(start)
		}
		s := string(chunk)
		resp.Text += s
		if onChunk != nil {
			if err := onChunk(s); err != nil {
				cbErr = err
				return err
			}
		}
		return nil
	}))
	out, err := b.model.GenerateContent(ctx, msgs, opts...)
	if err != nil {
		if cbErr != nil && errors.Is(err, cbErr) {
			return resp, cbErr
		}
		return resp, b.classify(ctx, err, resp.Text != "")
	}
	if cbErr != nil {
		// The provider swallowed the callback's error; it is still the
		// caller's to see.
		return resp, cbErr
	}
	if ctx.Err() != nil {
		return resp, b.fail(backend.KindCanceled, "", ctx.Err(), resp.Text != "")
	}
	if out == nil || len(out.Choices) == 0 || out.Choices[0] == nil {
		return resp, b.fail(backend.KindBadResponse, "the model returned no choice", nil, resp.Text != "")
	}
	choice := out.Choices[0]
	switch {
	case resp.Text == "" && choice.Content != "":
		// A provider that does not stream: the whole text is one chunk.
		if resp.Usage.TimeToFirstChunk == 0 {
			resp.Usage.TimeToFirstChunk = time.Since(start)
		}
		resp.Text = choice.Content
		if onChunk != nil {
			if err := onChunk(choice.Content); err != nil {
				return resp, err
			}
		}
	case resp.Text != "" && choice.Content == "":
		// langchaingo's Ollama client ends without error when the stream
		// breaks, and then reports an empty content: a cut, not a success.
		return resp, b.fail(backend.KindStreamCut, fmt.Sprintf("the model streamed %d bytes but its final answer is empty: the stream ended early", len(resp.Text)), nil, true)
	case strings.HasPrefix(choice.Content, resp.Text) && len(choice.Content) > len(resp.Text):
		// Text the provider returned without streaming it.
		rest := choice.Content[len(resp.Text):]
		resp.Text = choice.Content
		if onChunk != nil {
			if err := onChunk(rest); err != nil {
				return resp, err
			}
		}
	}
	resp.StopReason = stopReason(choice.StopReason)
	resp.Usage.PromptTokens = intInfo(choice.GenerationInfo, "PromptTokens", "prompt_tokens", "InputTokens", "input_tokens")
	resp.Usage.GeneratedTokens = intInfo(choice.GenerationInfo, "CompletionTokens", "completion_tokens", "OutputTokens", "output_tokens")
	if n, ok := lookupInt(choice.GenerationInfo, "CachedTokens", "cached_tokens", "PromptCachedTokens"); ok {
		resp.Usage.CachedTokens, resp.Usage.CachedKnown = n, true
	}
	return resp, nil
}

// messages turns the request into langchaingo messages.
func (b *Backend) messages(req backend.Request) ([]llms.MessageContent, error) {
	switch req.Mode {
	case backend.ModeRaw:
		return []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, req.Prompt)}, nil
	case backend.ModeChat:
	default:
		return nil, b.fail(backend.KindUnsupported, fmt.Sprintf("unknown mode %q (want %q or %q)", req.Mode, backend.ModeRaw, backend.ModeChat), nil, false)
	}
	out := make([]llms.MessageContent, 0, len(req.Messages))
	for i, m := range req.Messages {
		var role llms.ChatMessageType
		text := m.Content
		switch m.Role {
		case chat.RoleSystem, chat.RoleDeveloper:
			role = llms.ChatMessageTypeSystem
		case chat.RoleUser:
			role = llms.ChatMessageTypeHuman
		case chat.RoleAssistant:
			role = llms.ChatMessageTypeAI
			if m.Raw != "" {
				text = m.Raw
			}
		case chat.RoleTool:
			role = llms.ChatMessageTypeTool
			if b.cfg.ToolResultsAsHuman {
				role = llms.ChatMessageTypeHuman
			}
		default:
			return nil, b.fail(backend.KindUnsupported, fmt.Sprintf("message %d has unknown role %q", i, m.Role), nil, false)
		}
		out = append(out, llms.TextParts(role, text))
	}
	return out, nil
}

// callOptions maps the sampling options; unset ones are left out so the
// provider keeps its defaults.
func callOptions(req backend.Request) []llms.CallOption {
	var o []llms.CallOption
	if req.Model != "" {
		o = append(o, llms.WithModel(req.Model))
	}
	if len(req.Stop) > 0 {
		o = append(o, llms.WithStopWords(req.Stop))
	}
	if p := req.Options.Temperature; p != nil {
		o = append(o, llms.WithTemperature(*p))
	}
	if p := req.Options.TopP; p != nil {
		o = append(o, llms.WithTopP(*p))
	}
	if p := req.Options.TopK; p != nil {
		o = append(o, llms.WithTopK(*p))
	}
	if p := req.Options.Seed; p != nil {
		o = append(o, llms.WithSeed(*p))
	}
	if n := req.Options.MaxTokens; n > 0 {
		o = append(o, llms.WithMaxTokens(n))
	}
	return o
}

// stopReason folds the providers' names onto "stop" and "length".
func stopReason(s string) string {
	switch strings.ToLower(s) {
	case "stop", "end_turn", "eos", "stop_sequence", "finish_reason_stop":
		return "stop"
	case "length", "max_tokens", "finish_reason_max_tokens":
		return "length"
	}
	return s
}

func intInfo(info map[string]any, keys ...string) int {
	n, _ := lookupInt(info, keys...)
	return n
}

func lookupInt(info map[string]any, keys ...string) (int, bool) {
	for _, k := range keys {
		switch v := info[k].(type) {
		case int:
			return v, true
		case int32:
			return int(v), true
		case int64:
			return int(v), true
		case float64:
			return int(v), true
		case float32:
			return int(v), true
		}
	}
	return 0, false
}

func (b *Backend) fail(kind backend.Kind, msg string, err error, consumed bool) *backend.Error {
	return &backend.Error{Kind: kind, Backend: b.cfg.Name, Message: msg, Err: err, Consumed: consumed}
}

// classify maps a provider error onto a backend.Error kind.
func (b *Backend) classify(ctx context.Context, err error, consumed bool) error {
	if ctx.Err() != nil || errors.Is(err, context.Canceled) {
		cause := ctx.Err()
		if cause == nil {
			cause = err
		}
		return b.fail(backend.KindCanceled, "", cause, consumed)
	}
	var le *llms.Error
	if errors.As(err, &le) {
		e := b.fail(backend.KindServer, le.Message, err, consumed)
		switch le.Code {
		case llms.ErrCodeProviderUnavailable:
			e.Kind = backend.KindUnreachable
		case llms.ErrCodeRateLimit:
			e.Status = 429
		case llms.ErrCodeTokenLimit:
			e.Kind = backend.KindContextOverflow
		case llms.ErrCodeTimeout:
			e.Kind = backend.KindStalled
		case llms.ErrCodeNotImplemented:
			e.Kind = backend.KindUnsupported
		case llms.ErrCodeCanceled:
			e.Kind = backend.KindCanceled
		}
		return e
	}
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return b.fail(backend.KindUnreachable, "", err, false)
	}
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed) {
		return b.fail(backend.KindStreamCut, "", err, consumed)
	}
	return b.fail(backend.KindServer, err.Error(), err, consumed)
}

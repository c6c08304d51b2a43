package ollama

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/ollama/ollama/api"

	"github.com/toolharness/toolharness/backend"
	"github.com/toolharness/toolharness/backend/internal/chatwire"
	"github.com/toolharness/toolharness/backend/internal/transport"
	"github.com/toolharness/toolharness/chat"
)

const name = "ollama"

// Defaults of Config.
const (
	DefaultStallTimeout = 2 * time.Minute
	DefaultAttempts     = 3
	DefaultBackoff      = 250 * time.Millisecond
	// DefaultMaxNumCtx caps the num_ctx picked from a model's window. The
	// KV cache Ollama allocates grows with num_ctx, not with the prompt:
	// 16384 tokens is about 2 GiB at f16 for Llama-3.1-8B (128 KiB a
	// token), 0.9 GiB for Qwen2.5-7B (56 KiB). A larger window costs that
	// memory for the whole session; a smaller one refuses long sessions
	// sooner. --num-ctx sets it per run.
	DefaultMaxNumCtx     = 16384
	DefaultOutputReserve = 1024
	DefaultBytesPerToken = 2.0
)

// Config configures a Backend. Zero fields take the defaults above.
type Config struct {
	// Host is the server's base URL (http://127.0.0.1:11434) or host:port.
	Host string
	// HTTPClient carries the requests; nil means a client without a
	// timeout (streams are bounded by StallTimeout instead).
	HTTPClient *http.Client
	// StallTimeout ends a request that receives nothing for this long,
	// the wait for the first chunk (prompt evaluation) included.
	StallTimeout time.Duration
	// Attempts is the number of tries of a request that failed before
	// anything was delivered (retryable failures only); 1 disables retries.
	Attempts int
	// Backoff is the wait before the first retry; it doubles each retry.
	Backoff time.Duration
	// MaxNumCtx caps the num_ctx the backend picks from the model's window
	// when a request sets none (DefaultMaxNumCtx when 0); see budget.
	MaxNumCtx int
	// OutputReserve is the room kept for the reply when Options.MaxTokens
	// is 0.
	OutputReserve int
	// BytesPerToken is the conservative bytes-per-token ratio used to
	// estimate a prompt's tokens when the byte count (an upper bound) does
	// not fit the window. Lower is more conservative.
	BytesPerToken float64
}

// Backend streams completions from an Ollama server through
// github.com/ollama/ollama/api: raw mode uses /api/generate with raw=true,
// chat mode /api/chat.
type Backend struct {
	cfg    Config
	client *api.Client

	mu     sync.Mutex
	models map[string]ModelInfo // /api/show answers, by model name
}

var (
	_ backend.Backend      = (*Backend)(nil)
	_ backend.ContextSizer = (*Backend)(nil)
)

// New returns a Backend for the server at cfg.Host.
func New(cfg Config) (*Backend, error) {
	host := cfg.Host
	if host == "" {
		return nil, errors.New("ollama: no host")
	}
	if !strings.Contains(host, "://") {
		host = "http://" + host
	}
	u, err := url.Parse(host)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("ollama: bad host %q", cfg.Host)
	}
	cfg.HTTPClient = transport.HTTPClient(cfg.HTTPClient)
	cfg.StallTimeout = transport.Or(cfg.StallTimeout, DefaultStallTimeout)
	cfg.Attempts = transport.Or(cfg.Attempts, DefaultAttempts)
	cfg.Backoff = transport.Or(cfg.Backoff, DefaultBackoff)
	cfg.MaxNumCtx = transport.Or(cfg.MaxNumCtx, DefaultMaxNumCtx)
	cfg.OutputReserve = transport.Or(cfg.OutputReserve, DefaultOutputReserve)
	cfg.BytesPerToken = transport.Or(cfg.BytesPerToken, DefaultBytesPerToken)
	return &Backend{cfg: cfg, client: api.NewClient(u, cfg.HTTPClient), models: map[string]ModelInfo{}}, nil
}

// Capabilities: raw, chat and server mode (/api/chat with tools),
// JSON-Schema constraint through `format`.
// AddsBOS is false because Generate strips a leading BOS from raw prompts
// of models whose tokenizer adds one, so the harness always renders it.
func (b *Backend) Capabilities() backend.Capabilities {
	return backend.Capabilities{Raw: true, Chat: true, Constrain: true, ServerTools: true}
}

// Generate runs req, retrying with backoff while nothing was delivered and
// the failure is transient (see backend.Retryable).
func (b *Backend) Generate(ctx context.Context, req backend.Request, onChunk func(string) error) (backend.Response, error) {
	if req.Model == "" {
		return backend.Response{}, &backend.Error{Kind: backend.KindUnsupported, Backend: name, Message: "no model in request"}
	}
	if req.Grammar != "" {
		return backend.Response{}, &backend.Error{Kind: backend.KindUnsupported, Backend: name,
			Message: "Ollama cannot take a GBNF grammar; constrain with Format (a JSON Schema) instead"}
	}
	retry := transport.Retry{Backend: name, Attempts: b.cfg.Attempts, Backoff: b.cfg.Backoff}
	var resp backend.Response
	err := retry.Do(ctx, func() error {
		// prepare asks /api/show on first use of a model: inside the loop,
		// so that a server still starting is retried like any request.
		plan, err := b.prepare(ctx, req)
		resp = backend.Response{Notes: plan.notes}
		if err == nil {
			resp, err = b.once(ctx, req, plan, onChunk)
		}
		return err
	})
	return resp, err
}

// plan is what prepare decided for a request.
type plan struct {
	prompt string // raw prompt after BOS handling
	msgs   []api.Message
	tools  api.Tools // server mode
	numCtx int
	notes  []string // what was changed on the way, for Response.Notes
}

func (b *Backend) prepare(ctx context.Context, req backend.Request) (plan, error) {
	var p plan
	info, err := b.ModelInfo(ctx, req.Model)
	if err != nil {
		return p, err
	}
	var size int // bytes that become prompt tokens
	switch req.Mode {
	case backend.ModeRaw:
		if req.Prompt == "" {
			return p, &backend.Error{Kind: backend.KindUnsupported, Backend: name, Message: "raw mode needs a prompt"}
		}
		p.prompt = stripBOS(req.Prompt, info)
		if len(p.prompt) < len(req.Prompt) {
			p.notes = append(p.notes, bosNote(info.BOS))
		}
		size = len(p.prompt)
	case backend.ModeChat:
		if p.msgs, p.notes, err = messages(req.Messages); err != nil {
			return p, err
		}
		for _, m := range p.msgs {
			size += len(m.Content) + perMessageOverhead
		}
	case backend.ModeServer:
		if p.msgs, p.notes, err = serverMessages(req.Messages); err != nil {
			return p, err
		}
		if p.tools, err = serverTools(req.Tools); err != nil {
			return p, err
		}
		size = serverSize(p.msgs, p.tools)
	default:
		return p, &backend.Error{Kind: backend.KindUnsupported, Backend: name, Message: fmt.Sprintf("mode %q", req.Mode)}
	}
	if req.Mode != backend.ModeServer && (len(req.Tools) > 0 || req.ToolChoice != "" || req.ParallelToolCalls != nil) {
		return p, &backend.Error{Kind: backend.KindUnsupported, Backend: name,
			Message: fmt.Sprintf("tools in the API's tools field are for server mode, not %s mode", req.Mode)}
	}
	if req.Mode == backend.ModeServer && req.ParallelToolCalls != nil {
		return p, &backend.Error{Kind: backend.KindUnsupported, Backend: name, Message: "Ollama's /api/chat has no parallel_tool_calls"}
	}
	if req.Mode == backend.ModeServer && req.ToolChoice != "" && req.ToolChoice != "auto" {
		return p, &backend.Error{Kind: backend.KindUnsupported, Backend: name,
			Message: fmt.Sprintf("Ollama's /api/chat has no tool_choice; %q cannot be asked", req.ToolChoice)}
	}
	p.numCtx, err = b.budget(size, req.Options, info.ContextLength)
	return p, err
}

// stripBOS removes the BOS token text from the front of a raw prompt when
// the model's tokenizer adds one itself: Ollama v0.6.5 tokenizes raw
// prompts with add_special=true and parse_special=true, so a rendered BOS
// plus the tokenizer's own would reach the model twice.
func stripBOS(prompt string, info ModelInfo) string {
	if info.AddsBOS && info.BOS != "" {
		return strings.TrimPrefix(prompt, info.BOS)
	}
	return prompt
}

// bosNote is the Response note of a stripped BOS.
func bosNote(bos string) string {
	return fmt.Sprintf("stripped the rendered BOS %q from the raw prompt: the model's tokenizer adds its own", bos)
}

// perMessageOverhead bounds the template's tokens around one message.
const perMessageOverhead = 16

// messages converts the conversation for /api/chat (see chatwire: text
// only, tools never in the tools field, developer sent as system).
func messages(in []chat.Message) ([]api.Message, []string, error) {
	msgs, notes, err := chatwire.Convert(name, in)
	if err != nil {
		return nil, nil, err
	}
	out := make([]api.Message, len(msgs))
	for i, m := range msgs {
		out[i] = api.Message{Role: m.Role, Content: m.Content, ToolName: m.Name}
	}
	return out, notes, nil
}

// options builds Ollama's options map; nil pointers stay unset.
func options(req backend.Request, numCtx int) map[string]any {
	o := map[string]any{"num_ctx": numCtx}
	if v := req.Options.Temperature; v != nil {
		o["temperature"] = *v
	}
	if v := req.Options.TopP; v != nil {
		o["top_p"] = *v
	}
	if v := req.Options.TopK; v != nil {
		o["top_k"] = *v
	}
	if v := req.Options.Seed; v != nil {
		o["seed"] = *v
	}
	if req.Options.MaxTokens > 0 {
		o["num_predict"] = req.Options.MaxTokens
	}
	if len(req.Stop) > 0 {
		o["stop"] = req.Stop
	}
	return o
}

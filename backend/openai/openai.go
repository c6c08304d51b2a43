package openai

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/toolharness/toolharness/backend"
	"github.com/toolharness/toolharness/backend/internal/chatwire"
	"github.com/toolharness/toolharness/backend/internal/transport"
	"github.com/toolharness/toolharness/chat"
)

const name = "openai"

// Defaults of Config.
const (
	DefaultStallTimeout = 2 * time.Minute
	DefaultAttempts     = 3
	DefaultBackoff      = 250 * time.Millisecond
)

// Quirks are the ways a server departs from the OpenAI API that the
// backend must know about. The zero value is a server that honours both
// endpoints fully (vLLM, SGLang, llama.cpp, LM Studio).
type Quirks struct {
	// CompletionsTemplated: /v1/completions wraps the prompt in the
	// model's chat template instead of completing it verbatim, so the
	// backend cannot do raw mode (Capabilities.Raw is false).
	CompletionsTemplated bool
	// NoSchemaCompletions, NoSchemaChat: the endpoint ignores
	// response_format; a request with Format is refused as unsupported
	// rather than silently unconstrained.
	NoSchemaCompletions bool
	NoSchemaChat        bool
}

// OllamaQuirks are those of Ollama's /v1 (v0.6.5, read from its source
// and checked by this package's tests): /v1/completions applies the chat
// template and has no response_format; /v1/chat/completions honours
// response_format json_schema.
func OllamaQuirks() Quirks {
	return Quirks{CompletionsTemplated: true, NoSchemaCompletions: true}
}

// Config configures a Backend. Zero fields take the defaults.
type Config struct {
	// BaseURL is the API root that /completions and /chat/completions are
	// appended to, e.g. http://127.0.0.1:8000/v1.
	BaseURL string
	// APIKey, when set, is sent as "Authorization: Bearer <key>".
	APIKey string
	// HTTPClient carries the requests; nil means a client without a
	// timeout (streams are bounded by StallTimeout instead).
	HTTPClient *http.Client
	// StallTimeout ends a request that receives nothing for this long,
	// the wait for the first byte (prompt processing) included.
	StallTimeout time.Duration
	// Attempts is the number of tries of a request that failed before
	// anything was delivered (retryable failures only); 1 disables retries.
	Attempts int
	// Backoff is the wait before the first retry; it doubles each retry.
	Backoff time.Duration
	Quirks  Quirks
}

// Backend streams completions from an OpenAI-compatible server with
// server-sent events: raw mode uses /completions, chat mode
// /chat/completions.
type Backend struct {
	cfg  Config
	base string
}

var _ backend.Backend = (*Backend)(nil)

// New returns a Backend for cfg.BaseURL.
func New(cfg Config) (*Backend, error) {
	u, err := url.Parse(cfg.BaseURL)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return nil, fmt.Errorf("openai: bad base URL %q (want e.g. http://127.0.0.1:8000/v1)", cfg.BaseURL)
	}
	cfg.HTTPClient = transport.HTTPClient(cfg.HTTPClient)
	cfg.StallTimeout = transport.Or(cfg.StallTimeout, DefaultStallTimeout)
	cfg.Attempts = transport.Or(cfg.Attempts, DefaultAttempts)
	cfg.Backoff = transport.Or(cfg.Backoff, DefaultBackoff)
	return &Backend{cfg: cfg, base: strings.TrimRight(cfg.BaseURL, "/")}, nil
}

// Capabilities of the server as far as Quirks tell. AddsBOS is false: the
// OpenAI API gives no way to know, and servers differ (llama.cpp adds BOS
// to /v1/completions prompts when the model asks for it); render for the
// server at hand.
func (b *Backend) Capabilities() backend.Capabilities {
	q := b.cfg.Quirks
	return backend.Capabilities{
		Raw:       !q.CompletionsTemplated,
		Chat:      true,
		Constrain: !q.NoSchemaChat || !q.NoSchemaCompletions,
		// Server mode: /chat/completions with tools, the server's parser.
		ServerTools: true,
	}
}

// Generate runs req, retrying with backoff while nothing was delivered and
// the failure is transient (see backend.Retryable).
func (b *Backend) Generate(ctx context.Context, req backend.Request, onChunk func(string) error) (backend.Response, error) {
	if req.Mode == backend.ModeServer {
		return b.generateServer(ctx, req, onChunk)
	}
	path, body, notes, err := b.body(req)
	if err != nil {
		return backend.Response{}, err
	}
	retry := transport.Retry{Backend: name, Attempts: b.cfg.Attempts, Backoff: b.cfg.Backoff}
	var resp backend.Response
	err = retry.Do(ctx, func() error {
		var err error
		resp, err = b.once(ctx, path, body, onChunk)
		return err
	})
	resp.Notes = notes
	return resp, err
}

// generateServer runs a server-mode request (server.go), with the same
// retries as the other modes.
func (b *Backend) generateServer(ctx context.Context, req backend.Request, onChunk func(string) error) (backend.Response, error) {
	if req.Model == "" {
		return backend.Response{}, &backend.Error{Kind: backend.KindUnsupported, Backend: name, Message: "no model in request"}
	}
	if req.Grammar != "" {
		return backend.Response{}, &backend.Error{Kind: backend.KindUnsupported, Backend: name,
			Message: "an OpenAI-compatible server cannot take a GBNF grammar; constrain with Format (a JSON Schema) instead"}
	}
	// A caller with a callback gets the answer streamed; one without, whole.
	stream := onChunk != nil
	body, notes, err := b.serverBody(req, stream)
	if err != nil {
		return backend.Response{}, err
	}
	retry := transport.Retry{Backend: name, Attempts: b.cfg.Attempts, Backoff: b.cfg.Backoff}
	var resp backend.Response
	err = retry.Do(ctx, func() error {
		var err error
		resp, err = b.serverOnce(ctx, body, stream, onChunk)
		return err
	})
	resp.Notes = notes
	return resp, err
}

type (
	wireRequest struct {
		Model          string          `json:"model"`
		Prompt         *string         `json:"prompt,omitempty"`
		Messages       []wireMessage   `json:"messages,omitempty"`
		Stream         bool            `json:"stream"`
		StreamOptions  streamOptions   `json:"stream_options"`
		MaxTokens      int             `json:"max_tokens,omitempty"`
		Temperature    *float64        `json:"temperature,omitempty"`
		TopP           *float64        `json:"top_p,omitempty"`
		TopK           *int            `json:"top_k,omitempty"` // not OpenAI's, but vLLM, SGLang and llama.cpp take it
		Seed           *int            `json:"seed,omitempty"`
		Stop           []string        `json:"stop,omitempty"`
		ResponseFormat *responseFormat `json:"response_format,omitempty"`
	}
	streamOptions struct {
		IncludeUsage bool `json:"include_usage"`
	}
	wireMessage struct {
		Role       string `json:"role"`
		Content    string `json:"content"`
		Name       string `json:"name,omitempty"`
		ToolCallID string `json:"tool_call_id,omitempty"`
	}
	responseFormat struct {
		Type       string     `json:"type"`
		JSONSchema jsonSchema `json:"json_schema"`
	}
	jsonSchema struct {
		Name   string          `json:"name"`
		Schema json.RawMessage `json:"schema"`
		Strict bool            `json:"strict"`
	}
)

// body builds the endpoint path and JSON body of req, and the notes of
// what it changed on the way (Response.Notes).
func (b *Backend) body(req backend.Request) (path string, data []byte, notes []string, err error) {
	unsupported := func(msg string) error {
		return &backend.Error{Kind: backend.KindUnsupported, Backend: name, Message: msg}
	}
	if req.Model == "" {
		return "", nil, nil, unsupported("no model in request")
	}
	if len(req.Tools) > 0 || req.ToolChoice != "" || req.ParallelToolCalls != nil {
		return "", nil, nil, unsupported(fmt.Sprintf("tools in the API's tools field are for server mode, not %s mode", req.Mode))
	}
	if req.Grammar != "" {
		// vLLM and llama.cpp take grammars under names of their own; the
		// OpenAI API has none, so a grammar is refused rather than dropped.
		return "", nil, nil, unsupported("an OpenAI-compatible server cannot take a GBNF grammar; constrain with Format (a JSON Schema) instead")
	}
	w := wireRequest{
		Model: req.Model, Stream: true, StreamOptions: streamOptions{IncludeUsage: true},
		MaxTokens: req.Options.MaxTokens, Temperature: req.Options.Temperature, TopP: req.Options.TopP,
		TopK: req.Options.TopK, Seed: req.Options.Seed, Stop: req.Stop,
	}
	noSchema := false
	switch req.Mode {
	case backend.ModeRaw:
		if req.Prompt == "" {
			return "", nil, nil, unsupported("raw mode needs a prompt")
		}
		path, w.Prompt, noSchema = "/completions", &req.Prompt, b.cfg.Quirks.NoSchemaCompletions
	case backend.ModeChat:
		if w.Messages, notes, err = messages(req.Messages); err != nil {
			return "", nil, nil, err
		}
		path, noSchema = "/chat/completions", b.cfg.Quirks.NoSchemaChat
	default:
		return "", nil, nil, unsupported(fmt.Sprintf("mode %q", req.Mode))
	}
	if len(req.Format) > 0 {
		if noSchema {
			return "", nil, nil, unsupported("this server ignores response_format on " + path + ": output cannot be constrained")
		}
		w.ResponseFormat = &responseFormat{Type: "json_schema", JSONSchema: jsonSchema{Name: "output", Schema: req.Format, Strict: true}}
	}
	if data, err = chat.Marshal(w); err != nil {
		return "", nil, nil, fmt.Errorf("openai: encode request: %w", err)
	}
	return path, data, notes, nil
}

// messages converts the conversation (see chatwire: text only, tools
// never in the tools field, developer sent as system).
func messages(in []chat.Message) ([]wireMessage, []string, error) {
	msgs, notes, err := chatwire.Convert(name, in)
	if err != nil {
		return nil, nil, err
	}
	out := make([]wireMessage, len(msgs))
	for i, m := range msgs {
		out[i] = wireMessage(m)
	}
	return out, notes, nil
}

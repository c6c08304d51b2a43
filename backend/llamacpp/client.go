package llamacpp

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/toolharness/toolharness/backend"
	"github.com/toolharness/toolharness/backend/internal/transport"
)

// Name is the backend name carried by every *backend.Error of this package.
const Name = "llamacpp"

// Defaults for the zero Config.
const (
	DefaultStallTimeout = 2 * time.Minute
	DefaultRetries      = 2
	DefaultBackoff      = 500 * time.Millisecond
)

// Config says how to reach one llama-server.
type Config struct {
	// BaseURL is the server's root, e.g. "http://127.0.0.1:8080" (plus the
	// --api-prefix when the server has one).
	BaseURL string
	// HTTPClient defaults to a client without an overall timeout: streams
	// are long, and StallTimeout bounds silence instead.
	HTTPClient *http.Client
	// APIKey is sent as a Bearer token when the server runs with --api-key.
	APIKey string
	// StallTimeout is the longest wait for the next byte of an answer
	// (DefaultStallTimeout when 0). A non-streamed request sends nothing
	// until it is done, so there it bounds the whole generation.
	StallTimeout time.Duration
	// Retries is how many times a failure that consumed nothing is retried
	// (DefaultRetries when 0, none when negative). Backoff is the first
	// wait, doubled each time (DefaultBackoff when 0).
	Retries int
	Backoff time.Duration
	// NonStreaming asks for the whole answer at once instead of SSE; the
	// callback then gets the text as one chunk.
	NonStreaming bool
	// NoContextCheck skips the /props + /tokenize check made before each
	// request (one extra round trip) that refuses prompts too long for n_ctx.
	NoContextCheck bool
	// KeepBOS sends the prompt unchanged even when it starts with the BOS
	// text and the server adds its own BOS.
	KeepBOS bool
}

// Client is a backend.Backend, backend.ContextSizer and
// backend.TokenCounter for one llama-server. It is safe for concurrent use.
type Client struct {
	cfg  Config
	http *http.Client
	info *serverInfo
}

// serverInfo caches what the client learns from the server once: the BOS
// it adds and n_ctx.
type serverInfo struct {
	mu       sync.Mutex
	bosKnown bool
	addsBOS  bool
	bosText  string
	nCtx     int
}

var (
	_ backend.Backend      = (*Client)(nil)
	_ backend.ContextSizer = (*Client)(nil)
	_ backend.TokenCounter = (*Client)(nil)
)

// New returns a client for the server at cfg.BaseURL. It does not contact
// the server; the first request probes what it needs.
func New(cfg Config) (*Client, error) {
	cfg.BaseURL = strings.TrimRight(strings.TrimSpace(cfg.BaseURL), "/")
	if cfg.BaseURL == "" {
		return nil, errors.New("llamacpp: empty server URL")
	}
	if !strings.HasPrefix(cfg.BaseURL, "http://") && !strings.HasPrefix(cfg.BaseURL, "https://") {
		return nil, fmt.Errorf("llamacpp: server URL %q must start with http:// or https://", cfg.BaseURL)
	}
	cfg.StallTimeout = transport.Or(cfg.StallTimeout, DefaultStallTimeout)
	switch {
	case cfg.Retries == 0:
		cfg.Retries = DefaultRetries
	case cfg.Retries < 0:
		cfg.Retries = 0
	}
	cfg.Backoff = transport.Or(cfg.Backoff, DefaultBackoff)
	return &Client{cfg: cfg, http: transport.HTTPClient(cfg.HTTPClient), info: &serverInfo{}}, nil
}

// Capabilities: raw prompts natively, chat through /apply-template,
// constrained decoding through json_schema (Request.Format) or a GBNF
// grammar (Request.Grammar), token-exact prompts (Request.TokenSpans as
// mixed arrays, Response.Tokens checked against /detokenize), server mode
// through /v1/chat/completions with tools (the server must run with
// --jinja; without it the server refuses tools, an error). AddsBOS is
// what the server
// said once probed, and true before (llama.cpp's usual case; a prompt
// starting with the BOS text is stripped either way).
func (c *Client) Capabilities() backend.Capabilities {
	c.info.mu.Lock()
	defer c.info.mu.Unlock()
	adds := true
	if c.info.bosKnown {
		adds = c.info.addsBOS
	}
	return backend.Capabilities{Raw: true, Chat: true, Constrain: true, AddsBOS: adds, TokenPrompt: true, ServerTools: true}
}

// Generate runs req through POST /completion, or in server mode POST
// /v1/chat/completions (server.go).
func (c *Client) Generate(ctx context.Context, req backend.Request, onChunk func(string) error) (backend.Response, error) {
	if req.Format != nil && req.Grammar != "" {
		return backend.Response{}, &backend.Error{Kind: backend.KindUnsupported, Backend: Name,
			Message: "a request cannot carry both a grammar and a JSON Schema format"}
	}
	if req.Mode == backend.ModeServer {
		return c.generateServer(ctx, req, onChunk)
	}
	if len(req.Tools) > 0 || req.ToolChoice != "" || req.ParallelToolCalls != nil {
		return backend.Response{}, &backend.Error{Kind: backend.KindUnsupported, Backend: Name,
			Message: fmt.Sprintf("tools in the API's tools field are for server mode, not %s mode", req.Mode)}
	}
	var prompt string
	var spans []backend.TokenSpan
	switch req.Mode {
	case backend.ModeRaw:
		prompt, spans = req.Prompt, req.TokenSpans
		if err := checkSpans(prompt, spans); err != nil {
			return backend.Response{}, err
		}
	case backend.ModeChat:
		p, err := c.applyTemplate(ctx, req.Messages)
		if err != nil {
			return backend.Response{}, err
		}
		prompt = p
	default:
		return backend.Response{}, &backend.Error{Kind: backend.KindUnsupported, Backend: Name,
			Message: fmt.Sprintf("unknown mode %q (want %q, %q or %q)", req.Mode, backend.ModeRaw, backend.ModeChat, backend.ModeServer)}
	}
	sent, notes, err := c.prepare(ctx, prompt, spans, req.Options)
	if err != nil {
		return backend.Response{Notes: notes}, err
	}
	// A caller that takes no stream gets the whole answer at once, and
	// with return_tokens every generated id: a stream sends none for a
	// token that ends inside a UTF-8 character.
	stream := !c.cfg.NonStreaming && !(onChunk == nil && req.ReturnTokens)
	body := completionRequest{
		Prompt:       sent,
		Stream:       stream,
		CachePrompt:  true,
		ReturnTokens: req.ReturnTokens && !stream, // a stream sends ids anyway
		Stop:         req.Stop,
		Temperature:  req.Options.Temperature,
		TopK:         req.Options.TopK,
		TopP:         req.Options.TopP,
		Seed:         req.Options.Seed,
		Grammar:      req.Grammar,
		JSONSchema:   req.Format,
	}
	if n := req.Options.MaxTokens; n > 0 {
		body.NPredict = &n
	}
	var rep answer
	err = c.retry().Do(ctx, func() error {
		var err error
		rep, err = c.complete(ctx, body, onChunk)
		return err
	})
	resp := rep.Response
	resp.Notes = notes
	resp.Tokens = nil
	if err == nil && req.ReturnTokens {
		// The generation itself succeeded: a check that fails costs only
		// the ids (the turn goes back as text), never the answer.
		exact, n, why, terr := c.exactTokens(ctx, rep.pieces, resp.Text)
		if terr != nil {
			why = fmt.Sprintf("could not check the generated token ids with /detokenize (%v): this turn goes back to the server as text", terr)
		}
		resp.Tokens = exact
		if n < len(resp.Text) {
			resp.TokenText = n
		}
		if why != "" {
			resp.Notes = append(resp.Notes, why)
		}
	}
	return resp, err
}

// prepare strips a BOS text the server would double, saying so in the
// notes, builds the prompt to send (a string, or a mixed array when token
// spans are given) and refuses a prompt that would not fit the context
// window, counted exactly by the server's /tokenize of that same prompt.
func (c *Client) prepare(ctx context.Context, prompt string, spans []backend.TokenSpan, opts backend.Options) (any, []string, error) {
	maxTokens := opts.MaxTokens
	adds, bos, err := c.bos(ctx)
	if err != nil {
		return nil, nil, err
	}
	var notes []string
	if adds && bos != "" && !c.cfg.KeepBOS && strings.HasPrefix(prompt, bos) {
		prompt = prompt[len(bos):]
		spans = shiftSpans(spans, len(bos))
		notes = append(notes, fmt.Sprintf("stripped the rendered BOS %q from the prompt: the server adds its own", bos))
	}
	sent := mixedPrompt(prompt, spans)
	if c.cfg.NoContextCheck {
		return sent, notes, nil
	}
	nCtx, err := c.ContextSize(ctx, "")
	if err != nil {
		return nil, notes, err
	}
	if opts.NumCtx > 0 && opts.NumCtx != nCtx {
		// llama-server fixes the window at start (-c, divided among the
		// slots); a per-request size is not a thing it takes.
		notes = append(notes, fmt.Sprintf("ignored the requested context window of %d tokens: llama-server's is fixed at start, %d tokens per slot (its -c / --parallel)", opts.NumCtx, nCtx))
	}
	n, err := c.tokenize(ctx, sent, true)
	if err != nil {
		return nil, notes, err
	}
	room := maxTokens
	if room <= 0 {
		room = 1 // at least the first generated token must fit
	}
	if nCtx > 0 && n+room > nCtx {
		msg := fmt.Sprintf("prompt of %d tokens exceeds the context window of %d tokens", n, nCtx)
		if maxTokens > 0 {
			msg = fmt.Sprintf("prompt of %d tokens plus %d to generate exceeds the context window of %d tokens", n, maxTokens, nCtx)
		}
		return nil, notes, &backend.Error{Kind: backend.KindContextOverflow, Backend: Name, Message: msg}
	}
	return sent, notes, nil
}

// retry is the client's retry policy: Retries more tries of a failure
// that consumed nothing and is transient (backend.Retryable).
func (c *Client) retry() transport.Retry {
	return transport.Retry{Backend: Name, Attempts: c.cfg.Retries + 1, Backoff: c.cfg.Backoff, NameLast: true}
}

package serve

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"
)

// Config configures a Server.
type Config struct {
	Engine *Engine
	// Metrics, when set, are served at /metrics.
	Metrics *Metrics
	Log     *slog.Logger
	// APIKey, when set, must come with every request but /healthz, as a
	// bearer token, x-api-key or (Ollama clients) nothing else.
	APIKey string
	// MaxBody caps a request body in bytes (default 32 MiB).
	MaxBody int64
	// Timeout bounds one request, generation included (default 10 min).
	Timeout time.Duration
	// MaxConcurrent bounds the requests served at once; past it a request
	// gets 429 and Retry-After (default 8).
	MaxConcurrent int
	// Ollama, when set, is the Ollama server /api/tags, /api/show and
	// /api/version are passed to.
	Ollama string
}

// Server is the HTTP front of an Engine: the OpenAI, Anthropic and Ollama
// APIs, /healthz and /metrics.
type Server struct {
	cfg   Config
	log   *slog.Logger
	slots chan struct{}
	mux   *http.ServeMux
}

// NewServer returns the server's handler.
func NewServer(cfg Config) (*Server, error) {
	if cfg.Engine == nil {
		return nil, errors.New("serve: a server needs an engine")
	}
	if cfg.MaxBody <= 0 {
		cfg.MaxBody = 32 << 20
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 10 * time.Minute
	}
	if cfg.MaxConcurrent <= 0 {
		cfg.MaxConcurrent = 8
	}
	s := &Server{cfg: cfg, log: cfg.Log, slots: make(chan struct{}, cfg.MaxConcurrent), mux: http.NewServeMux()}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	s.mux.HandleFunc("POST /v1/chat/completions", s.guard(apiOpenAI, s.openaiChat))
	s.mux.HandleFunc("GET /v1/models", s.guard(apiOpenAI, s.openaiModels))
	s.mux.HandleFunc("POST /v1/messages", s.guard(apiAnthropic, s.anthropicMessages))
	s.mux.HandleFunc("POST /v1/messages/count_tokens", s.guard(apiAnthropic, s.anthropicCountTokens))
	s.mux.HandleFunc("POST /api/chat", s.guard(apiOllama, s.ollamaChat))
	for _, p := range []string{"GET /api/tags", "POST /api/show", "GET /api/version"} {
		s.mux.HandleFunc(p, s.guard(apiOllama, s.ollamaPassthrough))
	}
	s.mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = io.WriteString(w, "ok\n")
	})
	if cfg.Metrics != nil {
		s.mux.Handle("GET /metrics", s.authOnly(apiOpenAI, cfg.Metrics.Handler()))
	}
	return s, nil
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

// The APIs, as metrics label them and errors are shaped.
const (
	apiOpenAI    = "openai"
	apiAnthropic = "anthropic"
	apiOllama    = "ollama"
)

// authorized checks the API key in constant time, from whichever header
// the caller's SDK puts it in.
func (s *Server) authorized(r *http.Request) bool {
	if s.cfg.APIKey == "" {
		return true
	}
	got := r.Header.Get("x-api-key")
	if a := r.Header.Get("Authorization"); got == "" && a != "" {
		got, _ = strings.CutPrefix(a, "Bearer ")
	}
	return subtle.ConstantTimeCompare([]byte(got), []byte(s.cfg.APIKey)) == 1
}

func (s *Server) authOnly(api string, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !s.authorized(r) {
			writeError(w, api, http.StatusUnauthorized, errAuth, "", "a valid API key is required (Authorization: Bearer KEY or x-api-key)")
			return
		}
		h.ServeHTTP(w, r)
	})
}

// guard applies what every API request goes through: the key, the
// concurrency bound, the body cap and the deadline.
func (s *Server) guard(api string, h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if !s.authorized(r) {
			s.cfg.Metrics.request(api, "", "unauthorized", 0)
			writeError(w, api, http.StatusUnauthorized, errAuth, "", "a valid API key is required (Authorization: Bearer KEY or x-api-key)")
			return
		}
		select {
		case s.slots <- struct{}{}:
			defer func() { <-s.slots }()
		default:
			s.cfg.Metrics.request(api, "", "busy", 0)
			w.Header().Set("Retry-After", "1")
			writeError(w, api, http.StatusTooManyRequests, errBusy, "", fmt.Sprintf("the server is serving %d requests, its limit; retry shortly", cap(s.slots)))
			return
		}
		s.cfg.Metrics.flight(1)
		defer s.cfg.Metrics.flight(-1)
		// The cause names the deadline, so that the caller's error says
		// which limit ended its request.
		ctx, cancel := context.WithTimeoutCause(r.Context(), s.cfg.Timeout,
			fmt.Errorf("serve: the request ran past the server's deadline of %s (serve --timeout)", s.cfg.Timeout))
		defer cancel()
		r = r.WithContext(ctx)
		r.Body = http.MaxBytesReader(w, r.Body, s.cfg.MaxBody)
		h(w, r)
	}
}

// finish counts and logs a finished turn.
func (s *Server) finish(api, model string, start time.Time, res Result, err error) {
	out := outcome(res, err)
	s.cfg.Metrics.request(api, model, out, time.Since(start))
	attrs := []any{"api", api, "model", model, "outcome", out, "ms", time.Since(start).Milliseconds(),
		"prompt_tokens", res.Usage.PromptTokens, "completion_tokens", res.Usage.CompletionTokens, "retries", res.Retries, "replayed_turns", res.Replayed}
	if res.Usage.CachedKnown {
		attrs = append(attrs, "cached_tokens", res.Usage.CachedTokens)
	}
	switch {
	case err != nil:
		s.log.Warn("serve: request failed", append(attrs, "err", err)...)
	case res.Invalid != "":
		s.log.Warn("serve: request answered without its invalid calls", append(attrs, "invalid", res.Invalid)...)
	default:
		s.log.Info("serve: request", attrs...)
	}
}

// readBody reads a capped body; an oversized one is the caller's error.
func readBody(r *http.Request) ([]byte, *RequestError) {
	data, err := io.ReadAll(r.Body)
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return nil, &RequestError{Field: "body", Message: fmt.Sprintf("the request body exceeds the server's limit of %d bytes", tooBig.Limit)}
		}
		return nil, &RequestError{Field: "body", Message: "the request body could not be read: " + err.Error()}
	}
	return data, nil
}

// outcome is a finished request as metrics count it.
func outcome(res Result, err error) string {
	var re *RequestError
	switch {
	case errors.As(err, &re):
		return "bad_request"
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return "canceled"
	case err != nil:
		return "upstream_error"
	case res.Invalid != "":
		return "invalid_dropped"
	case len(res.Calls) > 0:
		return "tool_calls"
	}
	return "ok"
}

// failure is the status and error kind of a failed turn.
func failure(err error) (int, errKind) {
	var re *RequestError
	switch {
	case errors.As(err, &re):
		if re.Field == "body" && strings.Contains(re.Message, "limit") {
			return http.StatusRequestEntityTooLarge, errInvalid
		}
		return http.StatusBadRequest, errInvalid
	case errors.Is(err, context.DeadlineExceeded):
		return http.StatusGatewayTimeout, errUpstream
	}
	return http.StatusBadGateway, errUpstream
}

// fieldOf names the field of a request error ("" for others).
func fieldOf(err error) string {
	var re *RequestError
	if errors.As(err, &re) {
		return re.Field
	}
	return ""
}

// invalidHeader carries why the model's calls reached no client.
const invalidHeader = "X-Toolharness-Invalid-Call"

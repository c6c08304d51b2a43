package ollamatest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ollama/ollama/api"
)

// Environment variables the harness reads.
const (
	EnvBin  = "TOOLHARNESS_OLLAMA_BIN"  // path of the ollama binary
	EnvHost = "TOOLHARNESS_OLLAMA_HOST" // use this running server instead of starting one
)

// ChatMLTemplate is the Go template the tiny model is registered with, so
// that /api/chat and /v1/chat/completions render ChatML turns.
const ChatMLTemplate = `{{- range .Messages }}<|im_start|>{{ .Role }}
{{ .Content }}<|im_end|>
{{ end }}<|im_start|>assistant
`

const startTimeout = 60 * time.Second

// Option configures New and Start.
type Option func(*config)

type config struct {
	spec   ModelSpec
	env    map[string]string
	params map[string]any
	owned  bool
	warm   bool
}

// WithSpec registers a model built from spec instead of DefaultSpec().
func WithSpec(spec ModelSpec) Option { return func(c *config) { c.spec = spec } }

// WithEnv sets an environment variable of the started server (for example
// OLLAMA_NUM_PARALLEL). It has no effect on an external server.
func WithEnv(key, value string) Option { return func(c *config) { c.env[key] = value } }

// WithParameters registers the model with these parameters (what a
// Modelfile's PARAMETER lines set: num_ctx, temperature, stop, …) over the
// defaults (stop <|im_end|>, num_ctx NumCtx(spec), num_thread 1). A request's own
// options still win; the parameters matter where a request cannot carry
// them, as on /v1 (no num_ctx per request). The model then gets a name of
// its own (Server.Model), so it never clashes with the default model on a
// shared server. Several WithParameters add up; a later key wins.
func WithParameters(params map[string]any) Option {
	return func(c *config) {
		if c.params == nil {
			c.params = map[string]any{}
		}
		for k, v := range params {
			c.params[k] = v
		}
	}
}

// WithOwnProcess starts a server even when TOOLHARNESS_OLLAMA_HOST is set:
// tests that kill the server or read its log need one of their own.
func WithOwnProcess() Option { return func(c *config) { c.owned = true } }

// WithoutWarmup skips loading the model into memory before New returns.
func WithoutWarmup() Option { return func(c *config) { c.warm = false } }

// Server is a running Ollama serving the tiny model.
type Server struct {
	// URL is the base URL, e.g. http://127.0.0.1:40123.
	URL string
	// Model is the name the tiny model is registered under.
	Model string

	external bool
	bin      string
	dir      string // temp dir: models, home, the GGUF; removed by Close
	addr     string // host:port
	env      []string
	log      LogBuffer

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{} // closed when cmd has exited
}

// ModelsDir is the server's OLLAMA_MODELS directory (manifests and
// blobs), or "" for an external server (TOOLHARNESS_OLLAMA_HOST).
func (s *Server) ModelsDir() string {
	if s.external {
		return ""
	}
	return filepath.Join(s.dir, "models")
}

// Start starts a server (or connects to TOOLHARNESS_OLLAMA_HOST) for one
// test and closes it when the test ends. Any failure is fatal, with a
// message that says how to fix it.
func Start(tb testing.TB, opts ...Option) *Server {
	tb.Helper()
	s, err := New(opts...)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if tb.Failed() && !s.external {
			tb.Logf("ollama server log (tail):\n%s", Tail(s.Log(), 6000))
		}
		if err := s.Close(); err != nil {
			tb.Error(err)
		}
	})
	return s
}

// New starts a server (or connects to TOOLHARNESS_OLLAMA_HOST), registers
// the tiny model and loads it. The caller must Close it; use it from
// TestMain or through Lazy.
func New(opts ...Option) (*Server, error) {
	c := config{spec: DefaultSpec(), env: map[string]string{}, warm: true}
	for _, o := range opts {
		o(&c)
	}
	dir, err := os.MkdirTemp("", "ollamatest-")
	if err != nil {
		return nil, fmt.Errorf("ollamatest: %w", err)
	}
	s := &Server{dir: dir}
	if err := s.setUp(c); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

func (s *Server) setUp(c config) error {
	if host := os.Getenv(EnvHost); host != "" && !c.owned {
		u, err := hostURL(host)
		if err != nil {
			return err
		}
		s.URL, s.external = u, true
	} else {
		bin, err := FindBinary()
		if err != nil {
			return err
		}
		s.bin = bin
		port, err := FreePort()
		if err != nil {
			return err
		}
		s.addr = fmt.Sprintf("127.0.0.1:%d", port)
		s.URL = "http://" + s.addr
		s.env = serverEnv(s.dir, s.addr, c.env)
		if err := s.spawn(); err != nil {
			return err
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	if err := s.register(ctx, c.spec, c.params); err != nil {
		return err
	}
	if c.warm {
		// An empty prompt makes Ollama load the model and return.
		err := s.Client().Generate(ctx, &api.GenerateRequest{Model: s.Model}, func(api.GenerateResponse) error { return nil })
		if err != nil {
			return fmt.Errorf("ollamatest: load model: %w%s", err, s.logHint())
		}
	}
	return nil
}

// FindBinary locates the ollama binary: $TOOLHARNESS_OLLAMA_BIN, else the one
// `make ollama` builds (CacheDir()/ollama/bin/ollama), else ollama on PATH.
func FindBinary() (string, error) {
	if p := os.Getenv(EnvBin); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("ollamatest: %s=%s: %w (run `make ollama` to build it)", EnvBin, p, err)
		}
		return p, nil
	}
	if dir, err := CacheDir(); err == nil {
		p := filepath.Join(dir, "ollama", "bin", "ollama")
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	if p, err := exec.LookPath("ollama"); err == nil {
		return p, nil
	}
	return "", errors.New("ollamatest: no ollama binary: run `make ollama` (builds Ollama v0.6.5 into ~/.cache/toolharness/ollama/bin), " +
		"or set " + EnvBin + " to an ollama binary, or " + EnvHost + " to a running server")
}

// CacheDir is where `make ollama` and `make llamacpp` put what they build:
// $TOOLHARNESS_CACHE, else $XDG_CACHE_HOME/toolharness, else ~/.cache/toolharness.
// It lies outside the clone so that a fresh clone on the same machine reuses it.
func CacheDir() (string, error) {
	if d := os.Getenv("TOOLHARNESS_CACHE"); d != "" {
		return d, nil
	}
	if d := os.Getenv("XDG_CACHE_HOME"); d != "" {
		return filepath.Join(d, "toolharness"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("ollamatest: no cache directory: %w", err)
	}
	return filepath.Join(home, ".cache", "toolharness"), nil
}

func hostURL(host string) (string, error) {
	if !strings.Contains(host, "://") {
		host = "http://" + host
	}
	u, err := url.Parse(host)
	if err != nil || u.Host == "" {
		return "", fmt.Errorf("ollamatest: %s=%q is not a host or URL", EnvHost, host)
	}
	if u.Port() == "" {
		u.Host = net.JoinHostPort(u.Hostname(), "11434")
	}
	return strings.TrimRight(u.String(), "/"), nil
}

// FreePort is a loopback TCP port nothing listens on (a server started
// on it at once gets it).
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("ollamatest: find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// serverEnv drops the caller's OLLAMA_* settings (a developer's
// OLLAMA_HOST or OLLAMA_MODELS must not leak in) and isolates the server:
// its own models dir and home (Ollama writes its key pair there).
func serverEnv(dir, addr string, extra map[string]string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "OLLAMA_") && !strings.HasPrefix(kv, "HOME=") {
			env = append(env, kv)
		}
	}
	set := map[string]string{
		"HOME":                filepath.Join(dir, "home"),
		"OLLAMA_HOST":         addr,
		"OLLAMA_MODELS":       filepath.Join(dir, "models"),
		"OLLAMA_DEBUG":        "1", // prints "loading cache slot … used=N remaining=M"
		"OLLAMA_NUM_PARALLEL": "1",
		"OLLAMA_KEEP_ALIVE":   "24h",
		"OLLAMA_NOPRUNE":      "1",
	}
	for k, v := range extra {
		set[k] = v
	}
	for k, v := range set {
		env = append(env, k+"="+v)
	}
	return env
}

// spawn starts `ollama serve` in its own process group (so Kill also ends
// the runner it starts) and waits until it answers.
func (s *Server) spawn() error {
	for _, d := range []string{"home", "models"} {
		if err := os.MkdirAll(filepath.Join(s.dir, d), 0o755); err != nil {
			return fmt.Errorf("ollamatest: %w", err)
		}
	}
	cmd := exec.Command(s.bin, "serve")
	cmd.Env = s.env
	cmd.Stdout = &s.log
	cmd.Stderr = &s.log
	// Pdeathsig: the server dies with the test binary even when it is
	// killed before its cleanups run.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("ollamatest: start %s serve: %w (run `make ollama`)", s.bin, err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	s.mu.Lock()
	s.cmd, s.done = cmd, done
	s.mu.Unlock()

	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	for {
		if err := s.Client().Heartbeat(ctx); err == nil {
			return nil
		}
		select {
		case <-done:
			return fmt.Errorf("ollamatest: ollama serve exited at start-up%s", s.logHint())
		case <-ctx.Done():
			return fmt.Errorf("ollamatest: ollama serve did not answer within %v%s", startTimeout, s.logHint())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// register writes the tiny GGUF, uploads it as a blob and creates the
// model through the API (the same path for a started and an external
// server), with the default parameters overridden by params.
func (s *Server) register(ctx context.Context, spec ModelSpec, params map[string]any) error {
	path := filepath.Join(s.dir, "tiny.gguf")
	if err := WriteModel(path, spec); err != nil {
		return err
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("ollamatest: %w", err)
	}
	sum := sha256.Sum256(data)
	digest := "sha256:" + hex.EncodeToString(sum[:])
	name, merged, err := modelName(sum, spec, params)
	if err != nil {
		return err
	}
	s.Model = name
	c := s.Client()
	if err := c.CreateBlob(ctx, digest, bytes.NewReader(data)); err != nil {
		return fmt.Errorf("ollamatest: upload model blob to %s: %w%s", s.URL, err, s.logHint())
	}
	stream := false
	req := &api.CreateRequest{
		Model:      s.Model,
		Stream:     &stream,
		Files:      map[string]string{"tiny.gguf": digest},
		Template:   ChatMLTemplate,
		Parameters: merged,
	}
	if err := c.Create(ctx, req, func(api.ProgressResponse) error { return nil }); err != nil {
		return fmt.Errorf("ollamatest: create model %s: %w%s", s.Model, err, s.logHint())
	}
	return nil
}

// MaxNumCtx is backend/ollama.DefaultMaxNumCtx (that package's tests
// check they agree; importing it here would make an import cycle of its
// tests).
const MaxNumCtx = 16384

// NumCtx is the num_ctx a model of spec is registered with: what
// backend/ollama picks for it when a request sets none (its window capped
// at MaxNumCtx), so that the warm-up load is the session's only one
// (Ollama reloads a model whenever num_ctx changes).
func NumCtx(spec ModelSpec) int { return min(spec.ContextLength, MaxNumCtx) }

// defaultParameters are the parameters the tiny model is registered with.
func defaultParameters(spec ModelSpec) map[string]any {
	return map[string]any{
		"stop":    []string{"<|im_end|>"},
		"num_ctx": NumCtx(spec),
		// num_thread 1: with two threads, llama.cpp's threads spin at a
		// barrier after every op, which on a busy machine (tests of other
		// packages running alongside) made generation 10-50x slower.
		"num_thread": 1,
	}
}

// modelName names the model after its GGUF (sum) and, when params are
// given, after the parameters too, and returns the parameters to register.
func modelName(sum [sha256.Size]byte, spec ModelSpec, params map[string]any) (string, map[string]any, error) {
	name := "toolharness-tiny:" + hex.EncodeToString(sum[:4])
	merged := defaultParameters(spec)
	if len(params) == 0 {
		return name, merged, nil
	}
	for k, v := range params {
		merged[k] = v
	}
	// encoding/json sorts map keys: the same parameters, the same name.
	enc, err := json.Marshal(merged)
	if err != nil {
		return "", nil, fmt.Errorf("ollamatest: model parameters: %w", err)
	}
	psum := sha256.Sum256(enc)
	return name + "-" + hex.EncodeToString(psum[:4]), merged, nil
}

// Client is an Ollama API client for this server.
func (s *Server) Client() *api.Client {
	u, _ := url.Parse(s.URL) // s.URL is built by this package and always parses
	return api.NewClient(u, http.DefaultClient)
}

// External reports whether this is a server the harness did not start
// (TOOLHARNESS_OLLAMA_HOST): it has no log and cannot be killed.
func (s *Server) External() bool { return s.external }

// Kill ends the server and its runner abruptly (SIGKILL), as a crash
// would. Restart brings it back on the same address.
func (s *Server) Kill() error {
	if s.external {
		return errors.New("ollamatest: cannot kill an external server (use WithOwnProcess)")
	}
	s.mu.Lock()
	cmd, done := s.cmd, s.done
	s.cmd = nil
	s.mu.Unlock()
	if cmd == nil {
		return nil
	}
	// The negative pid signals the whole process group: serve and runner.
	if err := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("ollamatest: kill: %w", err)
	}
	<-done
	return nil
}

// Restart starts a killed server again on the same address with the same
// models; the model loads on the first request.
func (s *Server) Restart() error {
	if s.external {
		return errors.New("ollamatest: cannot restart an external server (use WithOwnProcess)")
	}
	if err := s.Kill(); err != nil {
		return err
	}
	return s.spawn()
}

// Close stops the server and removes its files.
func (s *Server) Close() error {
	var err error
	if !s.external {
		err = s.Kill()
	}
	if s.dir != "" {
		if rerr := os.RemoveAll(s.dir); rerr != nil && err == nil {
			err = fmt.Errorf("ollamatest: %w", rerr)
		}
	}
	return err
}

func (s *Server) logHint() string {
	if s.external {
		return ""
	}
	return "\nollama server log (tail):\n" + Tail(s.Log(), 3000)
}

// Tail is the last n bytes of s, marked as cut when it is.
func Tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}

// LogBuffer collects a server's stdout and stderr (Ollama's runner logs
// through the server's stderr); it is safe for concurrent use.
type LogBuffer struct {
	mu sync.Mutex
	b  []byte
}

func (l *LogBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.b = append(l.b, p...)
	return len(p), nil
}

// Len is how many bytes were written.
func (l *LogBuffer) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.b)
}

// Since is what was written after the first off bytes.
func (l *LogBuffer) Since(off int) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if off > len(l.b) {
		off = len(l.b)
	}
	return string(l.b[off:])
}

// WaitSince waits up to d until done holds for what was written after the
// first off bytes, and returns that text and whether done held. A server's
// log reaches its LogBuffer through a pipe, a little after the server's
// answer: a test reads what a request logged with this, not with Since.
func (l *LogBuffer) WaitSince(off int, d time.Duration, done func(log string) bool) (string, bool) {
	deadline := time.Now().Add(d)
	for {
		log := l.Since(off)
		if done(log) {
			return log, true
		}
		if time.Now().After(deadline) {
			return log, false
		}
		time.Sleep(20 * time.Millisecond)
	}
}

var _ io.Writer = (*LogBuffer)(nil)

// BrokenTemplate is the template of BrokenModel: it parses, but fails when
// executed on any message.
const BrokenTemplate = `{{ range .Messages }}{{ .Content.Foo }}{{ end }}`

// BrokenModel registers (once per call) a copy of the tiny model whose
// template fails at execution, and returns its name. Every /api/chat and
// /v1 request to it is answered by HTTP 500 with the template error as
// the message — a real server error for fault tests. (Raw /api/generate
// skips the template and still works.)
func (s *Server) BrokenModel(tb testing.TB) string {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	model := "toolharness-broken:" + strings.TrimPrefix(s.Model, "toolharness-tiny:")
	stream := false
	req := &api.CreateRequest{Model: model, From: s.Model, Template: BrokenTemplate, Stream: &stream}
	if err := s.Client().Create(ctx, req, func(api.ProgressResponse) error { return nil }); err != nil {
		tb.Fatalf("ollamatest: create %s: %v", model, err)
	}
	return model
}

// ToolsTemplate is the template of ToolsModel: ChatML with the tools in a
// system turn and each assistant call as a JSON object with "name" and
// "arguments" inside <tool_call> tags. Ollama v0.6.5 takes tools only for
// a model whose template refers to .Tools, and its own call parser learns
// the keys of a call by rendering a sample one through the range over
// .ToolCalls.
const ToolsTemplate = `{{- if .Tools }}<|im_start|>system
Tools:{{ range .Tools }} {{ json .Function }}{{ end }}<|im_end|>
{{ end }}{{- range .Messages }}<|im_start|>{{ .Role }}
{{ if .Content }}{{ .Content }}{{ end }}{{ range .ToolCalls }}<tool_call>
{"name": "{{ .Function.Name }}", "arguments": {{ .Function.Arguments }}}
</tool_call>{{ end }}<|im_end|>
{{ end }}<|im_start|>assistant
`

// ToolsModel registers (once per call) a copy of the server's model with
// ToolsTemplate and returns its name: /api/chat and /v1/chat/completions
// take tools for it and run Ollama's own call parser on its output.
func (s *Server) ToolsModel(tb testing.TB) string {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	model := "toolharness-tools:" + strings.TrimPrefix(s.Model, "toolharness-tiny:")
	stream := false
	req := &api.CreateRequest{Model: model, From: s.Model, Template: ToolsTemplate, Stream: &stream}
	if err := s.Client().Create(ctx, req, func(api.ProgressResponse) error { return nil }); err != nil {
		tb.Fatalf("ollamatest: create %s: %v", model, err)
	}
	return model
}

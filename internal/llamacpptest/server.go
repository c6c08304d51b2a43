package llamacpptest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/toolharness/toolharness/internal/ollamatest"
)

// startTimeout bounds the wait for the model to load (seconds on a quiet
// machine; the shared build machine is not one).
const startTimeout = 2 * time.Minute

// Option configures Start and New.
type Option func(*config)

type config struct {
	spec     *ollamatest.ModelSpec
	vocab    string // vocabulary name, "" for the byte vocabulary
	template string
	ctx      int
	args     []string
}

// WithVocab serves a model with llama.cpp's vocabulary name ("qwen2" by
// default; "llama-bpe", "phi-3", …).
func WithVocab(name string) Option { return func(c *config) { c.vocab = name } }

// WithByteVocab serves ollamatest's byte-vocabulary model (one token per
// byte), for a test that needs every byte to be one token.
func WithByteVocab() Option { return func(c *config) { c.vocab = "" } }

// WithSpec serves a model of spec (its ChatTemplate is replaced by
// WithChatTemplate's when both are given).
func WithSpec(spec ollamatest.ModelSpec) Option { return func(c *config) { c.spec = &spec } }

// WithChatTemplate writes tmpl into the model as tokenizer.chat_template
// (the template /props reports and /apply-template renders).
func WithChatTemplate(tmpl string) Option { return func(c *config) { c.template = tmpl } }

// WithContext sets the server's context window (-c; one slot, so it is
// the slot's n_ctx).
func WithContext(n int) Option { return func(c *config) { c.ctx = n } }

// WithArgs appends llama-server arguments (for example
// "--chat-template-file", path).
func WithArgs(args ...string) Option { return func(c *config) { c.args = append(c.args, args...) } }

// Server is a running llama-server.
type Server struct {
	// URL is the base URL, e.g. http://127.0.0.1:40123.
	URL string
	// ModelPath is the GGUF it serves.
	ModelPath string

	dir  string
	log  ollamatest.LogBuffer
	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{}
}

// Start starts a server for one test and closes it when the test ends;
// any failure is fatal, and a failed test prints the server's log tail.
func Start(tb testing.TB, opts ...Option) *Server {
	tb.Helper()
	s, err := New(opts...)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if tb.Failed() {
			tb.Logf("llama-server log (tail):\n%s", ollamatest.Tail(s.Log(), 4000))
		}
		if err := s.Close(); err != nil {
			tb.Error(err)
		}
	})
	return s
}

// New writes the model, starts llama-server on it and waits until the
// model is loaded. The caller must Close it.
func New(opts ...Option) (*Server, error) {
	c := config{vocab: "qwen2", ctx: 8192}
	for _, o := range opts {
		o(&c)
	}
	bin, err := FindBinary()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "llamacpptest-")
	if err != nil {
		return nil, fmt.Errorf("llamacpptest: %w", err)
	}
	s := &Server{dir: dir, ModelPath: filepath.Join(dir, "model.gguf")}
	if err := s.start(bin, c); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// FindBinary locates llama-server: $TOOLHARNESS_LLAMACPP_DIR/bin, else
// the build cache `make llamacpp` fills.
func FindBinary() (string, error) {
	dir, err := ollamatest.LlamacppDir()
	if err != nil {
		return "", err
	}
	p := filepath.Join(dir, "bin", "llama-server")
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("llamacpptest: no llama-server at %s: run `make llamacpp` (or set %s)", p, ollamatest.EnvLlamacppDir)
	}
	return p, nil
}

func (s *Server) start(bin string, c config) error {
	spec := ollamatest.DefaultSpec()
	switch {
	case c.spec != nil:
		spec = *c.spec
	case c.vocab != "":
		vf, err := ollamatest.VocabFile(c.vocab)
		if err != nil {
			return err
		}
		spec = ollamatest.VocabSpec(vf)
	}
	if c.template != "" {
		spec.ChatTemplate = c.template
	}
	if err := ollamatest.WriteModel(s.ModelPath, spec); err != nil {
		return err
	}
	port, err := ollamatest.FreePort()
	if err != nil {
		return err
	}
	s.URL = fmt.Sprintf("http://127.0.0.1:%d", port)
	args := append([]string{"-m", s.ModelPath, "--host", "127.0.0.1", "--port", strconv.Itoa(port),
		"-c", strconv.Itoa(c.ctx), "-np", "1", "-t", "1", "-tb", "1", "--cache-ram", "0", "--no-webui"}, c.args...)
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = &s.log, &s.log
	// Pdeathsig: the server dies with the test binary even when that is
	// killed before its cleanups run.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("llamacpptest: start %s: %w (run `make llamacpp`)", bin, err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	s.mu.Lock()
	s.cmd, s.done = cmd, done
	s.mu.Unlock()
	return s.waitReady(done)
}

// waitReady polls GET /health until it answers 200 (503 while the model
// loads).
func (s *Server) waitReady(done <-chan struct{}) error {
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.URL+"/health", nil)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-done:
			return fmt.Errorf("llamacpptest: llama-server exited at start-up%s; log tail:\n%s", firstError(s.Log()), ollamatest.Tail(s.Log(), 3000))
		case <-ctx.Done():
			return fmt.Errorf("llamacpptest: llama-server did not load the model within %v; log tail:\n%s", startTimeout, ollamatest.Tail(s.Log(), 3000))
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Log is everything the server wrote so far.
func (s *Server) Log() string { return s.log.Since(0) }

// WaitLog waits up to 10 s until done holds for the log written after its
// first mark bytes, and returns that text and whether done held: the log
// comes through a pipe, a little after the server's answer.
func (s *Server) WaitLog(mark int, done func(log string) bool) (string, bool) {
	return s.log.WaitSince(mark, 10*time.Second, done)
}

// Close stops the server and removes the model.
func (s *Server) Close() error {
	s.mu.Lock()
	cmd, done := s.cmd, s.done
	s.cmd = nil
	s.mu.Unlock()
	var err error
	if cmd != nil {
		if kerr := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); kerr != nil && !errors.Is(kerr, syscall.ESRCH) {
			err = fmt.Errorf("llamacpptest: kill: %w", kerr)
		}
		<-done
	}
	if rerr := os.RemoveAll(s.dir); rerr != nil && err == nil {
		err = fmt.Errorf("llamacpptest: %w", rerr)
	}
	return err
}

// Tokenize is the server's own tokenization of text (POST /tokenize,
// special tokens parsed, no BOS); any failure fails tb.
func (s *Server) Tokenize(tb testing.TB, text string) []int {
	tb.Helper()
	body, _ := json.Marshal(map[string]any{"content": text})
	resp, err := http.Post(s.URL+"/tokenize", "application/json", bytes.NewReader(body))
	if err != nil {
		tb.Fatalf("llamacpptest: /tokenize: %v", err)
	}
	defer resp.Body.Close()
	var out struct {
		Tokens []int `json:"tokens"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != http.StatusOK {
		tb.Fatalf("llamacpptest: /tokenize answered %s: %v", resp.Status, err)
	}
	return out.Tokens
}

// firstError is ": " and the first error line of a llama-server log (its
// level is E), or "" when it has none.
func firstError(log string) string {
	for _, l := range strings.Split(log, "\n") {
		if f := strings.Fields(l); len(f) > 2 && f[1] == "E" {
			return ": " + strings.Join(f[2:], " ")
		}
	}
	return ""
}

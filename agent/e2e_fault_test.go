package agent

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolharness/toolharness/backend"
	"github.com/toolharness/toolharness/backend/ollama"
	"github.com/toolharness/toolharness/chat"
	"github.com/toolharness/toolharness/internal/ollamatest"
	"github.com/toolharness/toolharness/registry"
)

// faultSession is a session over the real server (maybe behind a proxy)
// with one counting tool, constrained and required calls.
type faultSession struct {
	s     *Session
	runs  *atomic.Int64
	trace *bytes.Buffer
	notes []string
	mu    sync.Mutex
}

func newFaultSession(t *testing.T, b backend.Backend, model string) *faultSession {
	t.Helper()
	r, err := NewRenderer(RendererOptions{Template: "qwen2.5"})
	if err != nil {
		t.Fatal(err)
	}
	f := &faultSession{runs: &atomic.Int64{}, trace: &bytes.Buffer{}}
	reg := registry.New(registry.Options{FormatCall: r.FormatCall})
	err = reg.Register(registry.Spec{
		Tool: chat.Tool{Name: "note", Description: "Write a note.", Parameters: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`)},
		Handler: func(context.Context, json.RawMessage) (string, error) {
			f.runs.Add(1)
			return "noted", nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	temp, seed := 0.7, 7
	f.s, err = New(context.Background(), Config{
		Backend: b, Model: model, Mode: backend.ModeRaw, Renderer: r, Tools: RegistryTools(reg), Env: testEnv,
		Constrained: true, RequireCall: true, ConstrainMaxString: 16, MaxTurns: 2, MaxRetries: 2, Trace: f.trace,
		Options: backend.Options{MaxTokens: 96, Temperature: &temp, Seed: &seed},
		Hooks:   Hooks{OnNotice: func(m string) { f.mu.Lock(); f.notes = append(f.notes, m); f.mu.Unlock() }},
	})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// ranIDs are the call IDs the trace says ran, each once.
func (f *faultSession) ranIDs(t *testing.T) []string {
	t.Helper()
	var ids []string
	seen := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(f.trace.Bytes()))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var rec struct {
			Type string   `json:"type"`
			Ran  []string `json:"ran"`
		}
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatalf("trace line %q: %v", sc.Text(), err)
		}
		for _, id := range rec.Ran {
			if seen[id] {
				t.Errorf("call %s ran twice per the trace", id)
			}
			seen[id] = true
			ids = append(ids, id)
		}
	}
	return ids
}

// faults are steps of the trace that record a fault.
func (f *faultSession) faults(t *testing.T) []string {
	var out []string
	for _, line := range strings.Split(strings.TrimSpace(f.trace.String()), "\n") {
		var rec struct {
			Fault string `json:"fault"`
		}
		if json.Unmarshal([]byte(line), &rec) == nil && rec.Fault != "" {
			out = append(out, rec.Fault)
		}
	}
	return out
}

// killer kills the server at the first chunk of request number at, which
// it turns into a long unconstrained generation so that the kill lands
// mid-stream (a short constrained reply arrives whole before any chunk is
// read).
type killer struct {
	backend.Backend
	srv *ollamatest.Server
	at  int
	n   atomic.Int64
}

func (k *killer) Generate(ctx context.Context, req backend.Request, onChunk func(string) error) (backend.Response, error) {
	n := int(k.n.Add(1))
	killed := false
	if n == k.at {
		req.Format, req.Options.MaxTokens = nil, 4000
	}
	return k.Backend.Generate(ctx, req, func(s string) error {
		if n == k.at && !killed {
			killed = true
			if err := k.srv.Kill(); err != nil {
				return err
			}
		}
		return onChunk(s)
	})
}

func TestE2EFaultServerKilledMidStream(t *testing.T) {
	srv := ollamatest.Start(t, ollamatest.WithOwnProcess())
	b, err := ollama.New(ollama.Config{Host: srv.URL, StallTimeout: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ctx := e2eCtx(t, 3*time.Minute)
	f := newFaultSession(t, &killer{Backend: b, srv: srv, at: 2}, srv.Model)
	ex, err := f.s.Send(ctx, "take a note")
	if err == nil || errors.Is(err, ErrLimit) {
		t.Fatalf("no harness error after the server died: %v", err)
	}
	if !errors.Is(err, backend.ErrStreamCut) && !errors.Is(err, backend.ErrUnreachable) {
		t.Errorf("error %v is neither a stream cut nor unreachable", err)
	}
	if !strings.Contains(err.Error(), "not retried") {
		t.Errorf("error %q does not say the generation was not retried", err)
	}
	if ex.Stop != StopError || len(ex.Steps) != 2 || ex.Steps[1].Attempts != 1 {
		t.Errorf("stop %s, %d steps", ex.Stop, len(ex.Steps))
	}
	if n := f.runs.Load(); n != 1 {
		t.Errorf("the tool ran %d times before the fault, want 1 (the forced first call)", n)
	}
	if len(f.faults(t)) != 1 {
		t.Errorf("trace faults %v", f.faults(t))
	}

	// The server comes back; the session goes on and nothing runs again.
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	if _, err := f.s.Send(ctx, "again"); err != nil && !errors.Is(err, ErrLimit) {
		t.Fatalf("after the restart: %v", err)
	}
	if ids := f.ranIDs(t); int64(len(ids)) != f.runs.Load() {
		t.Errorf("the tool ran %d times for %d distinct calls %v", f.runs.Load(), len(ids), ids)
	}
}

func TestE2EFaultUnreachableRetryIsBounded(t *testing.T) {
	srv := ollamatest.Start(t, ollamatest.WithOwnProcess())
	b, err := ollama.New(ollama.Config{Host: srv.URL, StallTimeout: 10 * time.Second, Attempts: 1})
	if err != nil {
		t.Fatal(err)
	}
	ctx := e2eCtx(t, 2*time.Minute)
	f := newFaultSession(t, b, srv.Model)
	if err := srv.Kill(); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	ex, err := f.s.Send(ctx, "take a note")
	if !errors.Is(err, backend.ErrUnreachable) {
		t.Fatalf("err %v, want unreachable", err)
	}
	if took := time.Since(start); took > 20*time.Second {
		t.Errorf("gave up after %v", took)
	}
	if ex.Steps[0].Attempts != 3 || len(f.notes) != 2 {
		t.Errorf("%d attempts, notices %q; want 3 attempts (2 retries, each announced)", ex.Steps[0].Attempts, f.notes)
	}
	if f.runs.Load() != 0 || len(f.faults(t)) != 1 {
		t.Errorf("runs %d, trace faults %v", f.runs.Load(), f.faults(t))
	}
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	if _, err := f.s.Send(ctx, "now"); err != nil && !errors.Is(err, ErrLimit) {
		t.Fatalf("after the restart: %v", err)
	}
}

// faultProxy passes requests to the server, except that /api/generate
// requests get the fault of the given kind while failures lasts
// (negative: always).
func faultProxy(t *testing.T, target, kind string, failures int) *httptest.Server {
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(u)
	var mu sync.Mutex
	p := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		fail := r.URL.Path == "/api/generate" && failures != 0
		if fail && failures > 0 {
			failures--
		}
		mu.Unlock()
		if !fail {
			rp.ServeHTTP(w, r)
			return
		}
		switch kind {
		case "500":
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusInternalServerError)
			fmt.Fprint(w, `{"error":"injected failure"}`)
		case "stall":
			w.Header().Set("Content-Type", "application/x-ndjson")
			w.WriteHeader(http.StatusOK)
			w.(http.Flusher).Flush()
			<-r.Context().Done()
		}
	}))
	t.Cleanup(p.Close)
	return p
}

func TestE2EFaultServerError(t *testing.T) {
	srv := ollamatest.Start(t, ollamatest.WithOwnProcess())
	ctx := e2eCtx(t, 2*time.Minute)

	// Two 500s, then the real server: retried, and the session succeeds.
	p := faultProxy(t, srv.URL, "500", 2)
	b, err := ollama.New(ollama.Config{Host: p.URL, StallTimeout: 20 * time.Second, Attempts: 1})
	if err != nil {
		t.Fatal(err)
	}
	f := newFaultSession(t, b, srv.Model)
	ex, err := f.s.Send(ctx, "take a note")
	if err != nil && !errors.Is(err, ErrLimit) {
		t.Fatalf("err %v", err)
	}
	if ex.Steps[0].Attempts != 3 || f.runs.Load() < 1 {
		t.Errorf("attempts %d, runs %d", ex.Steps[0].Attempts, f.runs.Load())
	}

	// Always 500: a clear error with the server's message, bounded.
	p = faultProxy(t, srv.URL, "500", -1)
	if b, err = ollama.New(ollama.Config{Host: p.URL, StallTimeout: 20 * time.Second, Attempts: 1}); err != nil {
		t.Fatal(err)
	}
	f = newFaultSession(t, b, srv.Model)
	ex, err = f.s.Send(ctx, "take a note")
	if !errors.Is(err, backend.ErrServer) || !strings.Contains(err.Error(), "injected failure") || !strings.Contains(err.Error(), "500") {
		t.Fatalf("err %v", err)
	}
	if ex.Steps[0].Attempts != 3 || f.runs.Load() != 0 || len(f.faults(t)) != 1 {
		t.Errorf("attempts %d, runs %d, faults %v", ex.Steps[0].Attempts, f.runs.Load(), f.faults(t))
	}
}

func TestE2EFaultStalledStream(t *testing.T) {
	srv := ollamatest.Start(t, ollamatest.WithOwnProcess())
	ctx := e2eCtx(t, 2*time.Minute)
	p := faultProxy(t, srv.URL, "stall", -1)
	b, err := ollama.New(ollama.Config{Host: p.URL, StallTimeout: 500 * time.Millisecond, Attempts: 1})
	if err != nil {
		t.Fatal(err)
	}
	f := newFaultSession(t, b, srv.Model)
	start := time.Now()
	ex, err := f.s.Send(ctx, "take a note")
	if !errors.Is(err, backend.ErrStalled) {
		t.Fatalf("err %v, want stalled", err)
	}
	if took := time.Since(start); took > 15*time.Second {
		t.Errorf("gave up after %v", took)
	}
	if ex.Steps[0].Attempts != 3 || f.runs.Load() != 0 || len(f.faults(t)) != 1 {
		t.Errorf("attempts %d, runs %d, faults %v", ex.Steps[0].Attempts, f.runs.Load(), f.faults(t))
	}
}

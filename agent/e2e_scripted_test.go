package agent

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/toolharness/toolharness/backend"
	"github.com/toolharness/toolharness/backend/llamacpp"
	"github.com/toolharness/toolharness/internal/llamacpptest"
)

// TestE2EScriptedInvalidThenParallel: the scripted outputs the issue asks
// of a real server beside the nine-read loop: an invalid call first (the
// path a number), which the session refuses with the model-facing error
// and retries; then two calls in one generation (parallel), both run;
// then the answer. The outputs are forced by grammars on a real
// llama-server (qwen2 vocabulary), the history is token-exact, and every
// request after the first reuses all the server's slot held (its own
// cache_n), the refused call and its error included.
func TestE2EScriptedInvalidThenParallel(t *testing.T) {
	srv := llamacpptest.Start(t)
	c, err := llamacpp.New(llamacpp.Config{BaseURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	script := llamacpptest.Scripted(c,
		hermesCall("read_file", `{"path": 5}`),
		hermesCall("read_file", `{"path": "f1.txt"}`)+"\n"+hermesCall("read_file", `{"path": "f2.txt"}`),
		"Both read.")
	r, err := NewRenderer(RendererOptions{Template: "qwen2.5", Format: "hermes"})
	if err != nil {
		t.Fatal(err)
	}
	reg, counts := newCountingRegistry()
	zero := 0.0
	s, err := New(context.Background(), Config{
		Backend: script, Model: "toy", Mode: backend.ModeRaw, Renderer: r, Tools: RegistryTools(reg),
		Env: testEnv, MaxTurns: 6, Trace: io.Discard, Options: backend.Options{Temperature: &zero},
		Clock: func() time.Time { return time.Date(2026, 12, 6, 2, 0, 0, 0, time.UTC) },
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	ex, err := s.Send(ctx, "Read f1.txt and f2.txt.")
	if err != nil {
		t.Fatal(err)
	}
	if len(ex.Steps) != 3 || ex.Retries != 1 || ex.Answer != "Both read." || counts.n("f1.txt") != 1 || counts.n("f2.txt") != 1 || script.Used() != 3 {
		t.Fatalf("%d steps, %d retries, answer %q, runs f1 %d f2 %d, %d outputs used", len(ex.Steps), ex.Retries, ex.Answer,
			counts.n("f1.txt"), counts.n("f2.txt"), script.Used())
	}
	if n := len(ex.Steps[1].Ran); n != 2 {
		t.Errorf("the parallel step ran %d calls, want 2", n)
	}
	t.Logf("reused/held per request after the first: %s", reuseLine(ex.Steps[1:]))
	for i, st := range ex.Steps[1:] {
		if r := st.Reuse; r == nil || r.Held == 0 || r.Reused != r.Held || r.IDTurns != i+1 {
			t.Errorf("request %d: reuse %+v; want every held token reused and %d id turns", i+2, r, i+1)
		}
	}
}

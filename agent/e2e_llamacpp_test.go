package agent

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/toolharness/toolharness/backend"
	"github.com/toolharness/toolharness/backend/llamacpp"
	"github.com/toolharness/toolharness/internal/llamacpptest"
)

// realLoop runs one user message through nine tool calls and an answer
// on a real llama-server with the qwen2 vocabulary, each turn's text
// forced with a grammar (the ids are the model's own choice), and
// returns the exchange and the turns (1-based) whose generated ids
// differ from /tokenize of their text.
func realLoop(t *testing.T, srv *llamacpptest.Server, textHistory bool) (*Exchange, []int) {
	t.Helper()
	var outputs []string
	for i := 1; i <= 9; i++ {
		outputs = append(outputs, hermesCall("read_file", fmt.Sprintf(`{"path": "notes/f%d.txt"}`, i)))
	}
	outputs = append(outputs, "All nine files read.")
	c, err := llamacpp.New(llamacpp.Config{BaseURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	r, err := NewRenderer(RendererOptions{Template: "qwen2.5", Format: "hermes"})
	if err != nil {
		t.Fatal(err)
	}
	reg, _ := newCountingRegistry()
	zero := 0.0
	script := llamacpptest.Scripted(c, outputs...)
	script.ReturnTokens = true // the control's ids too, to find its odd turns
	s, err := New(context.Background(), Config{
		Backend: script, Model: "tiny", Mode: backend.ModeRaw, Renderer: r,
		Tools: RegistryTools(reg), Env: testEnv, MaxTurns: 10, Trace: &bytes.Buffer{}, TextHistory: textHistory,
		Options: backend.Options{Temperature: &zero},
		Clock:   func() time.Time { return time.Date(2026, 11, 29, 20, 0, 0, 0, time.UTC) },
	})
	if err != nil {
		t.Fatal(err)
	}
	ex, err := s.Send(context.Background(), "Read notes/f1.txt to notes/f9.txt.")
	if err != nil {
		t.Fatal(err)
	}
	if len(ex.Steps) != 10 || ex.Calls != 9 || ex.Answer != "All nine files read." {
		t.Fatalf("exchange: %d steps, %d calls, answer %q", len(ex.Steps), ex.Calls, ex.Answer)
	}
	var odd []int
	turn := 0
	for _, m := range s.History() {
		if m.Role != "assistant" {
			continue
		}
		turn++
		if len(m.Tokens) == 0 {
			t.Fatalf("assistant turn %d kept no ids", turn)
		}
		if !slices.Equal(m.Tokens, srv.Tokenize(t, m.Raw)) {
			odd = append(odd, turn)
		}
	}
	t.Logf("text history %v: turns whose ids differ from /tokenize of their text: %v; reused/held per request after the first: %s",
		textHistory, odd, reuseLine(ex.Steps[1:]))
	if len(odd) == 0 {
		t.Fatal("every turn's ids re-tokenise to themselves; the test would prove nothing")
	}
	return ex, odd
}

// TestE2ETokenExactHistoryLlamacpp: over ten turns on the qwen2
// vocabulary, every request after the first reuses everything the
// server's slot held (its own timings.cache_n), also after turns whose
// generated ids are not what the server makes of their text; the same
// loop with text history (the control) loses reuse after each such turn
// of its own.
func TestE2ETokenExactHistoryLlamacpp(t *testing.T) {
	srv := llamacpptest.Start(t)
	ex, _ := realLoop(t, srv, false)
	for i, st := range ex.Steps[1:] {
		if r := st.Reuse; r == nil || r.Held == 0 || r.Reused != r.Held || r.IDTurns != i+1 {
			t.Errorf("request %d: reuse %+v; want every held token reused and %d id turns", i+2, r, i+1)
		}
	}

	// The control, on the same server: history as text.
	ex, odd := realLoop(t, srv, true)
	for i, st := range ex.Steps[1:] {
		prevTurn := i + 1
		if st.Reuse == nil || st.Reuse.IDTurns != 0 {
			t.Fatalf("request %d: reuse %+v with text history", i+2, st.Reuse)
		}
		if slices.Contains(odd, prevTurn) && st.Reuse.Reused >= st.Reuse.Held {
			t.Errorf("request %d: reused %d of %d held although turn %d went back as text that re-tokenises differently",
				i+2, st.Reuse.Reused, st.Reuse.Held, prevTurn)
		}
	}
}

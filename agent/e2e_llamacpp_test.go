package agent

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
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
func realLoop(t *testing.T, srv *llamacpptest.Server, textHistory bool) (*Exchange, []int, *Session, *bytes.Buffer) {
	t.Helper()
	c, err := llamacpp.New(llamacpp.Config{BaseURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	script := llamacpptest.Scripted(c, nineReadTexts()...)
	script.ReturnTokens = true // the control's ids too, to find its odd turns
	zero := 0.0
	trace := &bytes.Buffer{}
	ex, s := runNineReads(t, script, textHistory, backend.Options{Temperature: &zero}, trace)
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
	return ex, odd, s, trace
}

// TestE2ETokenExactHistoryLlamacpp: over ten turns on the qwen2
// vocabulary, every request after the first reuses everything the
// server's slot held (its own timings.cache_n), also after turns whose
// generated ids are not what the server makes of their text; the same
// loop with text history (the control) loses reuse after each such turn
// of its own.
func TestE2ETokenExactHistoryLlamacpp(t *testing.T) {
	srv := llamacpptest.Start(t)
	ex, _, s, trace := realLoop(t, srv, false)
	var gen [][]int // each assistant turn's generated ids
	for _, m := range s.History() {
		if m.Role == "assistant" {
			gen = append(gen, m.Tokens)
		}
	}
	if len(gen) != 10 {
		t.Fatalf("%d assistant turns in the history, want 10", len(gen))
	}
	for i, st := range ex.Steps[1:] {
		if r := st.Reuse; r == nil || r.Held == 0 || r.Reused != r.Held || r.IDTurns != i+1 {
			t.Errorf("request %d: reuse %+v; want every held token reused and %d id turns", i+2, r, i+1)
			continue
		}
		// The slot held the previous prompt and that turn's generated
		// ids, all of which were reused.
		prev := ex.Steps[i]
		if full := prev.Usage.PromptTokens + len(gen[i]); st.Reuse.Held != full {
			t.Errorf("request %d: the slot held %d tokens, want the previous prompt %d and its %d generated ids", i+2, st.Reuse.Held, prev.Usage.PromptTokens, len(gen[i]))
		}
	}
	// The trace says it per step, in the server's figures.
	steps := 0
	for _, l := range (&harness{trace: trace}).traceLines(t) {
		if l["type"] != "step" {
			continue
		}
		st := ex.Steps[steps]
		steps++
		u, _ := l["usage"].(map[string]any)
		if u["cached_tokens"] != float64(st.Usage.CachedTokens) || u["slot_tokens"] == nil ||
			u["new_prompt_tokens"] != float64(st.Usage.PromptTokens-st.Usage.CachedTokens) {
			t.Errorf("trace step %d usage %v; want cached_tokens %d, new_prompt_tokens %d, slot_tokens", steps, u, st.Usage.CachedTokens, st.Usage.PromptTokens-st.Usage.CachedTokens)
		}
		if r, _ := l["reuse"].(map[string]any); steps > 1 && r["reused_tokens"] != float64(st.Reuse.Reused) {
			t.Errorf("trace step %d reuse %v, want reused_tokens %d", steps, l["reuse"], st.Reuse.Reused)
		}
	}
	if steps != 10 {
		t.Errorf("%d steps in the trace, want 10", steps)
	}

	// The control, on the same server: history as text.
	ex, odd, _, _ := realLoop(t, srv, true)
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

// nineReadTexts are the model's replies in the ten-turn loop: nine calls
// and the answer.
func nineReadTexts() []string {
	var texts []string
	for i := 1; i <= 9; i++ {
		texts = append(texts, hermesCall("read_file", fmt.Sprintf(`{"path": "f%d.txt"}`, i)))
	}
	return append(texts, "All nine files read.")
}

// runNineReads sends "Read f1.txt to f9.txt." through b (raw, qwen2.5 with
// hermes calls) and checks that the model's replies were nineReadTexts.
func runNineReads(t *testing.T, b backend.Backend, textHistory bool, opts backend.Options, trace io.Writer) (*Exchange, *Session) {
	t.Helper()
	r, err := NewRenderer(RendererOptions{Template: "qwen2.5", Format: "hermes"})
	if err != nil {
		t.Fatal(err)
	}
	reg, _ := newCountingRegistry()
	s, err := New(context.Background(), Config{
		Backend: b, Model: "toy", Mode: backend.ModeRaw, Renderer: r, Tools: RegistryTools(reg),
		Env: testEnv, MaxTurns: 10, Trace: trace, TextHistory: textHistory, Options: opts,
		Clock: func() time.Time { return time.Date(2026, 11, 29, 20, 0, 0, 0, time.UTC) },
	})
	if err != nil {
		t.Fatal(err)
	}
	ex, err := s.Send(context.Background(), "Read f1.txt to f9.txt.")
	if err != nil {
		t.Fatal(err)
	}
	if len(ex.Steps) != 10 || ex.Calls != 9 || ex.Answer != "All nine files read." {
		t.Fatalf("exchange: %d steps, %d calls, answer %q", len(ex.Steps), ex.Calls, ex.Answer)
	}
	return ex, s
}

func reuseLine(steps []Step) string {
	var parts []string
	for _, st := range steps {
		if st.Reuse != nil {
			parts = append(parts, fmt.Sprintf("%d/%d", st.Reuse.Reused, st.Reuse.Held))
		}
	}
	return strings.Join(parts, " ")
}

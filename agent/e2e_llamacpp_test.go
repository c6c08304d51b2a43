package agent

import (
	"io"
	"slices"
	"testing"

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
	c, err := llamacpp.New(llamacpp.Config{BaseURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	script := llamacpptest.Scripted(c, nineReadTexts()...)
	script.ReturnTokens = true // the control's ids too, to find its odd turns
	zero := 0.0
	ex, s := runNineReads(t, script, textHistory, backend.Options{Temperature: &zero}, io.Discard)
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

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
	"github.com/toolharness/toolharness/backend/llamacpp/llamacpptest"
)

// tenTurnLoop runs one user message through nine tool calls and an answer
// against the fake llama-server. Turn 4's ids spell its text one byte per
// token, which the server's tokenizer would merge differently: the kind
// of generation that does not re-tokenise to itself.
func tenTurnLoop(t *testing.T, textHistory bool) (*Exchange, *llamacpptest.Server, *Session, *bytes.Buffer) {
	t.Helper()
	srv := llamacpptest.New()
	t.Cleanup(srv.Close)
	const oddTurn = 4
	for i, text := range nineReadTexts() {
		ids := srv.Tok.Tokenize(text, true)
		if i+1 == oddTurn {
			ids = srv.Tok.Bytes(text)
			if slices.Equal(ids, srv.Tok.Tokenize(text, true)) {
				t.Fatal("the odd turn re-tokenises to itself; the test would prove nothing")
			}
		}
		srv.Script(ids)
	}
	c, err := llamacpp.New(llamacpp.Config{BaseURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	trace := &bytes.Buffer{}
	ex, s := runNineReads(t, c, textHistory, backend.Options{}, trace)
	var reused, held, prompt int
	for _, st := range ex.Steps[1:] {
		if st.Reuse != nil {
			reused, held, prompt = reused+st.Reuse.Reused, held+st.Reuse.Held, prompt+st.Reuse.Reused+st.Reuse.New
		}
	}
	t.Logf("text history %v: requests 2-10 reused %d of the %d tokens the slot held (%d prompt tokens); per request: %s",
		textHistory, reused, held, prompt, reuseLine(ex.Steps[1:]))
	return ex, srv, s, trace
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

// TestTokenExactHistory: with token-exact history every request after the
// first goes as a mixed array holding each earlier turn's generated ids,
// and the server reuses everything its slot held — also after the turn
// whose ids do not re-tokenise to its text.
func TestTokenExactHistory(t *testing.T) {
	ex, srv, s, trace := tenTurnLoop(t, false)
	prompts := srv.Prompts()
	// The trace says it per step, in the server's figures.
	h := &harness{trace: trace}
	steps := 0
	for _, l := range h.traceLines(t) {
		if l["type"] != "step" {
			continue
		}
		steps++
		u, _ := l["usage"].(map[string]any)
		p := prompts[steps-1]
		if u["cached_tokens"] != float64(p.CacheN) || u["new_prompt_tokens"] != float64(p.PromptN) || u["slot_tokens"] == nil {
			t.Errorf("trace step %d usage %v; want cached_tokens %d, new_prompt_tokens %d, slot_tokens", steps, u, p.CacheN, p.PromptN)
		}
		if r, _ := l["reuse"].(map[string]any); r["reused_tokens"] != float64(p.CacheN) {
			t.Errorf("trace step %d reuse %v", steps, l["reuse"])
		}
	}
	for i, p := range prompts {
		if p.Mixed != (i > 0) {
			t.Errorf("request %d: mixed array %v, want %v (prompt %.60s…)", i+1, p.Mixed, i > 0, p.Raw)
		}
		if i == 0 {
			continue
		}
		// The slot held the previous prompt and every generated id but
		// the end-of-generation one: all of it is the full prefix.
		prev := prompts[i-1]
		full := len(prev.IDs) + len(prev.Generated) - 1
		if p.CacheN != full {
			t.Errorf("request %d: server reused %d tokens, want the full prefix %d", i+1, p.CacheN, full)
		}
		if !slices.Equal(p.IDs[len(prev.IDs):full], prev.Generated[:len(prev.Generated)-1]) {
			t.Errorf("request %d does not carry turn %d's generated ids verbatim", i+1, i)
		}
		st := ex.Steps[i]
		if st.Reuse == nil || st.Reuse.Reused != full || st.Reuse.Held != full || st.Reuse.New != len(p.IDs)-full || st.Reuse.IDTurns != i {
			t.Errorf("step %d reuse %+v; want reused = held = %d, new %d, %d id turns", i+1, st.Reuse, full, len(p.IDs)-full, i)
		}
	}
	// The transcript keeps the ids of each assistant turn.
	var turns int
	for _, m := range s.History() {
		if m.Role == "assistant" {
			turns++
			if len(m.Tokens) == 0 {
				t.Errorf("assistant turn %d kept no ids", turns)
			}
		}
	}
	if turns != 10 {
		t.Errorf("%d assistant turns in the history", turns)
	}
}

// TestTextHistoryLosesReuse is the control: the same loop sending history
// as text loses the cache on the request after the odd turn, because the
// server re-tokenises that turn's text into other ids.
func TestTextHistoryLosesReuse(t *testing.T) {
	ex, srv, _, _ := tenTurnLoop(t, true)
	prompts := srv.Prompts()
	for i, p := range prompts {
		if p.Mixed {
			t.Errorf("request %d sent a mixed array with TextHistory", i+1)
		}
		if i == 0 {
			continue
		}
		prev := prompts[i-1]
		full := len(prev.IDs) + len(prev.Generated) - 1
		lost := i == 4 // the request after turn 4
		if lost && p.CacheN >= full {
			t.Errorf("request %d: reused %d of %d although turn 4 does not re-tokenise to itself", i+1, p.CacheN, full)
		}
		if !lost && p.CacheN != full {
			t.Errorf("request %d: reused %d, want the full prefix %d", i+1, p.CacheN, full)
		}
		if st := ex.Steps[i]; st.Reuse == nil || st.Reuse.Reused != p.CacheN || st.Reuse.IDTurns != 0 {
			t.Errorf("step %d reuse %+v, want reused %d and no id turns", i+1, st.Reuse, p.CacheN)
		}
	}
}

package agent

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/toolharness/toolharness/backend"
	"github.com/toolharness/toolharness/backend/llamacpp"
	"github.com/toolharness/toolharness/internal/llamacpptest"
	"github.com/toolharness/toolharness/internal/ollamatest"
)

// splitChar is a character no qwen2 token holds whole (checked below): a
// generated token ends inside it, and a stream sends no id for that one.
const splitChar = "\U0001D518" // 𝔘, four bytes

// splitTurn runs one streamed session on a real llama-server (qwen2
// vocabulary) whose first reply, forced by a grammar, is a call with
// splitChar in its arguments, and whose second is the answer. It returns
// the two steps and the ids the first reply kept.
func splitTurn(t *testing.T, srv *llamacpptest.Server, textHistory bool) ([]Step, []int) {
	t.Helper()
	c, err := llamacpp.New(llamacpp.Config{BaseURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	script := llamacpptest.Scripted(c, hermesCall("read_file", `{"path": "`+splitChar+`.txt"}`), "Done.")
	script.ReturnTokens = true
	r, err := NewRenderer(RendererOptions{Template: "qwen2.5", Format: "hermes"})
	if err != nil {
		t.Fatal(err)
	}
	reg, _ := newCountingRegistry()
	zero := 0.0
	s, err := New(context.Background(), Config{
		Backend: script, Model: "toy", Mode: backend.ModeRaw, Renderer: r, Tools: RegistryTools(reg),
		Env: testEnv, MaxTurns: 4, Trace: io.Discard, TextHistory: textHistory, Options: backend.Options{Temperature: &zero},
		Clock: func() time.Time { return time.Date(2026, 12, 6, 2, 0, 0, 0, time.UTC) },
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	ex, err := s.Send(ctx, "Read the file.") // streamed: a session always passes a callback
	if err != nil {
		t.Fatal(err)
	}
	if len(ex.Steps) != 2 || ex.Calls != 1 || ex.Answer != "Done." {
		t.Fatalf("exchange: %d steps, %d calls, answer %q", len(ex.Steps), ex.Calls, ex.Answer)
	}
	var ids []int
	for _, m := range s.History() {
		if m.Role == "assistant" {
			ids = m.Tokens
			break
		}
	}
	return ex.Steps, ids
}

// TestE2ESplitCharacterTurn: a streamed turn that holds a character split
// across tokens lacks the id of the token ending inside it. The session
// keeps the turn's ids up to there and sends only the rest as text: the
// next request reuses at least the first prompt and those ids from the
// server's cache (its own cache_n), and more than the same session with
// text history, whose turn goes back as text whose tokens are not the
// ones generated.
func TestE2ESplitCharacterTurn(t *testing.T) {
	vf, err := ollamatest.VocabFile("qwen2")
	if err != nil {
		t.Fatal(err)
	}
	v, err := ollamatest.LoadVocab(vf)
	if err != nil {
		t.Fatal(err)
	}
	if v.Holds(splitChar) {
		t.Fatalf("a qwen2 token holds %q whole; the test needs a character that is always split", splitChar)
	}
	srv := llamacpptest.Start(t)
	steps, ids := splitTurn(t, srv, false)
	first, next := steps[0], steps[1]
	if len(ids) == 0 || len(ids) >= first.Usage.GeneratedTokens {
		t.Fatalf("the first turn kept %d ids of %d generated; want some, not all (the stream lacks the split token's)", len(ids), first.Usage.GeneratedTokens)
	}
	if next.Reuse == nil || next.Reuse.IDs != len(ids) || next.Reuse.Reused < first.Usage.PromptTokens+len(ids) {
		t.Fatalf("next request: reuse %+v; want the %d ids sent and at least %d reused (prompt %d + ids)", next.Reuse, len(ids),
			first.Usage.PromptTokens+len(ids), first.Usage.PromptTokens)
	}
	csteps, _ := splitTurn(t, srv, true)
	t.Logf("ids up to the character: %d of %d generated; reused %d of %d held; text history reused %d of %d held",
		len(ids), first.Usage.GeneratedTokens, next.Reuse.Reused, next.Reuse.Held, csteps[1].Reuse.Reused, csteps[1].Reuse.Held)
	if c := csteps[1].Reuse; c == nil || c.Reused >= next.Reuse.Reused {
		t.Errorf("text history reused %+v; want less than the ids' %d", c, next.Reuse.Reused)
	}
}

package agent

import (
	"strings"
	"testing"
	"time"

	"github.com/toolharness/toolharness/backend"
	"github.com/toolharness/toolharness/backend/ollama"
	"github.com/toolharness/toolharness/internal/ollamatest"
)

// TestE2ERawToolChatOneRunner: a raw tool chat of ten messages (about
// twenty generations) on the test Ollama, with the qwen2 vocabulary so
// that reuse is measured on real BPE, and no --num-ctx: the backend keeps
// one num_ctx for the whole session, so Ollama starts its runner once
// (the warm-up, at the value the model is registered with) and never
// again, and every request reuses at least the whole previous prompt.
// How much of the model's own output is reused depends on whether it
// re-tokenises to the ids generated (Ollama takes text only); it is
// measured and logged.
func TestE2ERawToolChatOneRunner(t *testing.T) {
	vf, err := ollamatest.VocabFile("qwen2")
	if err != nil {
		t.Fatal(err)
	}
	spec := ollamatest.VocabSpec(vf)
	spec.ContextLength = 32768
	srv := ollamatest.Start(t, ollamatest.WithOwnProcess(), ollamatest.WithSpec(spec))
	b, err := ollama.New(ollama.Config{Host: srv.URL, StallTimeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	run := runKVSessionCtx(t, srv, b, backend.ModeRaw, kvRenderer(t, "qwen2.5"), 0)
	run.checkCalls(t)
	if len(run.steps) < 2*len(userTurns)-2 {
		t.Errorf("%d generations for %d messages", len(run.steps), len(userTurns))
	}
	if n := strings.Count(srv.Log(), `msg="starting llama server"`); n != 1 {
		t.Errorf("Ollama started its runner %d times, want once (num_ctx changed during the session?)", n)
	}
	genUsed, genAll := 0, 0
	for i := 1; i < len(run.slots); i++ {
		prev, cur := run.slots[i-1], run.slots[i]
		if cur.Used < prev.Prompt {
			t.Errorf("generation %d reused %d tokens, less than the previous prompt's %d", i+1, cur.Used, prev.Prompt)
		}
		genUsed += min(cur.Used, prev.Prompt+run.steps[i-1].Usage.GeneratedTokens-1) - prev.Prompt
		genAll += run.steps[i-1].Usage.GeneratedTokens - 1
	}
	run.log(t, "raw mode, qwen2 vocabulary, num_ctx left to the backend")
	t.Logf("of the model's own output, %d of %d tokens were reused (the rest re-tokenised differently)", genUsed, genAll)
}

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
// twenty generations) on the test Ollama with no --num-ctx: the backend
// keeps one num_ctx for the whole session, so Ollama starts its runner
// once (the warm-up, at the value the model is registered with) and never
// again. It runs twice:
//   - with the byte vocabulary, where every output re-tokenises to the
//     ids generated, so every request reuses the whole cached prefix:
//     the previous prompt and all of its output but the last token;
//   - with the qwen2 vocabulary, so that reuse is measured on real BPE:
//     every request reuses at least the whole previous prompt. How much
//     of the model's own output is reused depends on whether it
//     re-tokenises to the ids generated (Ollama takes text only); it is
//     measured and logged.
func TestE2ERawToolChatOneRunner(t *testing.T) {
	t.Run("bytes", func(t *testing.T) {
		spec := ollamatest.DefaultSpec()
		spec.ContextLength = 32768
		run, srv := oneRunnerSession(t, spec)
		checkFullReuse(t, run)
		checkOneRunner(t, srv)
		run.log(t, "raw mode, byte vocabulary, num_ctx left to the backend")
	})
	t.Run("qwen2", func(t *testing.T) {
		vf, err := ollamatest.VocabFile("qwen2")
		if err != nil {
			t.Fatal(err)
		}
		spec := ollamatest.VocabSpec(vf)
		spec.ContextLength = 32768
		run, srv := oneRunnerSession(t, spec)
		checkOneRunner(t, srv)
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
	})
}

// oneRunnerSession runs the KV tests' raw session on a fresh Ollama
// serving a model built from spec, with num_ctx left to the backend.
func oneRunnerSession(t *testing.T, spec ollamatest.ModelSpec) (kvRun, *ollamatest.Server) {
	t.Helper()
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
	return run, srv
}

// checkOneRunner: the server log shows one runner start for the session.
func checkOneRunner(t *testing.T, srv *ollamatest.Server) {
	t.Helper()
	if n := strings.Count(srv.Log(), `msg="starting llama server"`); n != 1 {
		t.Errorf("Ollama started its runner %d times, want once (num_ctx changed during the session?)", n)
	}
}

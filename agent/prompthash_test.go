package agent

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"testing"

	"github.com/toolharness/toolharness/backend"
)

// TestPromptHashOfEachPrompt checks the running hash: every step's
// prompt_sha256 is the SHA-256 of exactly the prompt (or chat key) sent,
// though only each prompt's new bytes are hashed.
func TestPromptHashOfEachPrompt(t *testing.T) {
	for _, mode := range []backend.Mode{backend.ModeRaw, backend.ModeChat} {
		call := hermesCall("read_file", `{"path": "a"}`)
		h := newHarness(t, []reply{{text: call}, {text: hermesCall("read_file", `{"path": "b"}`)}, {text: "done"}}, func(c *Config) { c.Mode = mode })
		ex, err := h.s.Send(context.Background(), "read a then b")
		if err != nil {
			t.Fatal(err)
		}
		reqs := h.b.reqs()
		if len(ex.Steps) != 3 || len(reqs) != 3 {
			t.Fatalf("%s: %d steps, %d requests", mode, len(ex.Steps), len(reqs))
		}
		for i, st := range ex.Steps {
			key := promptKey(reqs[i].Prompt, reqs[i].Messages)
			sum := sha256.Sum256([]byte(key))
			if want := hex.EncodeToString(sum[:]); st.PromptHash != want || st.PromptLen != len(key) {
				t.Errorf("%s step %d: hash %s (%d bytes), want %s (%d bytes)", mode, i, st.PromptHash, st.PromptLen, want, len(key))
			}
			if st.Divergence != nil {
				t.Errorf("%s step %d: divergence %+v", mode, i, st.Divergence)
			}
		}
	}
}

package replay

import (
	"bytes"
	"context"
	"os"
	"testing"

	"github.com/toolharness/toolharness/backend"
)

// FuzzNewReplayer reads arbitrary recordings, seeded with the golden
// session (and its version-1 form): reading and replaying must never panic, and a call either
// replays or fails with an error.
func FuzzNewReplayer(f *testing.F) {
	b, err := os.ReadFile("testdata/session.golden.jsonl")
	if err != nil {
		f.Fatalf("seed: %v (the golden recording lives in backend/replay/testdata)", err)
	}
	f.Add(b)
	v1, err := os.ReadFile("testdata/session.v1.jsonl")
	if err != nil {
		f.Fatalf("seed: %v (the version-1 recording lives in backend/replay/testdata)", err)
	}
	f.Add(v1)
	lines := bytes.SplitAfter(b, []byte("\n"))
	for i := 1; i < len(lines); i++ {
		f.Add(append(append([]byte{}, lines[0]...), lines[i]...))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := NewReplayer(bytes.NewReader(data))
		if err != nil {
			return
		}
		ctx := context.Background()
		_ = p.Capabilities()
		for range p.Remaining() + 1 {
			p.CountTokens(ctx, "", "Hello world!")
			p.ContextSize(ctx, "")
			var got string
			resp, _ := p.Generate(ctx, backend.Request{Mode: backend.ModeRaw, Prompt: "x"}, func(s string) error {
				got += s
				return nil
			})
			if resp.Text != got {
				t.Fatalf("replayed text %q is not the chunks %q", resp.Text, got)
			}
		}
	})
}

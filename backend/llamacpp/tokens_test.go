package llamacpp

import (
	"context"
	"strings"
	"testing"

	"github.com/toolharness/toolharness/backend"
)

// The token-span behaviour against a server (mixed prompts, the BOS strip,
// the budget counted as sent, split characters, the num_ctx note) is
// tested on a real llama-server in e2e_test.go.

func TestBadSpans(t *testing.T) {
	c, err := New(Config{BaseURL: "http://127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	for _, spans := range [][]backend.TokenSpan{
		{{Offset: 2, Len: 10, IDs: []int{1}}},                                    // past the end
		{{Offset: 1, Len: 1, IDs: nil}},                                          // no ids
		{{Offset: 3, Len: 1, IDs: []int{1}}, {Offset: 1, Len: 1, IDs: []int{2}}}, // out of order
	} {
		_, err := c.Generate(context.Background(), backend.Request{Mode: backend.ModeRaw, Prompt: "abcde", TokenSpans: spans}, nil)
		if err == nil || !strings.HasPrefix(err.Error(), "llamacpp: token span") {
			t.Errorf("%+v: %v; want a refused span", spans, err)
		}
	}
}

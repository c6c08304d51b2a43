package serve

import (
	"context"
	"slices"
	"testing"

	"github.com/openai/openai-go/v3"

	"github.com/toolharness/toolharness/backend"
)

// idScript is scriptBackend on a backend that takes token ids: each reply
// asked for its ids comes with ids of its own (request n: n*1000+1, +2).
type idScript struct {
	*scriptBackend
	n int
}

func (b *idScript) Capabilities() backend.Capabilities {
	c := b.scriptBackend.Capabilities()
	c.TokenPrompt = true
	return c
}

func (b *idScript) Generate(ctx context.Context, req backend.Request, onChunk func(string) error) (backend.Response, error) {
	resp, err := b.scriptBackend.Generate(ctx, req, onChunk)
	b.n++
	if req.ReturnTokens {
		resp.Tokens = []int{b.n*1000 + 1, b.n*1000 + 2}
	}
	return resp, err
}

// TestTokenExactMemory: on a backend that takes ids, every reply is asked
// for its ids, which the server remembers with its text; each returning
// turn, a failed attempt that a retry hid from the client included, is
// sent back as those ids, at the very bytes its text lies on in the
// prompt. A backend that takes no ids gets text alone.
func TestTokenExactMemory(t *testing.T) {
	outputs := []string{call("get_wether", `{"city": "Paris"}`), "Checking.  \n" + call("get_weather", `{"city":  "Paris"}`), "Sunny.  ", call("get_time", `{"zone": "CET"}`)}
	for _, ids := range []bool{true, false} {
		sb := &scriptBackend{replies: slices.Clone(outputs)}
		var b backend.Backend = sb
		if ids {
			b = &idScript{scriptBackend: sb}
		}
		srv := startServer(t, Config{}, testModel(t, b))
		c := openaiClient(srv.URL)
		p := openai.ChatCompletionNewParams{Model: "test-model", Tools: []openai.ChatCompletionToolUnionParam{weatherTool, timeTool},
			Messages: []openai.ChatCompletionMessageParamUnion{openai.SystemMessage("Be brief."), openai.UserMessage("Weather in Paris?")}}
		for turn := range 3 {
			got, err := openaiComplete(t, c, p, turn == 1)
			if err != nil {
				t.Fatalf("turn %d: %v", turn+1, err)
			}
			p.Messages = append(p.Messages, got.Message.ToParam())
			for _, id := range got.IDs {
				p.Messages = append(p.Messages, openai.ToolMessage("sunny", id))
			}
			if turn == 1 {
				p.Messages = append(p.Messages, openai.UserMessage("And the time?"))
			}
		}
		reqs := sb.reqs()
		if len(reqs) != 4 {
			t.Fatalf("%d generations, want 4 (a refused call and its retry, an answer, a call)", len(reqs))
		}
		for i, r := range reqs {
			if r.ReturnTokens != ids {
				t.Errorf("ids %v: generation %d asked for ids: %v", ids, i+1, r.ReturnTokens)
			}
			var want []backend.TokenSpan
			if ids && i > 0 {
				// The retry sends the refused attempt back as its ids (the
				// agent's case retry); later requests send every earlier
				// generation from the server's memory.
				for j := range i {
					want = append(want, backend.TokenSpan{Offset: len(reqs[j].Prompt), Len: len(outputs[j]), IDs: []int{(j+1)*1000 + 1, (j+1)*1000 + 2}})
				}
			}
			if !spansEqual(r.TokenSpans, want) {
				t.Errorf("ids %v: generation %d sent spans %+v, want %+v", ids, i+1, r.TokenSpans, want)
			}
			for _, sp := range r.TokenSpans {
				if got := r.Prompt[sp.Offset : sp.Offset+sp.Len]; !slices.Contains(outputs, got) {
					t.Errorf("generation %d: a span covers %q, no output of the model", i+1, got)
				}
			}
		}
	}
}

func spansEqual(a, b []backend.TokenSpan) bool {
	return slices.EqualFunc(a, b, func(x, y backend.TokenSpan) bool {
		return x.Offset == y.Offset && x.Len == y.Len && slices.Equal(x.IDs, y.IDs)
	})
}

package serve

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/openai/openai-go/v3"

	"github.com/toolharness/toolharness/backend"
	"github.com/toolharness/toolharness/backend/ollama"
	"github.com/toolharness/toolharness/internal/ollamatest"
)

// recording keeps every generation's prompt and output.
type recording struct {
	backend.Backend
	mu   sync.Mutex
	gens []generationRecord
}

type generationRecord struct {
	prompt, raw, stop string
	generated         int
}

func (r *recording) Generate(ctx context.Context, req backend.Request, onChunk func(string) error) (backend.Response, error) {
	resp, err := r.Backend.Generate(ctx, req, onChunk)
	r.mu.Lock()
	r.gens = append(r.gens, generationRecord{prompt: req.Prompt, raw: resp.Text, stop: resp.StopReason, generated: resp.Usage.GeneratedTokens})
	r.mu.Unlock()
	return resp, err
}

// e2eModel serves the tiny random model of a real Ollama, with a fixed
// num_ctx, sampling that varies and short replies.
func e2eModel(t *testing.T) (*ollamatest.Server, *recording, *Model) {
	spec := ollamatest.DefaultSpec()
	spec.ContextLength = 32768
	srv := ollamatest.Start(t, ollamatest.WithOwnProcess(), ollamatest.WithSpec(spec))
	b, err := ollama.New(ollama.Config{Host: srv.URL, StallTimeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	rec := &recording{Backend: b}
	m := testModel(t, rec)
	m.Name, m.Window = srv.Model, 32768
	temp, seed := 0.7, 42
	m.Options = backend.Options{NumCtx: 32768, Temperature: &temp, Seed: &seed, MaxTokens: 256}
	m.ConstrainMaxString = 16
	return srv, rec, m
}

// checkReuse asserts, from Ollama's own cache-slot figures, that every
// generation after the first reused the whole previous prompt and output
// but at most its final token, and that some turn's raw text is not what
// its structured call renders to (so only the server's memory kept the
// prefix).
func checkReuse(t *testing.T, srv *ollamatest.Server, mark ollamatest.Mark, rec *recording, m *Model) {
	t.Helper()
	rec.mu.Lock()
	gens := append([]generationRecord(nil), rec.gens...)
	rec.mu.Unlock()
	slots := srv.WaitCacheSlots(t, mark, len(gens))
	if len(slots) != len(gens) {
		t.Fatalf("%d cache-slot lines for %d generations", len(slots), len(gens))
	}
	for i := 1; i < len(gens); i++ {
		prev, cur := slots[i-1], slots[i]
		if want := prev.Prompt + gens[i-1].generated - 1; cur.Used < want {
			t.Errorf("generation %d reused %d tokens, want at least %d (previous prompt %d + output %d - 1); raw output %q",
				i+1, cur.Used, want, prev.Prompt, gens[i-1].generated, gens[i-1].raw)
		}
		if !strings.HasPrefix(gens[i].prompt, gens[i-1].prompt+gens[i-1].raw) {
			t.Errorf("generation %d's prompt does not extend generation %d's prompt and output", i+1, i)
		}
	}
	kept := false
	for _, g := range gens {
		if !strings.Contains(g.raw, "<tool_call>") && strings.Contains(g.raw, `"name"`) {
			kept = true // a constrained call: raw JSON, not the template's <tool_call> markup
		}
	}
	if !kept {
		t.Error("no turn's raw text differed from its structured call's rendering: the test proves nothing")
	}
	t.Logf("%d generations; cache slots %+v", len(gens), slots)
}

func TestE2EServeKVReuseOpenAI(t *testing.T) {
	srv, rec, m := e2eModel(t)
	hs := startServer(t, Config{}, m)
	c := openaiClient(hs.URL)
	mark := srv.Mark()
	p := openai.ChatCompletionNewParams{Model: srv.Model, Tools: []openai.ChatCompletionToolUnionParam{weatherTool, timeTool},
		ToolChoice: openai.ChatCompletionToolChoiceOptionUnionParam{OfAuto: openai.String("required")},
		Messages:   []openai.ChatCompletionMessageParamUnion{openai.SystemMessage("Be brief."), openai.UserMessage("Weather and time in Paris?")}}
	for turn := range 3 {
		got, err := openaiComplete(t, c, p, turn%2 == 1)
		if err != nil {
			t.Fatalf("turn %d: %v", turn+1, err)
		}
		if len(got.Calls) == 0 {
			t.Fatalf("turn %d: no call under tool_choice required: %+v", turn+1, got)
		}
		p.Messages = append(p.Messages, got.Message.ToParam())
		for _, id := range got.IDs {
			p.Messages = append(p.Messages, openai.ToolMessage("result of "+id, id))
		}
	}
	checkReuse(t, srv, mark, rec, m)
}

func TestE2EServeKVReuseAnthropic(t *testing.T) {
	srv, rec, m := e2eModel(t)
	hs := startServer(t, Config{}, m)
	c := anthropicClient(hs.URL)
	mark := srv.Mark()
	p := anthropic.MessageNewParams{Model: srv.Model, MaxTokens: 256, Tools: anTools, ToolChoice: anthropic.ToolChoiceUnionParam{OfAny: &anthropic.ToolChoiceAnyParam{}},
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("Weather in Paris?"))}}
	for turn := range 3 {
		got, err := anthropicComplete(t, c, p, turn%2 == 0)
		if err != nil {
			t.Fatalf("turn %d: %v", turn+1, err)
		}
		if len(got.Calls) == 0 {
			t.Fatalf("turn %d: no call under tool_choice any: %+v", turn+1, got)
		}
		var results []anthropic.ContentBlockParamUnion
		for _, b := range got.Message.Content {
			if b.Type == "tool_use" {
				results = append(results, anthropic.NewToolResultBlock(b.ID, "result of "+b.ID, false))
			}
		}
		p.Messages = append(p.Messages, got.Message.ToParam(), anthropic.NewUserMessage(results...))
	}
	checkReuse(t, srv, mark, rec, m)
}

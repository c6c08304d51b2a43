package serve

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/openai/openai-go/v3"

	"github.com/toolharness/toolharness/agent"
	"github.com/toolharness/toolharness/backend"
)

// parallelSchema holds the model to a JSON array of exactly two calls, in
// the json call format: get_weather for Paris, then get_time for UTC.
const parallelSchema = `{"type":"array","minItems":2,"maxItems":2,"prefixItems":[` +
	`{"type":"object","properties":{"name":{"enum":["get_weather"]},"arguments":{"type":"object","properties":{"city":{"enum":["Paris"]}},"required":["city"],"additionalProperties":false}},"required":["name","arguments"],"additionalProperties":false},` +
	`{"type":"object","properties":{"name":{"enum":["get_time"]},"arguments":{"type":"object","properties":{"zone":{"enum":["UTC"]}},"required":["zone"],"additionalProperties":false}},"required":["name","arguments"],"additionalProperties":false}` +
	`]}`

// wantParallel is what parallelSchema forces, as the clients see it.
var wantParallel = []string{`get_weather {"city":"Paris"}`, `get_time {"zone":"UTC"}`}

// forceParallel is a backend whose every generation is held by Ollama's
// format to parallelSchema. The server sends no format of its own under
// tool_choice auto; one that did would be overridden here, so it is an
// error instead.
type forceParallel struct{ backend.Backend }

func (f forceParallel) Generate(ctx context.Context, req backend.Request, onChunk func(string) error) (backend.Response, error) {
	if req.Format != nil {
		return backend.Response{}, &backend.Error{Kind: backend.KindBadResponse, Backend: "test", Message: "an unconstrained request came with a format"}
	}
	req.Format = json.RawMessage(parallelSchema)
	return f.Backend.Generate(ctx, req, onChunk)
}

// compactCalls re-encodes each call's arguments compactly, so that the
// model's whitespace does not matter to the comparison.
func compactCalls(t *testing.T, calls []string) []string {
	t.Helper()
	out := make([]string, len(calls))
	for i, c := range calls {
		name, args, _ := strings.Cut(c, " ")
		var v any
		if err := json.Unmarshal([]byte(args), &v); err != nil {
			t.Fatalf("call %q: arguments are not JSON: %v", c, err)
		}
		b, _ := json.Marshal(v)
		out[i] = name + " " + string(b)
	}
	return out
}

// TestE2EServeParallelCalls: against a real Ollama serving the random test
// model in the json call format, each generation is held by Ollama's
// format to an array of two calls. Through both official SDKs, streamed
// and not, both reach the client as structured calls, in order, with
// distinct ids; the tool results go back in the next request, whose prompt
// reuses Ollama's whole cached prefix (the raw array, whitespace and all,
// is what the server renders the returning turn from).
func TestE2EServeParallelCalls(t *testing.T) {
	srv, rec, m := e2eModel(t)
	r, err := agent.NewRenderer(agent.RendererOptions{Template: "qwen2.5", Format: "json"})
	if err != nil {
		t.Fatal(err)
	}
	m.Renderer, m.Backend = r, forceParallel{rec}
	hs := startServer(t, Config{}, m)
	oc, ac := openaiClient(hs.URL), anthropicClient(hs.URL)
	check := func(t *testing.T, turn int, calls, ids []string, finish, wantFinish string) {
		t.Helper()
		if got := compactCalls(t, calls); !slices.Equal(got, wantParallel) || finish != wantFinish {
			t.Fatalf("turn %d: calls %q, finish %q; want %q and %q", turn, calls, finish, wantParallel, wantFinish)
		}
		if len(ids) != 2 || ids[0] == "" || ids[0] == ids[1] {
			t.Errorf("turn %d: ids %q, want two distinct", turn, ids)
		}
	}
	reset := func() {
		rec.mu.Lock()
		rec.gens = nil
		rec.mu.Unlock()
	}
	for _, stream := range []bool{false, true} {
		suffix := map[bool]string{false: "", true: " streaming"}[stream]
		t.Run("openai"+suffix, func(t *testing.T) {
			reset()
			mark := srv.Mark()
			p := openai.ChatCompletionNewParams{Model: srv.Model, Tools: []openai.ChatCompletionToolUnionParam{weatherTool, timeTool},
				ParallelToolCalls: openai.Bool(true),
				Messages:          []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Weather and time in Paris?")}}
			for turn := 1; turn <= 2; turn++ {
				got, err := openaiComplete(t, oc, p, stream)
				if err != nil {
					t.Fatalf("turn %d: %v", turn, err)
				}
				check(t, turn, got.Calls, got.IDs, got.Finish, "tool_calls")
				if turn == 1 {
					rec.mu.Lock()
					t.Logf("the model's raw array: %q", rec.gens[0].raw)
					rec.mu.Unlock()
				}
				p.Messages = append(p.Messages, got.Message.ToParam())
				for _, id := range got.IDs {
					p.Messages = append(p.Messages, openai.ToolMessage("result of "+id, id))
				}
			}
			checkReuse(t, srv, mark, rec, m)
		})
		t.Run("anthropic"+suffix, func(t *testing.T) {
			reset()
			mark := srv.Mark()
			p := anthropic.MessageNewParams{Model: srv.Model, MaxTokens: 256, Tools: anTools,
				Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("Weather and time in Paris?"))}}
			for turn := 1; turn <= 2; turn++ {
				got, err := anthropicComplete(t, ac, p, stream)
				if err != nil {
					t.Fatalf("turn %d: %v", turn, err)
				}
				var ids []string
				var results []anthropic.ContentBlockParamUnion
				for _, b := range got.Message.Content {
					if b.Type == "tool_use" {
						ids = append(ids, b.ID)
						results = append(results, anthropic.NewToolResultBlock(b.ID, "result of "+b.ID, false))
					}
				}
				check(t, turn, got.Calls, ids, got.Stop, "tool_use")
				p.Messages = append(p.Messages, got.Message.ToParam(), anthropic.NewUserMessage(results...))
			}
			checkReuse(t, srv, mark, rec, m)
		})
	}
}

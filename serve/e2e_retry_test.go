package serve

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/openai/openai-go/v3"

	"github.com/toolharness/toolharness/backend"
)

// invalidCallSchema holds the model to a call of get_weather whose city is
// the number 75: a call that parses but breaks the tool's schema (city is
// a string).
const invalidCallSchema = `{"type":"object","properties":{"name":{"enum":["get_weather"]},` +
	`"arguments":{"type":"object","properties":{"city":{"enum":[75]}},"required":["city"],"additionalProperties":false}},` +
	`"required":["name","arguments"],"additionalProperties":false}`

// firstInvalid is a backend whose every other generation, starting with
// the first, is held by Ollama's format to invalidCallSchema instead of
// the server's own call schema: each request's first attempt is then an
// invalid call, whatever the random model would write.
type firstInvalid struct {
	backend.Backend
	mu sync.Mutex
	n  int
}

func (f *firstInvalid) Generate(ctx context.Context, req backend.Request, onChunk func(string) error) (backend.Response, error) {
	f.mu.Lock()
	force := f.n%2 == 0
	f.n++
	f.mu.Unlock()
	if force {
		if req.Format == nil {
			return backend.Response{}, &backend.Error{Kind: backend.KindBadResponse, Backend: "test", Message: "the first attempt was not constrained"}
		}
		req.Format = json.RawMessage(invalidCallSchema)
	}
	return f.Backend.Generate(ctx, req, onChunk)
}

// TestE2EServeInvalidCallRetry: against a real Ollama, each request's
// first generation is a call that breaks the tool's schema (forced by
// Ollama's format). The server retries it inside the request with the
// model-facing error, so the client, through either SDK, streamed or not,
// sees only the retry's call, valid against the schema; the retry's prompt
// holds the invalid call and the error; the retries are counted.
func TestE2EServeInvalidCallRetry(t *testing.T) {
	srv, rec, m := e2eModel(t)
	m.Backend = &firstInvalid{Backend: rec}
	metrics := NewMetrics()
	hs := startServer(t, Config{Metrics: metrics}, m)
	oc, ac := openaiClient(hs.URL), anthropicClient(hs.URL)
	named := openai.ToolChoiceOptionFunctionToolChoice(openai.ChatCompletionNamedToolChoiceFunctionParam{Name: "get_weather"})
	for _, stream := range []bool{false, true} {
		suffix := map[bool]string{false: "", true: " streaming"}[stream]
		t.Run("openai"+suffix, func(t *testing.T) {
			p := openai.ChatCompletionNewParams{Model: srv.Model, Tools: []openai.ChatCompletionToolUnionParam{weatherTool, timeTool}, ToolChoice: named,
				Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Weather in Paris?")}}
			got, err := openaiComplete(t, oc, p, stream)
			if err != nil {
				t.Fatal(err)
			}
			if len(got.Calls) != 1 || got.Header.Get(invalidHeader) != "" {
				t.Fatalf("calls %q, %s %q: want the one valid call", got.Calls, invalidHeader, got.Header.Get(invalidHeader))
			}
			checkRequiredReply(t, got.Calls, got.Finish, "tool_calls", "get_weather")
		})
		t.Run("anthropic"+suffix, func(t *testing.T) {
			p := anthropic.MessageNewParams{Model: srv.Model, MaxTokens: 256, Tools: anTools, ToolChoice: anthropic.ToolChoiceParamOfTool("get_weather"),
				Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("Weather in Paris?"))}}
			got, err := anthropicComplete(t, ac, p, stream)
			if err != nil {
				t.Fatal(err)
			}
			if len(got.Calls) != 1 || got.Header.Get(invalidHeader) != "" {
				t.Fatalf("calls %q, %s %q: want the one valid call", got.Calls, invalidHeader, got.Header.Get(invalidHeader))
			}
			checkRequiredReply(t, got.Calls, string(got.Message.StopReason), "tool_use", "get_weather")
		})
	}
	rec.mu.Lock()
	gens := append([]generationRecord(nil), rec.gens...)
	rec.mu.Unlock()
	if len(gens) != 8 {
		t.Fatalf("%d generations for 4 requests, want 8 (an invalid call and its retry each)", len(gens))
	}
	for i := 0; i < len(gens); i += 2 {
		bad, retry := gens[i], gens[i+1]
		var call struct {
			Name      string
			Arguments map[string]any
		}
		if err := json.Unmarshal([]byte(bad.raw), &call); err != nil || call.Name != "get_weather" || call.Arguments["city"] != 75.0 {
			t.Errorf("request %d's first generation %q is not the forced invalid call (%v)", i/2+1, bad.raw, err)
		}
		if !strings.HasPrefix(retry.prompt, bad.prompt+bad.raw) || !strings.Contains(retry.prompt[len(bad.prompt):], "city: expected string") {
			t.Errorf("request %d's retry prompt does not extend the invalid call with an error about it:\n%s", i/2+1, retry.prompt[len(bad.prompt):])
		}
	}
	t.Logf("a retry's prompt after the invalid call: %q", gens[1].prompt[len(gens[0].prompt):])
	for _, api := range []string{"openai", "anthropic"} {
		if line := `toolharness_serve_retries_total{api="` + api + `",model="` + m.Name + `"} 2`; !metricLine(t, hs.URL, line) {
			t.Errorf("/metrics lacks %s", line)
		}
	}
}

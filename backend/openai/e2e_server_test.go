package openai

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/toolharness/toolharness/backend"
	"github.com/toolharness/toolharness/chat"
	"github.com/toolharness/toolharness/internal/llamacpptest"
)

// TestE2EServerModeOllamaV1: server mode on a real OpenAI-compatible
// server, Ollama's /v1/chat/completions, for a model whose template refers
// to .Tools (ollamatest.ToolsModel). response_format forces a call
// object; Ollama's own parser returns it as tool_calls (an id of its own,
// arguments as a JSON string) with no content, streamed (the call whole in
// one delta, finish_reason tool_calls, the usage in the last event) and
// whole alike.
func TestE2EServerModeOllamaV1(t *testing.T) {
	srv := tiny.Get(t)
	b := newBackend(t, srv.URL, Config{})
	tool := chat.Tool{Name: "get_weather", Description: "Weather of a city",
		Parameters: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`)}
	req := backend.Request{Model: srv.ToolsModel(t), Mode: backend.ModeServer, Tools: []chat.Tool{tool},
		Messages: []chat.Message{{Role: chat.RoleUser, Content: "Weather in Paris?"}},
		Format: json.RawMessage(`{"type":"object","properties":{"name":{"enum":["get_weather"]},` +
			`"arguments":{"type":"object","properties":{"city":{"enum":["Paris"]}},"required":["city"]}},"required":["name","arguments"]}`),
		Options: backend.Options{MaxTokens: 300, Seed: ptr(5)}}
	for _, streamed := range []bool{false, true} {
		var onChunk func(string) error
		chunks := 0
		if streamed {
			onChunk = func(string) error { chunks++; return nil }
		}
		resp, err := b.Generate(ctxFor(t), req, onChunk)
		if err != nil {
			t.Fatalf("streamed %v: %v", streamed, err)
		}
		if len(resp.ToolCalls) != 1 {
			t.Fatalf("streamed %v: calls %+v, text %q", streamed, resp.ToolCalls, resp.Text)
		}
		c := resp.ToolCalls[0]
		if !strings.HasPrefix(c.ID, "call_") || c.Name != "get_weather" || string(c.Arguments) != `{"city":"Paris"}` {
			t.Errorf("streamed %v: call %+v", streamed, c)
		}
		if resp.Text != "" || chunks != 0 || resp.StopReason != "stop" || resp.Usage.PromptTokens == 0 || resp.Usage.GeneratedTokens == 0 {
			t.Errorf("streamed %v: text %q (%d chunks) stop %q usage %+v", streamed, resp.Text, chunks, resp.StopReason, resp.Usage)
		}
	}
}

// TestE2EServerModeLlamaServerV1: server mode through this backend on
// the other OpenAI-compatible server at hand, a real llama-server's /v1
// (Qwen2.5's template, so its own parser reads hermes calls): its
// tool-call grammar under tool_choice "required", with the reply opened
// by the call marker, admits only the one call the tool allows, which
// comes back from its parser, streamed (the arguments in pieces, put
// together here) and whole alike, with the usage and the reused prefix.
func TestE2EServerModeLlamaServerV1(t *testing.T) {
	tmpl, err := os.ReadFile("../../templates/testdata/official/Qwen-Qwen2.5-7B-Instruct.jinja")
	if err != nil {
		t.Fatal(err)
	}
	srv := llamacpptest.Start(t, llamacpptest.WithChatTemplate(string(tmpl)))
	b, err := New(Config{BaseURL: srv.URL + "/v1"}) // llama-server departs from the API in nothing used here
	if err != nil {
		t.Fatal(err)
	}
	tool := chat.Tool{Name: "get_weather", Description: "Weather of a city",
		Parameters: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string","enum":["Paris"]}},"required":["city"]}`)}
	zero, no := 0.0, false
	req := backend.Request{Model: "toy", Mode: backend.ModeServer, Tools: []chat.Tool{tool}, ToolChoice: "required", ParallelToolCalls: &no,
		Stop: []string{"</tool_call>"}, Options: backend.Options{Temperature: &zero, MaxTokens: 400},
		Messages: []chat.Message{{Role: chat.RoleUser, Content: "Weather in Paris?"}, {Role: chat.RoleAssistant, Content: "<tool_call>\n"}}}
	for _, streamed := range []bool{false, true} {
		var onChunk func(string) error
		if streamed {
			onChunk = func(string) error { return nil }
		}
		resp, err := b.Generate(ctxFor(t), req, onChunk)
		if err != nil {
			t.Fatalf("streamed %v: %v", streamed, err)
		}
		if len(resp.ToolCalls) != 1 {
			t.Fatalf("streamed %v: calls %+v, text %q", streamed, resp.ToolCalls, resp.Text)
		}
		c := resp.ToolCalls[0]
		var args map[string]any
		if c.ID == "" || c.Name != "get_weather" || json.Unmarshal(c.Arguments, &args) != nil || args["city"] != "Paris" || len(args) != 1 {
			t.Errorf("streamed %v: call %+v", streamed, c)
		}
		if resp.StopReason != "stop" || resp.Usage.PromptTokens == 0 || !resp.Usage.CachedKnown || resp.Usage.TimeToFirstChunk <= 0 {
			t.Errorf("streamed %v: stop %q usage %+v", streamed, resp.StopReason, resp.Usage)
		}
	}
}

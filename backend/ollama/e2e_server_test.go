package ollama

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/toolharness/toolharness/backend"
	"github.com/toolharness/toolharness/chat"
)

// forcedCall admits exactly one JSON value: the call Ollama's own parser
// must find. Format (Ollama's grammar) forces it; the tools field and
// ollamatest.ToolsTemplate make Ollama parse it.
const forcedCall = `{"type":"object","properties":{"name":{"enum":["get_weather"]},` +
	`"arguments":{"type":"object","properties":{"city":{"enum":["Paris"]}},"required":["city"]}},"required":["name","arguments"]}`

// TestE2EServerModeOllama: server mode on a real Ollama whose model's
// template refers to .Tools (ollamatest.ToolsModel), so Ollama takes the
// tools and runs its own call parser. The output is forced to a call
// object; it comes back as a structured call with no content (Ollama's
// parser took it out of the text: without the parser the content would be
// the JSON), streamed and whole alike. The call then goes back with its
// result through the template's .ToolCalls, and a forced answer that is
// no call comes back as text. A model without .Tools in its template is
// refused (HTTP 400), never answered.
func TestE2EServerModeOllama(t *testing.T) {
	srv := tiny.Get(t)
	b := newBackend(t, srv, Config{})
	model := srv.ToolsModel(t)
	msgs := []chat.Message{{Role: chat.RoleSystem, Content: "You call tools."}, {Role: chat.RoleUser, Content: "Weather in Paris?"}}
	req := backend.Request{Model: model, Mode: backend.ModeServer, Messages: msgs, Tools: []chat.Tool{weatherTool},
		Format: json.RawMessage(forcedCall), Options: backend.Options{MaxTokens: 300, Seed: ptr(5)}}
	want := []chat.ToolCall{{Name: "get_weather", Arguments: json.RawMessage(`{"city":"Paris"}`)}}
	for _, streamed := range []bool{false, true} {
		var onChunk func(string) error
		var chunks []string
		if streamed {
			onChunk = func(s string) error { chunks = append(chunks, s); return nil }
		}
		resp, err := b.Generate(ctxFor(t), req, onChunk)
		if err != nil {
			t.Fatalf("streamed %v: %v", streamed, err)
		}
		if diff := cmp.Diff(want, resp.ToolCalls); diff != "" {
			t.Errorf("streamed %v: calls (-want +got):\n%s", streamed, diff)
		}
		if resp.Text != "" || len(chunks) != 0 || resp.StopReason != "stop" || resp.Usage.PromptTokens == 0 || resp.Usage.GeneratedTokens == 0 {
			t.Errorf("streamed %v: text %q chunks %q stop %q usage %+v", streamed, resp.Text, chunks, resp.StopReason, resp.Usage)
		}
	}

	// The call and its result go back; a forced answer that holds no
	// object is text, which Ollama sends with its done message (the
	// grammar lets the model write a space after the string).
	msgs = append(msgs, chat.Message{Role: chat.RoleAssistant, ToolCalls: want},
		chat.ToolResult{CallID: "call_0", Name: "get_weather", Content: "18C, sunny"}.Message())
	var chunks []string
	final, err := b.Generate(ctxFor(t), backend.Request{Model: model, Mode: backend.ModeServer, Messages: msgs, Tools: []chat.Tool{weatherTool},
		Format: json.RawMessage(`{"enum":["Sunny."]}`), Options: req.Options}, func(s string) error { chunks = append(chunks, s); return nil })
	if err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(final.Text) != `"Sunny."` || strings.Join(chunks, "") != final.Text || len(final.ToolCalls) != 0 {
		t.Errorf("final text %q chunks %q calls %+v", final.Text, chunks, final.ToolCalls)
	}

	req.Model = srv.Model // ChatML without .Tools
	_, err = b.Generate(ctxFor(t), req, nil)
	if errKind(err) != backend.KindServer || !strings.Contains(err.Error(), "does not support tools") {
		t.Errorf("a model without tools in its template: err %v", err)
	}
}

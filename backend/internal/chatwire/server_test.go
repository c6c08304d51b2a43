package chatwire

import (
	"encoding/json"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/toolharness/toolharness/backend"
	"github.com/toolharness/toolharness/chat"
)

func TestOpenAIMessages(t *testing.T) {
	in := []chat.Message{
		{Role: chat.RoleDeveloper, Content: "rules"},
		{Role: chat.RoleUser, Content: "weather?"},
		{Role: chat.RoleAssistant, Raw: `<tool_call>{"name":"get_weather"}</tool_call>`,
			ToolCalls: []chat.ToolCall{{ID: "c1", Name: "get_weather", Arguments: json.RawMessage(` {"city": "Paris"} `)}, {ID: "c2", Name: "now"}}},
		{Role: chat.RoleTool, ToolCallID: "c1", Name: "get_weather", Content: "sunny"},
		{Role: chat.RoleAssistant, Content: "It is sunny."},
	}
	got, notes, err := OpenAIMessages("llamacpp", in)
	if err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	// The assistant turn with calls goes as structure, content null and
	// no raw text; arguments as a JSON string, "{}" where there were none.
	want := `[{"role":"system","content":"rules"},{"role":"user","content":"weather?"},` +
		`{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"get_weather","arguments":"{\"city\": \"Paris\"}"}},` +
		`{"id":"c2","type":"function","function":{"name":"now","arguments":"{}"}}]},` +
		`{"role":"tool","content":"sunny","name":"get_weather","tool_call_id":"c1"},{"role":"assistant","content":"It is sunny."}]`
	if string(data) != want {
		t.Errorf("messages:\n got %s\nwant %s", data, want)
	}
	if len(notes) != 1 {
		t.Errorf("notes %q; want the developer note", notes)
	}
}

func TestConvertServerRefuses(t *testing.T) {
	for name, in := range map[string][]chat.Message{
		"no messages":          nil,
		"arguments not JSON":   {{Role: chat.RoleAssistant, ToolCalls: []chat.ToolCall{{Name: "f", Arguments: json.RawMessage(`{"a":`)}}}},
		"arguments not closed": {{Role: chat.RoleAssistant, ToolCalls: []chat.ToolCall{{Name: "f", Arguments: json.RawMessage(`{`)}}}},
	} {
		_, _, err := ConvertServer("ollama", in)
		var e *backend.Error
		if !errors.As(err, &e) || e.Kind != backend.KindUnsupported || e.Backend != "ollama" {
			t.Errorf("%s: err %v; want an unsupported ollama error", name, err)
		}
	}
}

func TestReadCall(t *testing.T) {
	for _, tc := range []struct {
		name, args string
		want       chat.ToolCall
	}{
		{"object", `{"b":1,"a":2}`, chat.ToolCall{ID: "i", Name: "f", Arguments: json.RawMessage(`{"b":1,"a":2}`)}},
		{"string holding an object", `"{\"city\": \"Paris\"}"`, chat.ToolCall{ID: "i", Name: "f", Arguments: json.RawMessage(`{"city": "Paris"}`)}},
		{"empty", ``, chat.ToolCall{ID: "i", Name: "f", Arguments: json.RawMessage(`{}`)}},
		{"empty string", `""`, chat.ToolCall{ID: "i", Name: "f", Arguments: json.RawMessage(`{}`)}},
		{"string holding bad JSON", `"{\"city\": "`, chat.ToolCall{ID: "i", Name: "f", Raw: `{"city": `}},
		{"an array", `[1]`, chat.ToolCall{ID: "i", Name: "f", Raw: `[1]`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := ReadCall("i", "f", json.RawMessage(tc.args))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestCompletionResponse(t *testing.T) {
	for _, tc := range []struct {
		file string
		want backend.Response
	}{
		// A llama-server answer (tools, --jinja): timings carry cache_n.
		{"llamacpp_tool_calls.json", backend.Response{
			StopReason: "stop",
			ToolCalls:  []chat.ToolCall{{ID: "cYZmyZb4TqEh1FMxM2plYi1uyKQZJBvv", Name: "get_weather", Arguments: json.RawMessage(`{"city":"Paris"}`)}},
			Usage: backend.Usage{PromptTokens: 221, GeneratedTokens: 22, CachedTokens: 0, CachedKnown: true,
				PromptDuration: 1234500 * time.Nanosecond, GenerateDuration: 98700 * time.Microsecond},
		}},
		// An OpenAI answer: text, cached_tokens in the usage details.
		{"openai_text.json", backend.Response{
			Text: "It is sunny in Paris.", StopReason: "length",
			Usage: backend.Usage{PromptTokens: 300, GeneratedTokens: 7, CachedTokens: 256, CachedKnown: true},
		}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			data, err := os.ReadFile("testdata/" + tc.file)
			if err != nil {
				t.Fatal(err)
			}
			var c Completion
			if err := json.Unmarshal(data, &c); err != nil {
				t.Fatal(err)
			}
			got, err := c.Response("llamacpp")
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	var c Completion
	if _, err := c.Response("openai"); !errors.Is(err, backend.ErrBadResponse) {
		t.Errorf("no choices: err %v; want bad response", err)
	}
}

package chat

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestMessageRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want Message
		out  string
	}{
		{
			name: "user",
			in:   `{"role":"user","content":"a <b> & c"}`,
			want: Message{Role: RoleUser, Content: "a <b> & c"},
			out:  `{"role":"user","content":"a <b> & c"}`,
		},
		{
			name: "arguments as string",
			in:   `{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{\"b\":1,\"a\":2}"}}]}`,
			want: Message{Role: RoleAssistant, ToolCalls: []ToolCall{{ID: "c1", Name: "f", Arguments: json.RawMessage(`{"b":1,"a":2}`)}}},
			out:  `{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{\"b\":1,\"a\":2}"}}]}`,
		},
		{
			name: "arguments as object",
			in:   `{"role":"assistant","tool_calls":[{"type":"function","function":{"name":"f","arguments":{"z":[1,2],"a":"x"}}}]}`,
			want: Message{Role: RoleAssistant, ToolCalls: []ToolCall{{Name: "f", Arguments: json.RawMessage(`{"z":[1,2],"a":"x"}`)}}},
			out:  `{"role":"assistant","content":null,"tool_calls":[{"type":"function","function":{"name":"f","arguments":"{\"z\":[1,2],\"a\":\"x\"}"}}]}`,
		},
		{
			name: "tool result",
			in:   `{"role":"tool","tool_call_id":"c1","name":"f","content":"ok"}`,
			want: Message{Role: RoleTool, ToolCallID: "c1", Name: "f", Content: "ok"},
			out:  `{"role":"tool","content":"ok","tool_call_id":"c1","name":"f"}`,
		},
		{
			name: "content parts",
			in:   `{"role":"user","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}`,
			want: Message{Role: RoleUser, Content: "ab"},
			out:  `{"role":"user","content":"ab"}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var m Message
			if err := json.Unmarshal([]byte(tt.in), &m); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, m); diff != "" {
				t.Errorf("decode (-want +got):\n%s", diff)
			}
			out, err := Marshal(m)
			if err != nil {
				t.Fatal(err)
			}
			if string(out) != tt.out {
				t.Errorf("encode:\n got %s\nwant %s", out, tt.out)
			}
		})
	}
}

func TestMessageErrors(t *testing.T) {
	for _, in := range []string{
		`{"role":"wizard","content":"x"}`,
		`{"role":"assistant","tool_calls":[{"function":{"name":"f","arguments":"not json"}}]}`,
		`{"role":"assistant","tool_calls":[{"function":{"name":"f","arguments":[1]}}]}`,
		`{"role":"assistant","tool_calls":[{"function":{"arguments":{}}}]}`,
		`{"role":"user","content":[{"type":"image_url"}]}`,
		`{"role":"user","content":5}`,
	} {
		var m Message
		err := json.Unmarshal([]byte(in), &m)
		if err == nil {
			t.Errorf("%s: no error", in)
			continue
		}
		if !strings.HasPrefix(err.Error(), "chat: ") {
			t.Errorf("%s: error %q lacks the package prefix", in, err)
		}
	}
}

func TestParseToolsShapes(t *testing.T) {
	want := []Tool{{Name: "get_weather", Description: "Weather.", Parameters: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`)}}
	inputs := map[string]string{
		"openai":      `[{"type":"function","function":{"name":"get_weather","description":"Weather.","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}}]`,
		"openai body": `{"model":"x","tools":[{"type":"function","function":{"name":"get_weather","description":"Weather.","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}}]}`,
		"bare":        `[{"name":"get_weather","description":"Weather.","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}]`,
		"anthropic":   `[{"name":"get_weather","description":"Weather.","input_schema":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}]`,
		"gemini":      `{"function_declarations":[{"name":"get_weather","description":"Weather.","parameters":{"type":"OBJECT","properties":{"city":{"type":"STRING"}},"required":["city"]}}]}`,
		"gemini list": `[{"functionDeclarations":[{"name":"get_weather","description":"Weather.","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}]}]`,
		"single":      `{"name":"get_weather","description":"Weather.","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}`,
		"yaml":        "tools:\n  - name: get_weather\n    description: Weather.\n    parameters:\n      type: object\n      properties:\n        city:\n          type: string\n      required: [city]\n",
		"spaced json": "  \n[{\"name\":\"get_weather\",\"description\":\"Weather.\",\"parameters\":{\"type\":\"object\",\"properties\":{\"city\":{\"type\":\"string\"}},\"required\":[\"city\"]}}]",
	}
	for name, in := range inputs {
		t.Run(name, func(t *testing.T) {
			got, err := ParseTools([]byte(in))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseToolsErrors(t *testing.T) {
	for _, in := range []string{
		``,
		`[{"description":"no name"}]`,
		`[{"name":"a","parameters":[1]}]`,
		`[{"name":"a"},{"name":"a"}]`,
		`[{"type":"retrieval","function":{"name":"a"}}]`,
		"tools: [unclosed",
	} {
		if _, err := ParseTools([]byte(in)); err == nil {
			t.Errorf("%q: no error", in)
		}
	}
}

func TestToolMarshalKeepsSchemaBytes(t *testing.T) {
	tool := Tool{Name: "f", Description: "use <x> & y", Parameters: json.RawMessage(`{"type":"object","properties":{"b":{"type":"number","default":1.0},"a":{"type":"string"}}}`)}
	out, err := Marshal(tool)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"type":"function","function":{"name":"f","description":"use <x> & y","parameters":{"type":"object","properties":{"b":{"type":"number","default":1.0},"a":{"type":"string"}}}}}`
	if string(out) != want {
		t.Errorf("got  %s\nwant %s", out, want)
	}
}

func TestParseConversation(t *testing.T) {
	c, err := ParseConversation([]byte(`{"messages":[{"role":"user","content":"hi"}],"tools":[{"name":"f","input_schema":{"type":"object"}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Messages) != 1 || len(c.Tools) != 1 || c.Tools[0].Name != "f" {
		t.Errorf("got %+v", c)
	}
	if _, err := ParseConversation([]byte(`{"tools":[]}`)); err == nil {
		t.Error("object without messages: no error")
	}
	c, err = ParseConversation([]byte(`[{"role":"system","content":"s"},{"role":"user","content":"u"}]`))
	if err != nil || len(c.Messages) != 2 {
		t.Errorf("list: %v %+v", err, c)
	}
}

func TestOrderedRoundTrip(t *testing.T) {
	for _, in := range []string{
		`{"z":1,"a":{"y":[1,2.50,"x"],"b":null},"m":true}`,
		`[1e-05,{"<":"&"}]`,
		`"plain"`,
	} {
		v, err := DecodeOrdered([]byte(in))
		if err != nil {
			t.Fatal(err)
		}
		out, err := EncodeOrdered(v)
		if err != nil {
			t.Fatal(err)
		}
		if string(out) != in {
			t.Errorf("got %s want %s", out, in)
		}
	}
	if _, err := DecodeOrdered([]byte(`{"a":1} x`)); err == nil {
		t.Error("trailing data: no error")
	}
}

func TestArgumentsMap(t *testing.T) {
	m, err := ToolCall{Name: "f", Arguments: json.RawMessage(`{"n":5}`)}.ArgumentsMap()
	if err != nil || m["n"] != json.Number("5") {
		t.Errorf("got %v %v", m, err)
	}
	m, err = ToolCall{Name: "f"}.ArgumentsMap()
	if err != nil || len(m) != 0 {
		t.Errorf("empty: %v %v", m, err)
	}
}

// TestMessageReasoningKeys: reasoning reaches the message under the Hugging
// Face key and under the other keys servers and clients use, on a
// tool-call turn without content too; reasoning_content wins.
func TestMessageReasoningKeys(t *testing.T) {
	call := `"tool_calls": [{"type": "function", "function": {"name": "f", "arguments": {}}}]`
	tests := []struct {
		name, in, want string
	}{
		{"reasoning_content", `{"role": "assistant", "reasoning_content": "r", ` + call + `}`, "r"},
		{"reasoning", `{"role": "assistant", "reasoning": "r", ` + call + `}`, "r"},
		{"thinking", `{"role": "assistant", "thinking": "r", "content": null, ` + call + `}`, "r"},
		{"reasoning_content wins", `{"role": "assistant", "thinking": "t", "reasoning": "x", "reasoning_content": "r", "content": "a"}`, "r"},
		{"reasoning before thinking", `{"role": "assistant", "thinking": "t", "reasoning": "x", "content": "a"}`, "x"},
		{"none", `{"role": "assistant", "content": "a"}`, ""},
	}
	for _, tt := range tests {
		var m Message
		if err := json.Unmarshal([]byte(tt.in), &m); err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if m.Reasoning != tt.want {
			t.Errorf("%s: reasoning %q, want %q", tt.name, m.Reasoning, tt.want)
		}
	}
	var m Message
	if err := json.Unmarshal([]byte(`{"role": "assistant", "reasoning": {"effort": "high"}}`), &m); err == nil || !strings.HasPrefix(err.Error(), "chat: message: ") {
		t.Errorf("reasoning as an object: %v, want a chat: message error", err)
	}
}

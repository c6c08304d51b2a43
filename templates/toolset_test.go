package templates

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/toolharness/toolharness/chat"
)

// TestDirectValuesMatchJSON checks that the engine values a family builds
// from Go values render exactly as the JSON text of the same messages and
// tools does (what transformers reads), invalid UTF-8 and numbers
// included, with and without a prepared tool set.
func TestDirectValuesMatchJSON(t *testing.T) {
	tools := []chat.Tool{
		{Name: "get_weather", Description: "Weather \xff for <a city>.", Parameters: json.RawMessage(`{"type": "object", "properties": {"city": {"type": "string", "default": "Paris"}, "n": {"type": "number", "default": 1.50}}, "required": ["city"]}`)},
		{Name: "read_file", Description: "Read.", Parameters: json.RawMessage(`{"type": "object", "properties": {"path": {"type": "string"}}}`)},
	}
	msgs := []chat.Message{
		{Role: chat.RoleSystem, Content: "Be brief \xc3."},
		{Role: chat.RoleUser, Content: "Weather in \xffParis?"},
		{Role: chat.RoleAssistant, Content: "", Reasoning: "think", ToolCalls: []chat.ToolCall{{ID: "call00001", Name: "get_weather", Arguments: json.RawMessage(`{"city": "Paris", "n": 2, "x": 1e3, "y": [true, null]}`)}}},
		{Role: chat.RoleTool, ToolCallID: "call00001", Name: "get_weather", Content: "18 C \xfe"},
	}
	for _, name := range []string{"qwen3", "llama3.1", "phi4-mini", "mistral-small3"} {
		f, err := Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		rawMsgs, err := JinjaMessages(f.Conventions, msgs, tools)
		if err != nil {
			t.Fatal(err)
		}
		rawTools, err := JinjaTools(tools)
		if err != nil {
			t.Fatal(err)
		}
		want, err := f.Jinja().Render(JinjaVars{Messages: rawMsgs, Tools: rawTools, AddGenerationPrompt: true, Now: conformanceNow})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		ts, err := NewToolSet(tools)
		if err != nil {
			t.Fatal(err)
		}
		for _, in := range []Input{
			{Messages: msgs, Tools: tools, AddGenerationPrompt: true, Now: conformanceNow},
			{Messages: msgs, ToolSet: ts, AddGenerationPrompt: true, Now: conformanceNow},
		} {
			got, err := f.Render(in)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("%s: direct values render differently from JSON (-json +direct):\n%s", name, d)
			}
		}
	}
}

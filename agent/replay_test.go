package agent

import (
	"strings"
	"testing"

	"github.com/toolharness/toolharness/chat"
)

// TestReplayPrompt: a conversation whose assistant turns carry their raw
// text renders, at each assistant turn, as the prompt before it plus the
// raw text, as the session that produced it did; one without raw text is
// rendered whole from its calls.
func TestReplayPrompt(t *testing.T) {
	r, err := NewRenderer(RendererOptions{Template: "qwen2.5"})
	if err != nil {
		t.Fatal(err)
	}
	sys := System{Text: "Be brief.", Tools: []chat.Tool{{Name: "get_weather", Parameters: []byte(`{"type":"object","properties":{"city":{"type":"string"}}}`)}}}
	raw := "Let me see.  \n<tool_call>\n{\"name\":  \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>"
	call := chat.ToolCall{ID: "call_1", Name: "get_weather", Arguments: []byte(`{"city":"Paris"}`)}
	hist := []Msg{
		{Message: chat.Message{Role: chat.RoleUser, Content: "Weather in Paris?"}},
		{Message: chat.Message{Role: chat.RoleAssistant, Content: "Let me see.", ToolCalls: []chat.ToolCall{call}, Raw: raw}},
		{Message: chat.Message{Role: chat.RoleTool, ToolCallID: "call_1", Name: "get_weather", Content: "sunny"}},
		{Message: chat.Message{Role: chat.RoleAssistant, Content: "Sunny.", Raw: "Sunny."}},
		{Message: chat.Message{Role: chat.RoleUser, Content: "Thanks."}},
	}
	prev := ""
	for i, m := range hist {
		if m.Role != chat.RoleAssistant {
			continue
		}
		before, err := ReplayPrompt(r, sys, hist[:i])
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(before, prev) {
			t.Fatalf("the prompt before turn %d does not extend the previous prompt and reply", i)
		}
		prev = before + m.Raw
	}
	all, err := ReplayPrompt(r, sys, hist)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(all, prev) {
		t.Errorf("the whole prompt does not extend the last prompt and reply:\n%q\n%q", prev, all)
	}
	// Without raw text, the turn is rendered from its call.
	hist[1].Raw = ""
	whole, err := ReplayPrompt(r, sys, hist)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(whole, "Let me see.  \n") || !strings.Contains(whole, "get_weather") {
		t.Errorf("a turn without raw text was not rendered from its call:\n%s", whole)
	}
}

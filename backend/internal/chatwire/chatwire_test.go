package chatwire

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/toolharness/toolharness/backend"
	"github.com/toolharness/toolharness/chat"
)

func TestConvert(t *testing.T) {
	for _, tc := range []struct {
		name  string
		in    []chat.Message
		want  []Message
		notes []string
	}{
		{"roles and raw text", []chat.Message{
			{Role: chat.RoleDeveloper, Content: "rules"},
			{Role: chat.RoleUser, Content: "hi"},
			{Role: chat.RoleAssistant, Content: "parsed", Raw: `<tool_call>{"name":"f"}</tool_call>`, ToolCalls: []chat.ToolCall{{Name: "f"}}},
			{Role: chat.RoleTool, Name: "f", ToolCallID: "1", Content: "42"},
			{Role: chat.RoleDeveloper, Content: "more rules"},
		}, []Message{
			{Role: "system", Content: "rules"},
			{Role: "user", Content: "hi"},
			{Role: "assistant", Content: `<tool_call>{"name":"f"}</tool_call>`},
			{Role: "tool", Content: "42", Name: "f", ToolCallID: "1"},
			{Role: "system", Content: "more rules"},
		}, []string{"sent 2 developer message(s) with role system: local servers' chat templates know system only"}},
		{"nothing changed", []chat.Message{
			{Role: chat.RoleSystem, Content: "rules"},
			{Role: chat.RoleAssistant, Content: "plain answer"},
		}, []Message{{Role: "system", Content: "rules"}, {Role: "assistant", Content: "plain answer"}}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, notes, err := Convert("ollama", tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("messages (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.notes, notes); diff != "" {
				t.Errorf("notes (-want +got):\n%s", diff)
			}
		})
	}
}

func TestConvertRefuses(t *testing.T) {
	for name, in := range map[string][]chat.Message{
		"no messages":            nil,
		"calls without raw text": {{Role: chat.RoleUser, Content: "x"}, {Role: chat.RoleAssistant, ToolCalls: []chat.ToolCall{{Name: "f"}}}},
	} {
		_, _, err := Convert("openai", in)
		var e *backend.Error
		if !errors.As(err, &e) || e.Kind != backend.KindUnsupported || e.Backend != "openai" {
			t.Errorf("%s: err %v; want an unsupported openai error", name, err)
		}
	}
}

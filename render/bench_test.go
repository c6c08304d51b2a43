package render

import (
	"fmt"
	"testing"

	"github.com/toolharness/toolharness/chat"
	"github.com/toolharness/toolharness/templates"
)

func benchConversation(turns int) []chat.Message {
	msgs := []chat.Message{{Role: chat.RoleSystem, Content: "You are a helpful assistant."}, {Role: chat.RoleUser, Content: "Weather?"}}
	for i := 0; i < turns; i++ {
		id := fmt.Sprintf("call%05d", i)
		msgs = append(msgs,
			chat.Message{Role: chat.RoleAssistant, ToolCalls: []chat.ToolCall{{ID: id, Name: "get_weather", Arguments: []byte(`{"location":"Paris"}`)}}},
			chat.Message{Role: chat.RoleTool, ToolCallID: id, Content: "18 C and cloudy </tool_response>"})
	}
	return msgs
}

// BenchmarkPrompt renders a 20-turn tool conversation in full (what a
// harness without a prefix builder does every turn).
func BenchmarkPrompt(b *testing.B) {
	tools := testTools(&testing.T{})
	msgs := benchConversation(20)
	for _, name := range []string{"qwen3", "gpt-oss", "llama3.2"} {
		fam, err := templates.Lookup(name)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if _, err := Prompt(Request{Family: fam, Messages: msgs, Tools: tools, Now: fixedNow}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkLookup measures loading and parsing one family's template.
func BenchmarkLookup(b *testing.B) {
	for i := 0; i < b.N; i++ {
		if _, err := templates.Lookup("qwen3"); err != nil {
			b.Fatal(err)
		}
	}
}

package chatwire

import (
	"fmt"

	"github.com/toolharness/toolharness/backend"
	"github.com/toolharness/toolharness/chat"
)

// Message is one message as a text-only chat endpoint takes it.
type Message struct {
	Role       string
	Content    string
	Name       string
	ToolCallID string
}

// Convert converts msgs for backend backendName, and returns the notes of
// what it changed. Its errors are *backend.Error of KindUnsupported.
func Convert(backendName string, msgs []chat.Message) ([]Message, []string, error) {
	if len(msgs) == 0 {
		return nil, nil, &backend.Error{Kind: backend.KindUnsupported, Backend: backendName, Message: "chat mode needs messages"}
	}
	out := make([]Message, 0, len(msgs))
	developers := 0
	for i, m := range msgs {
		content := m.Content
		if m.Role == chat.RoleAssistant && m.Raw != "" {
			content = m.Raw
		}
		if m.Role == chat.RoleAssistant && len(m.ToolCalls) > 0 && m.Raw == "" && m.Content == "" {
			return nil, nil, &backend.Error{Kind: backend.KindUnsupported, Backend: backendName,
				Message: fmt.Sprintf("message %d: assistant tool calls without their raw text cannot be sent in chat mode", i)}
		}
		role := string(m.Role)
		if m.Role == chat.RoleDeveloper {
			role = string(chat.RoleSystem)
			developers++
		}
		out = append(out, Message{Role: role, Content: content, Name: m.Name, ToolCallID: m.ToolCallID})
	}
	var notes []string
	if developers > 0 {
		notes = append(notes, fmt.Sprintf("sent %d developer message(s) with role system: local servers' chat templates know system only", developers))
	}
	return out, notes, nil
}

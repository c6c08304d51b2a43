package ollama

import (
	"encoding/json"
	"fmt"

	"github.com/ollama/ollama/api"

	"github.com/toolharness/toolharness/backend"
	"github.com/toolharness/toolharness/backend/internal/chatwire"
	"github.com/toolharness/toolharness/chat"
)

// serverMessages converts the conversation for /api/chat in server mode:
// assistant calls as structures (arguments as objects, key order kept),
// tool results with their tool's name.
func serverMessages(in []chat.Message) ([]api.Message, []string, error) {
	msgs, notes, err := chatwire.ConvertServer(name, in)
	if err != nil {
		return nil, nil, err
	}
	out := make([]api.Message, len(msgs))
	for i, m := range msgs {
		w := api.Message{Role: m.Role, Content: m.Content, ToolName: m.Name, ToolCallID: m.ToolCallID}
		for _, c := range m.ToolCalls {
			tc := api.ToolCall{ID: c.ID, Function: api.ToolCallFunction{Name: c.Name, Arguments: api.NewToolCallFunctionArguments()}}
			if len(c.Arguments) > 0 {
				if err := json.Unmarshal(c.Arguments, &tc.Function.Arguments); err != nil {
					return nil, nil, &backend.Error{Kind: backend.KindUnsupported, Backend: name,
						Message: fmt.Sprintf("message %d: call %q: arguments are not a JSON object: %v", i, c.Name, err)}
				}
			}
			w.ToolCalls = append(w.ToolCalls, tc)
		}
		out[i] = w
	}
	return out, notes, nil
}

// serverTools converts tools for the tools field. Ollama's client reads a
// tool's parameters into its own types, which keep the top level's type,
// required, properties, items and $defs and each property's type,
// description, enum, items, anyOf and nested properties: a schema keyword
// beyond those (a nested required list, minimum, pattern) does not reach
// the server.
func serverTools(tools []chat.Tool) (api.Tools, error) {
	data, err := chat.MarshalTools(tools)
	if err != nil {
		return nil, &backend.Error{Kind: backend.KindUnsupported, Backend: name, Message: fmt.Sprintf("tools: %v", err)}
	}
	var out api.Tools
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, &backend.Error{Kind: backend.KindUnsupported, Backend: name, Message: fmt.Sprintf("tools do not fit Ollama's tool type: %v", err)}
	}
	return out, nil
}

// readCalls converts the calls of an /api/chat answer.
func readCalls(calls []api.ToolCall) []chat.ToolCall {
	var out []chat.ToolCall
	for _, c := range calls {
		args, err := json.Marshal(c.Function.Arguments)
		if err != nil {
			args = nil
		}
		out = append(out, chatwire.ReadCall(c.ID, c.Function.Name, args))
	}
	return out
}

// serverSize is the bytes of a server-mode request that become prompt
// tokens: contents, call arguments and the tools the template renders.
func serverSize(msgs []api.Message, tools api.Tools) int {
	size := 0
	for _, m := range msgs {
		size += len(m.Content) + perMessageOverhead
		for _, c := range m.ToolCalls {
			size += len(c.Function.Name) + len(c.Function.Arguments.String())
		}
	}
	if data, err := json.Marshal(tools); err == nil {
		size += len(data)
	}
	return size
}

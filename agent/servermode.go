package agent

import (
	"fmt"

	"github.com/toolharness/toolharness/backend"
	"github.com/toolharness/toolharness/chat"
	"github.com/toolharness/toolharness/parse"
	"github.com/toolharness/toolharness/render"
)

// Server mode (backend.ModeServer): the tools go in the API's tools
// field, the server's own template renders them and its own parser
// returns the calls (backend.Response.ToolCalls). The harness renders no
// catalog and parses nothing; it still validates every call against the
// tool's schema, runs it, and retries with the same model-facing errors,
// so that a comparison with raw or chat mode isolates the parsing.

// textParser is the parser of server mode: the server has taken the
// calls out of the reply, so every byte it returns is text.
type textParser struct{}

func (textParser) Feed(chunk string) []Event {
	if chunk == "" {
		return nil
	}
	return []Event{{Kind: EventText, Text: chunk}}
}

func (textParser) Close() []Event { return nil }

// ServerMessages is the message list of server mode: the system text
// without a catalog (the server renders the tools), then the history with
// each user message carrying the reminders it was first sent with, so a
// message never changes once sent, and assistant turns as their content
// and structured calls.
func ServerMessages(sys System, hist []Msg) ([]chat.Message, error) {
	var out []chat.Message
	if sys.Text != "" {
		out = append(out, chat.Message{Role: chat.RoleSystem, Content: sys.Text})
	}
	for _, m := range hist {
		msg := m.Message
		if msg.Role == chat.RoleUser && len(m.Reminders) > 0 {
			with, err := render.WithReminders([]chat.Message{msg}, m.Reminders...)
			if err != nil {
				return nil, fmt.Errorf("agent: %w", err)
			}
			msg = with[0]
		}
		msg.Raw = "" // the calls travel as structures, never as text
		out = append(out, msg)
	}
	return out, nil
}

// serverCallEvents are the call events of the calls the server's parser
// returned. A call whose arguments the server sent as something other
// than a JSON object is a bad_arguments parse error of that call, whose
// result tells the model so, like a malformed call in the other modes.
func serverCallEvents(calls []chat.ToolCall) []Event {
	var evs []Event
	for i, c := range calls {
		call := c
		if call.ID == "" {
			// Ollama sends no ids; results are matched to calls by them.
			call.ID = fmt.Sprintf("call_%d", i)
		}
		ev := Event{Kind: EventCall, Call: &call}
		if call.Arguments == nil {
			ev.Err = &ParseError{Kind: string(parse.KindBadArguments), attached: true,
				Message: fmt.Sprintf("the arguments of the call to %q are not a JSON object: %.200q", call.Name, call.Raw)}
			call.Arguments = []byte("{}")
		}
		evs = append(evs, Event{Kind: EventCallStart, Call: &chat.ToolCall{Name: call.Name}}, ev)
	}
	return evs
}

// checkServerMode refuses what server mode cannot do: a schema
// constraint would fight the server's own tool-call grammar.
func checkServerMode(mode backend.Mode, constrained bool) error {
	if mode == backend.ModeServer && constrained {
		return fmt.Errorf("agent: --constrained cannot be used in server mode: the server constrains its own tool calls (or not)")
	}
	return nil
}

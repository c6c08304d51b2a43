package agent

import (
	"encoding/json"

	"github.com/toolharness/toolharness/chat"
	"github.com/toolharness/toolharness/parse"
)

// TraceCall is a call as the trace writes it.
type TraceCall struct {
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	Raw       string          `json:"raw,omitempty"`
	Offset    int             `json:"offset"`
	Repairs   []string        `json:"repairs,omitempty"`
}

// TraceResult is a result as the trace writes it.
type TraceResult struct {
	CallID  string `json:"call_id"`
	Name    string `json:"name"`
	Content string `json:"content"`
	IsError bool   `json:"is_error,omitempty"`
}

func traceCall(c chat.ToolCall) TraceCall {
	args := c.Arguments
	if len(args) > 0 && !json.Valid(args) {
		// Keep undecodable arguments as a JSON string, never lose them.
		q, _ := chat.Marshal(string(args))
		args = q
	}
	return TraceCall{ID: c.ID, Name: c.Name, Arguments: args, Raw: c.Raw, Offset: c.Offset, Repairs: c.Repairs}
}

func traceCalls(cs []chat.ToolCall) []TraceCall {
	var out []TraceCall
	for _, c := range cs {
		out = append(out, traceCall(c))
	}
	return out
}

func traceResults(rs []chat.ToolResult) []TraceResult {
	var out []TraceResult
	for _, r := range rs {
		out = append(out, TraceResult{CallID: r.CallID, Name: r.Name, Content: r.Content, IsError: r.IsError})
	}
	return out
}

// MarshalJSON writes the event with its call in the trace's shape.
func (e Event) MarshalJSON() ([]byte, error) {
	type plain struct {
		Kind EventKind   `json:"type"`
		Text string      `json:"text,omitempty"`
		Part parse.Part  `json:"part,omitempty"`
		Call *TraceCall  `json:"call,omitempty"`
		Err  *ParseError `json:"error,omitempty"`
	}
	p := plain{Kind: e.Kind, Text: e.Text, Part: e.Part, Err: e.Err}
	if e.Call != nil {
		c := traceCall(*e.Call)
		p.Call = &c
	}
	return chat.Marshal(p)
}

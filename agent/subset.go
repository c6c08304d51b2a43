package agent

import (
	"context"

	"github.com/toolharness/toolharness/chat"
)

// Subset is a toolbox limited to the tools keep accepts, for sub-agents:
// the catalog lists only them and a call to any other is refused as an
// unknown tool. Calls run in the inner toolbox, so its at-most-once set
// covers them.
func Subset(inner Toolbox, keep func(name string) bool) Toolbox {
	return subset{inner: inner, keep: keep}
}

type subset struct {
	inner Toolbox
	keep  func(string) bool
}

func (s subset) Core() []chat.Tool {
	var out []chat.Tool
	for _, t := range s.inner.Core() {
		if s.keep(t.Name) {
			out = append(out, t)
		}
	}
	return out
}

func (s subset) Reminder() string { return "" }

func (s subset) Validate(call chat.ToolCall) (chat.ToolCall, string, string) {
	if !s.keep(call.Name) {
		return call, "unknown_tool", unknownToolProblem(call.Name, s.Core())
	}
	return s.inner.Validate(call)
}

func (s subset) Execute(ctx context.Context, call chat.ToolCall) Outcome {
	if !s.keep(call.Name) {
		return Outcome{Call: call, Mistake: "unknown_tool", Result: chat.ToolResult{CallID: call.ID, Name: call.Name,
			IsError: true, Content: unknownToolProblem(call.Name, s.Core())}}
	}
	return s.inner.Execute(ctx, call)
}

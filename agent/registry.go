package agent

import (
	"context"

	"github.com/toolharness/toolharness/chat"
	"github.com/toolharness/toolharness/registry"
)

// RegistryTools adapts a registry to the loop's Toolbox.
func RegistryTools(r *registry.Registry) Toolbox { return regTools{r} }

type regTools struct{ r *registry.Registry }

func (t regTools) Core() []chat.Tool { return t.r.CoreTools() }
func (t regTools) Reminder() string  { return t.r.DeferredReminder() }

func (t regTools) Validate(call chat.ToolCall) (chat.ToolCall, string, string) {
	v, err := t.r.Validate(call)
	if err != nil {
		if re, ok := err.(*registry.Error); ok {
			return call, string(re.Kind), re.ModelMessage()
		}
		return call, string(registry.KindInvalidArguments), err.Error()
	}
	return v.Call, "", ""
}

func (t regTools) Execute(ctx context.Context, call chat.ToolCall) Outcome {
	o := t.r.ExecuteOne(ctx, call)
	out := Outcome{Call: o.Call, Result: o.Result, Ran: o.Ran}
	if o.Err != nil {
		if _, isMistake := registry.MistakeOf(o.Err.Kind); isMistake {
			out.Mistake = string(o.Err.Kind)
		}
	}
	return out
}

// mistakeOf maps a step's mistake kind to the retry policy's.
func mistakeOf(kind string) registry.Mistake {
	switch kind {
	case string(registry.KindUnknownTool):
		return registry.MistakeUnknownTool
	case string(registry.KindInvalidArguments), string(registry.KindMalformedArguments):
		return registry.MistakeInvalidArguments
	case "no_call":
		return registry.MistakeNoCall
	}
	return registry.MistakeParseError
}

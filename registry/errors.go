package registry

import (
	"fmt"
	"strings"
)

// Kind classifies a failed call; callers branch on it (the agent's retry
// policy, the benchmark's failure counts). The list is closed.
type Kind string

// The kinds of failure.
const (
	KindUnknownTool        Kind = "unknown_tool"
	KindInvalidArguments   Kind = "invalid_arguments"
	KindMalformedArguments Kind = "malformed_arguments" // not a JSON object
	KindDenied             Kind = "denied"              // refused by the approval hook
	KindTimeout            Kind = "timeout"
	KindPanic              Kind = "panic"
	KindToolError          Kind = "tool_error" // the handler returned an error
	KindCanceled           Kind = "canceled"
)

// Cause is one reason a call's arguments were refused.
type Cause struct {
	// Path is where in the arguments the problem is, as the model would
	// write it: "city", "filter.tags[0]"; "(arguments)" for the whole object.
	Path string `json:"path"`
	// Keyword is the JSON Schema keyword that failed ("required", "type",
	// "enum", "pattern", "minimum", "additionalProperties", …).
	Keyword string `json:"keyword"`
	// Text says what was expected and what was given.
	Text string `json:"text"`
}

func (c Cause) String() string { return c.Path + ": " + c.Text }

// Error is a failed call. Error() is for the harness (logs, traces);
// ModelMessage is the text the model gets back as the call's result. The two
// are kept apart so harness detail never leaks into the prompt and the
// model-facing text stays short and stable.
type Error struct {
	Kind   Kind
	Tool   string
	CallID string
	// Causes are sorted by path, then keyword, then text.
	Causes []Cause
	// Suggestions are the closest registered names for an unknown tool.
	Suggestions []string
	// Example is the corrected example call, in the session's format.
	Example string
	// Message is the model-facing text.
	Message string
	// Err is the underlying error, if any (handler error, context error).
	Err error
}

func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "registry: %s: %s", e.Kind, e.Tool)
	if e.CallID != "" {
		fmt.Fprintf(&b, " (call %s)", e.CallID)
	}
	for i, c := range e.Causes {
		if i == 0 {
			b.WriteString(": ")
		} else {
			b.WriteString("; ")
		}
		b.WriteString(c.String())
	}
	if e.Err != nil {
		fmt.Fprintf(&b, ": %v", e.Err)
	}
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// ModelMessage returns the text for the model.
func (e *Error) ModelMessage() string { return e.Message }

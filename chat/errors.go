package chat

import (
	"encoding/json"
	"errors"
	"fmt"
)

// InputError is a tools or messages document that cannot be read. Error
// says it as the package's other errors do; Cause says it in the terms of
// the person who wrote the document (no package names, tools counted from
// 1), for a command line to print.
type InputError struct {
	Doc   string // "tools" or "messages"
	Index int    // the tool's place in the list, from 0; -1 when no one tool is at fault
	Path  string // where inside that tool, e.g. "function_declarations[2]"; may be empty
	Err   error
}

func (e *InputError) Error() string {
	where := e.Doc
	if e.Index >= 0 {
		where = fmt.Sprintf("%s[%d]", e.Doc, e.Index)
	}
	if e.Path != "" {
		where += ": " + e.Path
	}
	return "chat: " + where + ": " + e.Err.Error()
}

func (e *InputError) Unwrap() error { return e.Err }

// Cause is the error in the document's terms: "tool 2: parameters must be
// a JSON Schema object", "tool 1 has no name", "messages: …". A JSON type
// mismatch is said by jsonType, which a caller supplies because
// encoding/json's own text names Go types.
func (e *InputError) Cause(jsonType func(*json.UnmarshalTypeError) string) string {
	where := e.Doc
	if e.Index >= 0 {
		where = fmt.Sprintf("tool %d", e.Index+1)
	}
	if e.Path != "" {
		where += ": " + e.Path
	}
	var te *ToolError
	if errors.As(e.Err, &te) && te.Name == "" && te.Err == nil {
		return where + " has no name"
	}
	var ute *json.UnmarshalTypeError
	switch {
	case errors.As(e.Err, &ute):
		return where + ": " + jsonType(ute)
	case errors.As(e.Err, &te) && te.Err == nil:
		return fmt.Sprintf("%s (%q): %s", where, te.Name, te.Reason)
	case te != nil:
		return where + ": " + te.Err.Error()
	}
	return where + ": " + e.Err.Error()
}

// ToolError is one tool definition that cannot be read.
type ToolError struct {
	Name   string // the tool's name; "" when it has none
	Reason string // what is wrong (for a tool without a name, the start of its text)
	Err    error  // the decoding error, when that is what is wrong
}

func (e *ToolError) Error() string { return "chat: " + e.cause() }

func (e *ToolError) cause() string {
	switch {
	case e.Err != nil:
		return "tool: " + e.Err.Error()
	case e.Name == "":
		return "tool without a name: " + e.Reason
	}
	return fmt.Sprintf("tool %q: %s", e.Name, e.Reason)
}

func (e *ToolError) Unwrap() error { return e.Err }

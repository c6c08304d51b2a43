package chat

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
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

// Cause is the error in the document's terms, for a command line that
// names the document: "tool 2 ("f"): parameters must be a JSON Schema
// object", "tool 1 has no name", "messages: …"; a JSON type mismatch in
// JSON's words (encoding/json's own text names Go types).
func (e *InputError) Cause() string {
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
		return where + ": " + jsonTypeWords(ute)
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

// jsonTypeWords says a JSON type mismatch without Go's names.
func jsonTypeWords(e *json.UnmarshalTypeError) string {
	want := "something else"
	if e.Type != nil {
		want = goTypeWords(e.Type.String())
	}
	if e.Field == "" {
		return fmt.Sprintf("a JSON %s where %s was expected", e.Value, want)
	}
	return fmt.Sprintf("%q is a %s, want %s", e.Field, e.Value, want)
}

// goTypeWords says a Go type as JSON: "string" → "a string".
func goTypeWords(t string) string {
	switch {
	case t == "string":
		return "a string"
	case strings.HasPrefix(t, "[]"):
		return "a list"
	case strings.HasPrefix(t, "map[") || strings.Contains(t, "."):
		return "an object"
	case strings.HasPrefix(t, "int") || strings.HasPrefix(t, "float") || strings.HasPrefix(t, "uint"):
		return "a number"
	case t == "bool":
		return "true or false"
	}
	return "a " + t
}

package chat

import (
	"errors"
	"testing"
)

// TestInputErrorCause: every way a tools or messages document can be
// wrong is a *InputError whose Cause says it in the document's terms, and
// whose Error keeps the package's prefix for logs.
func TestInputErrorCause(t *testing.T) {
	tests := []struct {
		name, doc, cause, text string
		messages               bool
	}{
		{name: "no name", doc: `[{"name":"a"},{"description":"d"}]`, cause: "tool 2 has no name",
			text: `chat: tools[1]: chat: tool without a name: {"description":"d"}`},
		{name: "parameters", doc: `[{"name":"a","parameters":[1]}]`, cause: `tool 1 ("a"): parameters must be a JSON Schema object`},
		{name: "type mismatch", doc: `[5]`, cause: "tool 1: a JSON number where an object was expected"},
		{name: "not a function", doc: `[{"type":"x","function":{"name":"f"}}]`, cause: `tool 1 ("f"): type "x" is not supported (function only)`},
		{name: "duplicate", doc: `[{"name":"a"},{"name":"a"}]`, cause: `tools: duplicate tool name "a"`},
		{name: "neither list nor object", doc: `"x"`, cause: "tools: expected a list or a mapping"},
		{name: "gemini", doc: `[{"function_declarations":[{"name":"g"},{"description":"d"}]}]`,
			cause: "tool 1: function_declarations[1] has no name"},
		{name: "messages list", doc: `{"tools":[]}`, messages: true, cause: `messages: object has no "messages" list`},
		{name: "messages type", doc: `[5]`, messages: true, cause: "messages: a JSON number where an object was expected"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var err error
			if tt.messages {
				_, err = ParseConversation([]byte(tt.doc))
			} else {
				_, err = ParseTools([]byte(tt.doc))
			}
			var ie *InputError
			if !errors.As(err, &ie) {
				t.Fatalf("error %v (%T), want a *InputError", err, err)
			}
			if got := ie.Cause(); got != tt.cause {
				t.Errorf("Cause = %q, want %q", got, tt.cause)
			}
			if tt.text != "" && err.Error() != tt.text {
				t.Errorf("Error = %q, want %q", err.Error(), tt.text)
			}
		})
	}
}

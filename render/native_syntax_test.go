package render

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/toolharness/toolharness/chat"
)

// TestNativeDerivedFormat: a family whose native format is its template's
// own call syntax (a name render has no writer for, as for a template
// loaded from a model with its syntax derived) renders in raw mode exactly
// as in the built-in native format: the template writes catalog and calls.
// Chat mode, which needs a writer, refuses the name.
func TestNativeDerivedFormat(t *testing.T) {
	fam := lookup(t, "qwen2.5")
	derived := fam
	derived.NativeFormat, derived.DefaultFormat = "derived:qwen2.5", "derived:qwen2.5"
	tools := []chat.Tool{{Name: "read_file", Description: "Read a file.", Parameters: []byte(`{"type": "object", "properties": {"path": {"type": "string"}}}`)}}
	msgs := []chat.Message{{Role: chat.RoleUser, Content: "read a.txt"},
		{Role: chat.RoleAssistant, ToolCalls: []chat.ToolCall{{ID: "c1", Name: "read_file", Arguments: []byte(`{"path": "a.txt"}`)}}},
		{Role: chat.RoleTool, ToolCallID: "c1", Content: "hello"}}
	want, err := Prompt(Request{Family: fam, Format: FormatHermes, Messages: msgs, Tools: tools})
	if err != nil {
		t.Fatal(err)
	}
	got, err := Prompt(Request{Family: derived, Messages: msgs, Tools: tools})
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("derived native format (-hermes +derived):\n%s", d)
	}
	if _, err := ChatMessages(Request{Family: derived, Messages: msgs, Tools: tools}); !errors.Is(err, ErrUnknownFormat) {
		t.Errorf("chat mode with the template's own syntax: got %v, want ErrUnknownFormat", err)
	}
	if _, err := Prompt(Request{Family: derived, Format: "derived:other", Messages: msgs}); !errors.Is(err, ErrUnknownFormat) {
		t.Errorf("another unknown format: got %v, want ErrUnknownFormat", err)
	}
}

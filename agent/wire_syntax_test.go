package agent

import (
	"strings"
	"testing"

	"github.com/toolharness/toolharness/chat"
	"github.com/toolharness/toolharness/parse"
	"github.com/toolharness/toolharness/templates"
)

// TestRendererDerivedSyntax: a family given directly, whose native format
// is a derived call syntax, renders its catalog through its own template
// and parses with a parser for that syntax.
func TestRendererDerivedSyntax(t *testing.T) {
	fam, err := templates.Lookup("qwen2.5")
	if err != nil {
		t.Fatal(err)
	}
	label := "derived:qwen2.5-copy"
	fam.NativeFormat, fam.DefaultFormat = label, label
	syn := &parse.Syntax{Label: label, CallOpen: "<tool_call>", CallClose: "</tool_call>", Body: parse.BodyJSON, NameKey: "name", ArgsKey: "arguments"}
	r, err := NewRenderer(RendererOptions{Family: &fam, Syntax: syn})
	if err != nil {
		t.Fatal(err)
	}
	if r.Format() != label {
		t.Errorf("format %q, want %q", r.Format(), label)
	}
	tools := []chat.Tool{{Name: "read_file", Description: "Read a file.", Parameters: []byte(`{"type": "object", "properties": {"path": {"type": "string"}}}`)}}
	prompt, err := r.Prompt(System{Text: "Be brief.", Tools: tools}, []Msg{{Message: chat.Message{Role: chat.RoleUser, Content: "hi"}}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(prompt, "<tools>\n{\"type\": \"function\", \"function\": {\"name\": \"read_file\"") {
		t.Errorf("the template's own catalog is missing:\n%s", prompt)
	}
	p, err := r.NewParser(tools)
	if err != nil {
		t.Fatal(err)
	}
	evs := append(p.Feed(`ok <tool_call>{"name": "read_file", "arguments": {"path": "a.txt"}}</tool_call>`), p.Close()...)
	var calls []chat.ToolCall
	for _, e := range evs {
		if e.Kind == EventCall {
			calls = append(calls, *e.Call)
		}
	}
	if len(calls) != 1 || calls[0].Name != "read_file" || string(calls[0].Arguments) != `{"path":"a.txt"}` && string(calls[0].Arguments) != `{"path": "a.txt"}` {
		t.Errorf("calls %+v", calls)
	}
	bad := *syn
	bad.CallOpen, bad.SectionOpen = "", ""
	if _, err := NewRenderer(RendererOptions{Family: &fam, Syntax: &bad}); err == nil {
		t.Error("an invalid derived syntax was accepted")
	}
}

package agent

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolharness/toolharness/chat"
	"github.com/toolharness/toolharness/templates"
)

func loadedFamily(t *testing.T, path string, tok templates.SpecialTokens) templates.Family {
	t.Helper()
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	j, err := templates.CompileJinja(filepath.Base(path), string(src), tok)
	if err != nil {
		t.Fatal(err)
	}
	f, err := templates.FamilyOf(j)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestRendererLoadedTemplateSyntax: a loaded template outside the built-in
// families gets its call syntax derived: a built-in format where it is one
// (GLM-4.5: glm45), else the derived syntax; either way the template
// renders catalog and calls itself and the parser reads what it writes.
func TestRendererLoadedTemplateSyntax(t *testing.T) {
	tools := []chat.Tool{{Name: "lookup", Description: "Look up.", Parameters: []byte(`{"type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}}}`)}}
	for _, tc := range []struct {
		path, format, catalog, output string
	}{
		{"../templates/testdata/conformance/templates/zai-org-GLM-4.5.jinja", "glm45", `"name": "lookup"`,
			"<tool_call>lookup\n<arg_key>city</arg_key>\n<arg_value>Paris</arg_value>\n<arg_key>days</arg_key>\n<arg_value>3</arg_value>\n</tool_call>"},
		{"../derive/testdata/synthetic/pipe-pairs.jinja", "derived:pipe-pairs.jinja", "You may use: lookup",
			"Sure. <|acts|><|act|>lookup<|k|>city<|v|>Paris<|/v|><|k|>days<|v|>3<|/v|><|/act|><|/acts|>"},
	} {
		fam := loadedFamily(t, tc.path, templates.SpecialTokens{EOS: "<stop>"})
		r, err := NewRenderer(RendererOptions{Family: &fam})
		if err != nil {
			t.Fatalf("%s: %v", tc.path, err)
		}
		if r.Format() != tc.format {
			t.Errorf("%s: format %q, want %q", tc.path, r.Format(), tc.format)
		}
		prompt, err := r.Prompt(System{Text: "Be brief.", Tools: tools}, []Msg{{Message: chat.Message{Role: chat.RoleUser, Content: "hi"}}})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(prompt, tc.catalog) {
			t.Errorf("%s: the template's own catalog is missing:\n%s", tc.path, prompt)
		}
		p, err := r.NewParser(tools)
		if err != nil {
			t.Fatal(err)
		}
		evs := append(p.Feed(tc.output), p.Close()...)
		var calls []chat.ToolCall
		for _, e := range evs {
			if e.Kind == EventCall && e.Err == nil {
				calls = append(calls, *e.Call)
			}
		}
		if len(calls) != 1 || calls[0].Name != "lookup" || string(calls[0].Arguments) != `{"city":"Paris","days":3}` {
			t.Errorf("%s: calls %+v", tc.path, calls)
		}
	}
}

// TestRendererChatKeepsTextFormat: in chat mode the catalog travels as
// text, so a loaded template's own call syntax (written only by the
// template, in raw mode) is not adopted: the family's default text format
// is used, and the chat message list renders.
func TestRendererChatKeepsTextFormat(t *testing.T) {
	fam := loadedFamily(t, "../templates/testdata/conformance/templates/zai-org-GLM-4.5.jinja", templates.SpecialTokens{EOS: "<stop>"})
	tools := []chat.Tool{{Name: "lookup", Description: "Look up.", Parameters: []byte(`{"type": "object", "properties": {"city": {"type": "string"}}}`)}}
	for _, tc := range []struct {
		chat   bool
		format string
	}{{false, "glm45"}, {true, fam.DefaultFormat}} {
		r, err := NewRenderer(RendererOptions{Family: &fam, Chat: tc.chat})
		if err != nil {
			t.Fatalf("chat %v: %v", tc.chat, err)
		}
		if r.Format() != tc.format {
			t.Errorf("chat %v: format %q, want %q", tc.chat, r.Format(), tc.format)
		}
		if !tc.chat {
			continue
		}
		msgs, err := r.Messages(System{Text: "Be brief.", Tools: tools}, []Msg{{Message: chat.Message{Role: chat.RoleUser, Content: "hi"}}})
		if err != nil || len(msgs) == 0 || !strings.Contains(msgs[0].Content, "lookup") {
			t.Errorf("chat messages %+v, %v: want the catalog as text in the system message", msgs, err)
		}
	}
}

package agent

import (
	"github.com/google/go-cmp/cmp"
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

// TestRendererChatOwnCatalog: in chat mode a loaded template that renders
// its tools into its system turn sends its own tool section as text and
// reads calls in its own syntax (GLM-4.5: a system message of its own
// before the session's, glm45, and the synthetic pipe-pairs template, its
// derived syntax); one that renders them elsewhere (Llama 3.1: in the user
// turn) gets the family's default format and its catalog after the system
// text, and PlanChatCatalog says so. The session's transcript sends the
// same list.
func TestRendererChatOwnCatalog(t *testing.T) {
	tools := []chat.Tool{{Name: "lookup", Description: "Look up.", Parameters: []byte(`{"type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}}}`)}}
	for _, tc := range []struct {
		path, format, first, note, output string
		own                               bool
	}{
		{path: "../templates/testdata/conformance/templates/zai-org-GLM-4.5.jinja", format: "glm45", own: true,
			first:  "# Tools\n\nYou may call one or more functions",
			output: "<tool_call>lookup\n<arg_key>city</arg_key>\n<arg_value>Paris</arg_value>\n<arg_key>days</arg_key>\n<arg_value>3</arg_value>\n</tool_call>"},
		{path: "../derive/testdata/synthetic/pipe-pairs.jinja", format: "derived:pipe-pairs.jinja", own: true,
			first:  "Be brief.",
			output: "Sure. <|acts|><|act|>lookup<|k|>city<|v|>Paris<|/v|><|k|>days<|v|>3<|/v|><|/act|><|/acts|>"},
		{path: "../templates/testdata/official/meta-llama-Llama-3.1-8B-Instruct.jinja", format: "json",
			first: "Be brief.\n\nGiven the following functions", note: "renders its tools outside the system message",
			output: `{"name": "lookup", "parameters": {"city": "Paris", "days": 3}}`},
	} {
		fam := loadedFamily(t, tc.path, templates.SpecialTokens{EOS: "<stop>"})
		plan, err := PlanChatCatalog(fam, "")
		if err != nil || plan.Own != tc.own || !strings.Contains(plan.Note, tc.note) || (tc.note == "") != (plan.Note == "") {
			t.Errorf("%s: plan own=%v note %q (%v), want own=%v note %q", tc.path, plan.Own, plan.Note, err, tc.own, tc.note)
		}
		r, err := NewRenderer(RendererOptions{Family: &fam, Chat: true})
		if err != nil {
			t.Fatalf("%s: %v", tc.path, err)
		}
		if r.Format() != tc.format {
			t.Errorf("%s: format %q, want %q", tc.path, r.Format(), tc.format)
		}
		sys := System{Text: "Be brief.", Tools: tools}
		hist := []Msg{{Message: chat.Message{Role: chat.RoleUser, Content: "hi"}}}
		msgs, err := r.Messages(sys, hist)
		if err != nil || len(msgs) < 2 || !strings.HasPrefix(msgs[0].Content, tc.first) || !strings.Contains(msgs[0].Content, "lookup") {
			t.Fatalf("%s: chat messages %+v, %v: want the catalog in the first system message, starting %q", tc.path, msgs, err, tc.first)
		}
		tr, err := r.Transcript(sys)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := tr.Messages(hist); err != nil || !cmp.Equal(got, msgs) {
			t.Errorf("%s: the transcript sends %+v (%v), want %+v", tc.path, got, err, msgs)
		}
		p, err := r.NewParser(tools)
		if err != nil {
			t.Fatal(err)
		}
		var calls []chat.ToolCall
		for _, e := range append(p.Feed(tc.output), p.Close()...) {
			if e.Kind == EventCall && e.Err == nil {
				calls = append(calls, *e.Call)
			}
		}
		if len(calls) != 1 || calls[0].Name != "lookup" || string(calls[0].Arguments) != `{"city":"Paris","days":3}` {
			t.Errorf("%s: calls %+v", tc.path, calls)
		}
	}
}

package derive

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/toolharness/toolharness/chat"
	"github.com/toolharness/toolharness/render"
	"github.com/toolharness/toolharness/templates"
)

// TestFamilyRendersOwnSyntax: a template outside the built-in families
// becomes a family whose native format is its derived syntax, and a raw-
// mode prompt through package render is the template's own rendering
// (catalog and a call turn written by the template itself).
func TestFamilyRendersOwnSyntax(t *testing.T) {
	j := compileSynthetic(t, "pipe-pairs.jinja", templates.SpecialTokens{BOS: "<start>", EOS: "<stop>"})
	fam, res, err := Family(j, suiteNow)
	if err != nil {
		t.Fatal(err)
	}
	if fam.NativeFormat != "derived:pipe-pairs.jinja" || fam.DefaultFormat != fam.NativeFormat || res.Format != "" {
		t.Fatalf("native %q default %q format %q", fam.NativeFormat, fam.DefaultFormat, res.Format)
	}
	for _, s := range res.StopStrings() {
		if !slices.Contains(fam.Stop, s) {
			t.Errorf("family stops %q lack the derived stop %q", fam.Stop, s)
		}
	}
	for _, m := range []string{"<|acts|>", "<|act|>", "<|/act|>"} {
		if !slices.Contains(fam.ControlTokens, m) {
			t.Errorf("control tokens %q lack the derived marker %q", fam.ControlTokens, m)
		}
	}
	tools, err := chat.ParseTools([]byte(roundTripTools))
	if err != nil {
		t.Fatal(err)
	}
	call := chat.ToolCall{ID: "abcDEF123", Name: "write_note", Arguments: json.RawMessage(`{"text": "hi"}`)}
	msgs := []chat.Message{{Role: chat.RoleUser, Content: "note <|act|>x"}, {Role: chat.RoleAssistant, ToolCalls: []chat.ToolCall{call}}}
	got, err := render.Prompt(render.Request{Family: fam, Messages: msgs, Tools: tools, NoGenerationPrompt: true, Now: suiteNow})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(got, "You may use: lookup_record write_note") || !strings.Contains(got, "<|acts|><|act|>write_note<|k|>text<|v|>hi<|/v|><|/act|><|/acts|>") {
		t.Errorf("the template's own catalog or call is missing:\n%s", got)
	}
	if strings.Contains(got, "note <|act|>x") {
		t.Errorf("a derived call marker in user text was not neutralised:\n%s", got)
	}
}

// TestFamilyNamedFormatMarkersAreControlTokens: a template whose calls a
// named format reads (MiniMax-M2's, read by minimax-m2) still has its call
// markers neutralised in user text; render knows only the markers of its
// prompted formats, and <minimax:tool_call> is no special-token pattern.
func TestFamilyNamedFormatMarkersAreControlTokens(t *testing.T) {
	e := loadUnseen(t)[0]
	if e.ID != "minimax-m2" {
		t.Fatalf("first unseen template is %s, want minimax-m2", e.ID)
	}
	fam, res, err := Family(compileSuite(t, e).tmpl, suiteNow)
	if err != nil {
		t.Fatal(err)
	}
	if res.Format != "minimax-m2" || fam.NativeFormat != "minimax-m2" {
		t.Fatalf("format %q, native %q; want minimax-m2", res.Format, fam.NativeFormat)
	}
	for _, m := range []string{"<minimax:tool_call>", "</minimax:tool_call>", `<invoke name="`, "</invoke>"} {
		if !slices.Contains(fam.ControlTokens, m) {
			t.Errorf("control tokens %q lack the call marker %q", fam.ControlTokens, m)
		}
	}
	msgs := []chat.Message{{Role: chat.RoleUser, Content: "x <minimax:tool_call><invoke name=\"write_note\">"}}
	got, err := render.Prompt(render.Request{Family: fam, Messages: msgs, Now: suiteNow})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(got, "x <minimax:tool_call>") {
		t.Errorf("a call marker in user text was not neutralised:\n%s", got)
	}
}

// TestOwnLoadedBuiltinFamily: a built-in family recognised in a loaded
// template whose calls are in another built-in format takes that format
// (Granite 4.0's <tool_call> JSON, recognised as granite3, native json); a
// built-in family's own template keeps its definition.
func TestOwnLoadedBuiltinFamily(t *testing.T) {
	var granite suiteEntry
	for _, e := range loadUnseen(t) {
		if e.ID == "granite-4.0" {
			granite = e
		}
	}
	fam, err := templates.FamilyOf(compileSuite(t, granite).tmpl)
	if err != nil {
		t.Fatal(err)
	}
	if fam.Name != "granite3" || fam.NativeFormat != "json" || !fam.Loaded() {
		t.Fatalf("family %s native %q loaded %v, want granite3 json loaded", fam.Name, fam.NativeFormat, fam.Loaded())
	}
	owned, res, err := Own(fam)
	if err != nil {
		t.Fatal(err)
	}
	if res == nil || owned.NativeFormat != "hermes" || owned.DefaultFormat != "hermes" {
		t.Errorf("native %q default %q (derived %v), want hermes", owned.NativeFormat, owned.DefaultFormat, res != nil)
	}
	builtin, err := templates.Lookup("granite3")
	if err != nil {
		t.Fatal(err)
	}
	if kept, res, err := Own(builtin); err != nil || res != nil || kept.NativeFormat != "json" {
		t.Errorf("the built-in granite3 family: native %q, derived %v, err %v; want it as it is", kept.NativeFormat, res != nil, err)
	}
}

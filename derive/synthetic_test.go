package derive

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/toolharness/toolharness/chat"
	"github.com/toolharness/toolharness/parse"
	"github.com/toolharness/toolharness/templates"
)

// syntheticTemplates are chat templates written for this test with
// markers no real template (and nothing in derive) knows: derivation must
// learn them from the renders alone.
var syntheticTemplates = []struct {
	file   string
	tokens templates.SpecialTokens
	want   parse.Syntax
	// format is the built-in format the syntax is recognised as.
	format string
}{
	{"angle-pipe.jinja", templates.SpecialTokens{}, parse.Syntax{
		Body: parse.BodyNameJSON, CallOpen: "<<CALL>>", ArgsPrefix: "|", CallClose: "<<END>>",
		Stop: []string{"~done~"}}, ""},
	{"pipe-pairs.jinja", templates.SpecialTokens{BOS: "<start>", EOS: "<stop>"}, parse.Syntax{
		Body: parse.BodyPairs, SectionOpen: "<|acts|>", SectionClose: "<|/acts|>", CallSeparator: "\n",
		CallOpen: "<|act|>", KeyOpen: "<|k|>", KeyClose: "<|v|>", ValueClose: "<|/v|>", CallClose: "<|/act|>",
		ReasoningOpen: "<reflect>", ReasoningClose: "</reflect>", Stop: []string{"[[/turn]]", "<stop>"}}, ""},
	{"hash-list.jinja", templates.SpecialTokens{}, parse.Syntax{
		Body: parse.BodyJSONList, CallOpen: "##CALLS##", CallClose: "##END##",
		NameKey: "tool", ArgsKey: "input", Stop: []string{"<eot>"}}, ""},
	{"bracket-python.jinja", templates.SpecialTokens{}, parse.Syntax{
		Body: parse.BodyPythonList, CallOpen: "<calls>", CallClose: "</calls>", Stop: []string{"### end"}}, ""},
	{"xml-invoke.jinja", templates.SpecialTokens{}, parse.Syntax{
		Body: parse.BodyPairs, SectionOpen: "<function_calls>", SectionClose: "</function_calls>", CallOpen: `<invoke name="`,
		NameSuffix: `">`, KeyOpen: `<parameter name="`, KeyClose: `">`, ValueClose: "</parameter>", CallClose: "</invoke>"}, "xml"},
	{"indexed-sections.jinja", templates.SpecialTokens{}, parse.Syntax{
		Body: parse.BodyNameJSON, SectionOpen: "<|calls_begin|>", SectionClose: "<|calls_end|>", CallOpen: "<|call_begin|>",
		NamePrefix: "functions.", IDPrefix: ":", ArgsPrefix: "<|arg_begin|>", CallClose: "<|call_end|>", Stop: []string{"<|eom|>"}}, ""},
	// Each call's own id before its name.
	{"id-first.jinja", templates.SpecialTokens{}, parse.Syntax{
		Body: parse.BodyNameJSON, SectionOpen: "<|acts|>", SectionClose: "<|/acts|>", CallOpen: "<|act|>", IDFirst: true,
		NamePrefix: "<|fn|>", ArgsPrefix: "<|in|>", CallClose: "<|/act|>", Stop: []string{"<|eom|>"}}, ""},
	// The id written where the name goes: only the named-ids style shows
	// the name.
	{"id-head.jinja", templates.SpecialTokens{}, parse.Syntax{
		Body: parse.BodyNameJSON, SectionOpen: "<%calls%>", SectionClose: "<%/calls%>", CallOpen: "<%call%>",
		NamePrefix: "functions.", IDPrefix: ":", ArgsPrefix: "<%args%>", CallClose: "<%/call%>", Stop: []string{"<%eot%>"}}, ""},
	// Only string arguments with no content render JSON (object arguments
	// print as a Python dict in the Go engine and raise in Jinja2).
	{"string-args.jinja", templates.SpecialTokens{}, parse.Syntax{
		Body: parse.BodyNameJSON, CallOpen: "<@call@>", ArgsPrefix: "<@args@>", CallClose: "<@/call@>", Stop: []string{"<@end@>"}}, ""},
	// Reasoning right after the turn header, with no opener of its own:
	// the header is not taken for one (calls would read as reasoning).
	{"header-reasoning.jinja", templates.SpecialTokens{}, parse.Syntax{
		Body: parse.BodyJSONList, CallOpen: "<acts>", CallClose: "</acts>", NameKey: "name", ArgsKey: "arguments",
		Stop: []string{"~end~"}}, ""},
	// Reasoning only from a thinking block, closed by a "[/…]" token.
	{"block-reasoning.jinja", templates.SpecialTokens{}, parse.Syntax{
		Body: parse.BodyNameJSON, CallOpen: "[ACT]", ArgsPrefix: "[WITH]", ReasoningOpen: "[MUSE]", ReasoningClose: "[/MUSE]",
		Stop: []string{"[DONE]"}}, ""},
}

func compileSynthetic(t *testing.T, file string, tok templates.SpecialTokens) *templates.Jinja {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("testdata", "synthetic", file))
	if err != nil {
		t.Fatal(err)
	}
	j, err := templates.CompileJinja(file, string(src), tok)
	if err != nil {
		t.Fatal(err)
	}
	return j
}

func TestDeriveSyntheticTemplates(t *testing.T) {
	for _, tc := range syntheticTemplates {
		t.Run(tc.file, func(t *testing.T) {
			r := Jinja{Template: compileSynthetic(t, tc.file, tc.tokens), Now: suiteNow}
			res, err := Template(r.Template, suiteNow, nil)
			if err != nil {
				t.Fatal(err)
			}
			if !res.Catalog || !res.WritesCalls || !res.Parallel || res.Format != tc.format {
				t.Errorf("catalog %v, writes calls %v, parallel %v, format %q; want a catalog, parallel calls and format %q",
					res.Catalog, res.WritesCalls, res.Parallel, res.Format, tc.format)
			}
			want := tc.want
			want.Label = "derived:" + tc.file
			if d := cmp.Diff(want, res.Syntax); d != "" {
				t.Errorf("derived syntax (-want +got):\n%s", d)
			}
			if err := res.Syntax.Validate(); err != nil {
				t.Error(err)
			}
			tools, err := chat.ParseTools([]byte(roundTripTools))
			if err != nil {
				t.Fatal(err)
			}
			for n := 1; n <= 2; n++ {
				if got := roundTrip(r, res, tools, n); got != "ok" {
					t.Errorf("round trip of %d calls: %s", n, got)
				}
			}
		})
	}
}

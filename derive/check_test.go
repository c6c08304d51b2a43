package derive

import (
	"strings"
	"testing"

	"github.com/toolharness/toolharness/templates"
)

// TestBuiltinKeptOnlyWhereItAgrees: a built-in format is named only when
// its parser reads the template's own calls as the derived syntax does.
func TestBuiltinKeptOnlyWhereItAgrees(t *testing.T) {
	for _, tc := range []struct {
		file, format, want string
	}{
		// The xml parser reads the Anthropic-style block as derived.
		{"xml-invoke.jinja", "xml", "xml"},
		// A format planted on a syntax it does not read is dropped.
		{"angle-pipe.jinja", "hermes", ""},
		{"xml-invoke.jinja", "glm45", ""},
	} {
		r := Jinja{Template: compileSynthetic(t, tc.file, templates.SpecialTokens{}), Now: suiteNow}
		res, err := Derive(r, Tokens{})
		if err != nil {
			t.Fatal(err)
		}
		c, _, _ := findCalls(newRenders(r))
		res.Format, res.Notes = tc.format, nil
		res.checkParsers(c)
		if res.Format != tc.want || !res.ParsesOwnCalls {
			t.Errorf("%s as %s: format %q, parses its own calls %v; want %q; notes %q", tc.file, tc.format, res.Format, res.ParsesOwnCalls, tc.want, res.Notes)
		}
		if tc.want == "" && (len(res.Notes) != 1 || !strings.Contains(res.Notes[0], "does not read the template's own calls")) {
			t.Errorf("%s as %s: notes %q", tc.file, tc.format, res.Notes)
		}
	}
}

// TestParsesOwnCallsCatchesABrokenSyntax: a derived syntax that cannot
// read the template's calls is reported, not used silently.
func TestParsesOwnCallsCatchesABrokenSyntax(t *testing.T) {
	r := Jinja{Template: compileSynthetic(t, "angle-pipe.jinja", templates.SpecialTokens{}), Now: suiteNow}
	res, err := Derive(r, Tokens{})
	if err != nil {
		t.Fatal(err)
	}
	c, _, _ := findCalls(newRenders(r))
	res.Syntax.ArgsPrefix = "#" // a planted error: the template writes "|"
	res.Notes = nil
	res.checkParsers(c)
	if res.ParsesOwnCalls || len(res.Notes) != 1 {
		t.Errorf("parses its own calls %v, notes %q", res.ParsesOwnCalls, res.Notes)
	}
}

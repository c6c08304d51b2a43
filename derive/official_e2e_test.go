package derive

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/toolharness/toolharness/chat"
	"github.com/toolharness/toolharness/internal/golden"
	"github.com/toolharness/toolharness/internal/ollamatest"
	"github.com/toolharness/toolharness/templates"
)

// officialTemplatesDir is where llama.cpp's source tree (which `make
// llamacpp` unpacks under $TOOLHARNESS_LLAMACPP_DIR/src) keeps the official
// chat templates it tests against: current ones the project was not
// developed on, Gemma 4's among them.
func officialTemplatesDir(t testing.TB) string {
	t.Helper()
	dir, err := ollamatest.LlamacppDir()
	if err != nil {
		t.Fatal(err)
	}
	d := filepath.Join(dir, "src", "models", "templates")
	if _, err := os.Stat(d); err != nil {
		t.Fatalf("llama.cpp's templates: %v: run `make llamacpp` (or set %s)", err, ollamatest.EnvLlamacppDir)
	}
	return d
}

// officialRenderer compiles one official template as `templates inspect`
// does with a bare .jinja file: no BOS or EOS text, the suite's clock.
func officialRenderer(t testing.TB, path string) (Jinja, string) {
	t.Helper()
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	id := strings.TrimSuffix(filepath.Base(path), ".jinja")
	j, err := templates.CompileJinja(id, string(src), templates.SpecialTokens{})
	if err != nil {
		t.Fatalf("%s: %v", id, err)
	}
	return Jinja{Template: j, Now: suiteNow}, id
}

// TestE2EOfficialGemma4 derives the call syntax of llama.cpp's official
// Gemma 4 templates (plain and interleaved reasoning) and round-trips one
// call and two through the derived syntax alone.
func TestE2EOfficialGemma4(t *testing.T) {
	dir := officialTemplatesDir(t)
	tools, err := chat.ParseTools([]byte(roundTripTools))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"google-gemma-4-31B-it.jinja", "google-gemma-4-31B-it-interleaved.jinja"} {
		t.Run(name, func(t *testing.T) {
			r, _ := officialRenderer(t, filepath.Join(dir, name))
			res, err := Derive(r, Tokens{})
			if err != nil {
				t.Fatal(err)
			}
			s := res.Syntax
			if !res.WritesCalls || !res.Parallel || !res.ParsesOwnCalls || res.Format != "" {
				t.Fatalf("writes calls %v, parallel %v, parses its own calls %v, format %q; notes %q",
					res.WritesCalls, res.Parallel, res.ParsesOwnCalls, res.Format, res.Notes)
			}
			if s.CallOpen != "<|tool_call>" || s.CallClose != "<tool_call|>" || s.NamePrefix != "call:" || s.Quote != `<|"|>` {
				t.Errorf("derived %+v", s)
			}
			for _, n := range []int{1, 2} {
				if got := roundTrip(r, res, tools, n); got != "ok" {
					t.Errorf("%d call(s): %s", n, got)
				}
			}
			if out := outputOutcome(r, res, tools); out != "ok" {
				t.Errorf("reply after the generation prompt: %s", out)
			}
		})
	}
}

// TestE2EOfficialTemplates derives every official template of llama.cpp's
// source tree and round-trips one call and two, and golden-checks the
// table of outcomes (testdata/official.md, which docs/templates.md shows):
// a template that round-tripped and no longer does fails here.
func TestE2EOfficialTemplates(t *testing.T) {
	dir := officialTemplatesDir(t)
	files, err := filepath.Glob(filepath.Join(dir, "*.jinja"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 60 {
		t.Fatalf("%s holds %d templates, want llama.cpp's whole set", dir, len(files))
	}
	slices.Sort(files)
	tools, err := chat.ParseTools([]byte(roundTripTools))
	if err != nil {
		t.Fatal(err)
	}
	var table strings.Builder
	table.WriteString("| template | renders tools | writes calls | derived syntax | one call | parallel | parses own calls |\n")
	table.WriteString("|---|---|---|---|---|---|---|\n")
	var tl officialTally
	for _, f := range files {
		r, id := officialRenderer(t, f)
		fmt.Fprintf(&table, "| %s | %s |\n", id, officialRow(&tl, r, tools))
	}
	fmt.Fprintf(&table, "\n%d templates, %d write calls; one call round-tripped for %d; %d render parallel calls, round-tripped for %d\n",
		len(files), tl.capable, tl.oneOK, tl.parallelCapable, tl.parallelOK)
	t.Log(table.String())
	golden.Check(t, *update, filepath.Join("testdata", "official.md"), table.String())
}

type officialTally struct{ capable, oneOK, parallelCapable, parallelOK int }

// officialRow is one template's cells after its name.
func officialRow(tl *officialTally, r Jinja, tools []chat.Tool) string {
	res, err := Derive(r, Tokens{})
	if err != nil {
		return "no derivation: " + cell(oneLine(err)) + " | | | | |"
	}
	if !res.WritesCalls {
		return fmt.Sprintf("%s | no | %s | | |", yesNo(res.Catalog), cell(res.noCallsReason()))
	}
	tl.capable++
	one := roundTrip(r, res, tools, 1)
	tl.oneOK += okCount(one)
	two := "one call a turn"
	if res.Parallel {
		tl.parallelCapable++
		two = roundTrip(r, res, tools, 2)
		tl.parallelOK += okCount(two)
	}
	own := yesNo(res.ParsesOwnCalls)
	if !res.ParsesOwnCalls {
		own += ": " + res.noCallsReason()
	}
	return fmt.Sprintf("%s | yes | %s | %s | %s | %s", yesNo(res.Catalog), cell(syntaxSummary(res)), cell(one), cell(two), cell(own))
}

// syntaxSummary names the built-in format, or the derived syntax's body
// and markers.
func syntaxSummary(res Result) string {
	if res.Format != "" {
		return res.Format
	}
	s := res.Syntax
	out := fmt.Sprint(s.Body)
	for _, m := range []struct{ what, v string }{{"section", s.SectionOpen}, {"open", s.CallOpen}, {"close", s.CallClose},
		{"name prefix", s.NamePrefix}, {"quote", s.Quote}} {
		if m.v != "" {
			out += fmt.Sprintf(" %s %q", m.what, m.v)
		}
	}
	return out
}

// cell makes s fit a Markdown table cell on one line.
func cell(s string) string {
	s = strings.ReplaceAll(strings.ReplaceAll(s, "\n", " "), "|", `\|`)
	if len(s) > 160 {
		s = s[:160] + "…"
	}
	return s
}

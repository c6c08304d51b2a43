package derive

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/toolharness/toolharness/internal/golden"
	"github.com/toolharness/toolharness/internal/jinjaref"
	"github.com/toolharness/toolharness/templates"
)

// The conformance suite's templates (templates/testdata/conformance, the
// jinja engine's copy of ../shared/templates): 24 official templates and
// their kwarg variants, 11 modern ones, 37 of Ollama's index, ChatML.
const conformanceDir = "../templates/testdata/conformance"

type suiteEntry struct {
	ID            string                     `json:"id"`
	Set           string                     `json:"set"`
	File          string                     `json:"file"`
	SpecialTokens map[string]*string         `json:"special_tokens"`
	Kwargs        map[string]json.RawMessage `json:"kwargs"`
}

// suiteNow is the clock of the reference renders (render.py's fixed date).
var suiteNow = jinjaref.Now

func loadSuite(t testing.TB) []suiteEntry {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(conformanceDir, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m struct{ Templates []suiteEntry }
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if len(m.Templates) < 70 {
		t.Fatalf("conformance manifest lists %d templates, want the whole suite", len(m.Templates))
	}
	return m.Templates
}

func (e suiteEntry) token(name string) string {
	if p := e.SpecialTokens[name]; p != nil {
		return *p
	}
	return ""
}

// suiteRenderer renders through the Go engine with the entry's kwargs;
// "$tools_json" and "$strftime" kwargs are computed per request as the
// reference renderer computes them (firefunction's functions, datetime).
type suiteRenderer struct {
	tmpl  *templates.Jinja
	entry suiteEntry
}

func (s suiteRenderer) Render(r Request) (string, error) {
	extra := map[string]json.RawMessage{}
	for k, v := range s.entry.Kwargs {
		v, err := jinjaref.Kwarg(v, r.Tools, jinjaref.Python{Strftime: templates.PyStrftime, JSON: templates.PyJSON})
		if err != nil {
			return "", err
		}
		extra[k] = v
	}
	return Jinja{Template: s.tmpl, Now: suiteNow, Extra: extra}.Render(r)
}

func compileSuite(t testing.TB, e suiteEntry) suiteRenderer {
	t.Helper()
	src, err := os.ReadFile(filepath.Join(conformanceDir, e.File))
	if err != nil {
		t.Fatal(err)
	}
	j, err := templates.CompileJinja(e.ID, string(src), templates.SpecialTokens{BOS: e.token("bos_token"), EOS: e.token("eos_token")})
	if err != nil {
		t.Fatalf("%s: %v", e.ID, err)
	}
	return suiteRenderer{tmpl: j, entry: e}
}

func loadRecording(t testing.TB, id string) *recording {
	t.Helper()
	return loadRecordingIn(t, "renders", id)
}

// loadRecordingIn reads one template's recording from testdata/dir.
func loadRecordingIn(t testing.TB, dir, id string) *recording {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", dir, id+".json"))
	if err != nil {
		t.Fatalf("%v (run testdata/render_requests.py)", err)
	}
	rec := &recording{}
	if err := json.Unmarshal(b, rec); err != nil {
		t.Fatal(err)
	}
	return rec
}

// TestDeriveSuite derives every suite template's syntax through the Go
// engine, checks that the reference Jinja2 renders lead to the same
// derivation, and golden-checks what was derived (testdata/derived.txt).
// A difference fails the test unless the engine itself reports, for that
// template, a construct it renders differently from Jinja2 on purpose
// (templates.Jinja.Deviations: llama.cpp's DeepSeek R1 template pipes a
// generator into tojson, which Jinja2 refuses and llama.cpp's own engine,
// for which it was written, renders).
func TestDeriveSuite(t *testing.T) {
	var report strings.Builder
	for _, e := range loadSuite(t) {
		tok := Tokens{BOS: e.token("bos_token"), EOS: e.token("eos_token")}
		r := compileSuite(t, e)
		got, err := Derive(r, tok)
		want, wantErr := Derive(newRecordedRenderer(loadRecording(t, e.ID)), tok)
		report.WriteString("## " + e.ID + " (" + e.Set + ")\n")
		switch {
		case err != nil || wantErr != nil:
			if (err == nil) != (wantErr == nil) {
				t.Errorf("%s: Go engine: %v; Jinja2 renders: %v", e.ID, err, wantErr)
			}
			report.WriteString("error: " + firstErr(err, wantErr) + "\n")
		default:
			// Notes quote each engine's own error messages; the rest must
			// agree.
			if d := derivationDiff(want, got); d != "" {
				if devs := r.tmpl.Deviations(); len(devs) == 0 {
					t.Errorf("%s: derivation from Go-engine renders differs from Jinja2 renders (-jinja2 +go):\n%s", e.ID, d)
				} else {
					report.WriteString("engine deviation (" + devs[0].Construct + "): Jinja2 renders derive " + String(want.Describe()[:2]) + "\n")
				}
			}
			report.WriteString(String(got.Describe()))
		}
		report.WriteString("\n")
	}
	golden.Check(t, *update, filepath.Join("testdata", "derived.txt"), report.String())
}

// derivationDiff compares two derivations but for their notes (which quote
// each engine's own error messages); "" when they agree.
func derivationDiff(want, got Result) string {
	return cmp.Diff(want, got, cmpopts.IgnoreFields(Result{}, "Notes"))
}

// TestDerivationDiffCatches plants a difference between two derivations
// and checks that the suite's comparison sees it.
func TestDerivationDiffCatches(t *testing.T) {
	a := Result{WritesCalls: true, Style: "vllm", Notes: []string{"engine one"}}
	b := a
	b.Notes = []string{"engine two"}
	if d := derivationDiff(a, b); d != "" {
		t.Errorf("notes alone differ, got a difference:\n%s", d)
	}
	b.Style = "hf"
	if derivationDiff(a, b) == "" {
		t.Error("a different input style was not seen as a difference")
	}
	b = a
	b.Syntax.CallOpen = "<call>"
	if derivationDiff(a, b) == "" {
		t.Error("a different call opener was not seen as a difference")
	}
}

func firstErr(errs ...error) string {
	for _, e := range errs {
		if e != nil {
			return oneLine(e)
		}
	}
	return ""
}

package report

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	goldenfile "github.com/toolharness/toolharness/internal/golden"

	"github.com/toolharness/toolharness/bench"
)

var update = flag.Bool("update", false, "rewrite the golden files")

func p(kind string) *bench.Problem { return &bench.Problem{Kind: kind, Message: kind} }

// fixture builds results for two models and two formats, with retries,
// timings, a harness error and a model name that needs escaping.
func fixture() []bench.Record {
	var recs []bench.Record
	good := bench.ParseResult{Calls: []bench.Call{{Name: "get_weather", Arguments: json.RawMessage(`{"city":"Paris"}`)}}}
	broken := bench.ParseResult{Calls: []bench.Call{{Name: "get_weather", Error: p("bad_json")}}}
	fenced := bench.ParseResult{Errors: []bench.Problem{{Kind: "unexpected_tag"}}}
	exp := []bench.ExpectedCall{{Name: "get_weather"}}
	add := func(model, format string, i int, attempts []bench.ParseResult, strictFail bool, verdicts []bench.Verdict) {
		for a, lenient := range attempts {
			strict := lenient
			if strictFail && a == 0 {
				strict = fenced
			}
			final := a == len(attempts)-1
			r := bench.Record{
				ID: "case" + string(rune('a'+i)), Model: model, Format: format, Mode: "raw", Attempt: a, Final: final,
				Strict: strict, Lenient: lenient, FailureKind: lenient.FailureKind(), Expected: exp, Verdict: verdicts[a],
				PromptTokens: 400 + 10*i, GeneratedTokens: 20 + i, CachedTokens: 300, CachedKnown: true,
				TTFTMillis: float64(100 + 10*i), TotalMillis: float64(600 + 50*i + 100*a),
			}
			if final {
				r.Success = verdicts[a].Success()
				r.Retries = a
			}
			recs = append(recs, r)
		}
	}
	ok, pf := []bench.Verdict{bench.VerdictOK}, []bench.Verdict{bench.VerdictParseFailure, bench.VerdictOK}
	for i := 0; i < 12; i++ {
		// qwen/hermes: all first-try; qwen/xml: half need one retry.
		add("qwen2.5:7b", "hermes", i, []bench.ParseResult{good}, i%4 == 0, ok)
		if i%2 == 0 {
			add("qwen2.5:7b", "xml", i, []bench.ParseResult{broken, good}, true, pf)
		} else {
			add("qwen2.5:7b", "xml", i, []bench.ParseResult{good}, false, ok)
		}
		add("<b>tiny</b> & co", "hermes", i, []bench.ParseResult{broken, broken, broken, broken}, true,
			[]bench.Verdict{bench.VerdictParseFailure, bench.VerdictParseFailure, bench.VerdictParseFailure, bench.VerdictParseFailure})
	}
	recs = append(recs, bench.Record{ID: "casez", Model: "qwen2.5:7b", Format: "xml", Mode: "raw", Final: true,
		Verdict: bench.VerdictError, Error: "backend: ollama: unreachable"})
	return recs
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	goldenfile.Check(t, *update, filepath.Join("testdata", name), string(got))
}

// fixtureManifest is a run's manifest, as `bench run` writes it.
func fixtureManifest(maxRetries int) *bench.Manifest {
	seed := 3
	return &bench.Manifest{
		Command: "bench run", Toolharness: bench.Build{Version: "0.1.0-dev", Revision: "6bc5234aaaaaaaaaaaaa"},
		Suite: &bench.SuiteID{Name: "fixture", Cases: 13, SHA256: "0123456789abcdef0123"}, Models: []string{"qwen2.5:7b", "<b>tiny</b> & co"},
		Formats: []string{"hermes", "xml"}, Modes: []string{"raw"}, Repeats: 1, MaxRetries: &maxRetries, Backend: "ollama",
		Sampling:  &bench.Sampling{Temperature: 0, MaxTokens: 512, Seed: &seed},
		Templates: map[string]bench.TemplateID{"": {Source: "--template qwen2.5", Family: "qwen2.5", SHA256: "fedcba9876543210fedc"}},
		Servers: []bench.ServerInfo{{URL: "http://127.0.0.1:11434", Backend: "ollama", Version: "0.6.5",
			Models: map[string]string{"qwen2.5:7b": "845dbda0ea48ed749caafd9e6037047aa19acfcfd82e704d7ca97d631a0b697e"}}},
	}
}

func TestGoldens(t *testing.T) {
	s := bench.Summarize(fixture())
	m := Meta{Title: "fixture", Source: "report_test.go fixture", Manifest: fixtureManifest(3)}
	for _, tt := range []struct {
		name  string
		write func(*bytes.Buffer) error
	}{
		{"summary.json", func(b *bytes.Buffer) error { return JSON(b, s, m) }},
		{"summary.csv", func(b *bytes.Buffer) error { return CSV(b, s, m) }},
		{"summary.md", func(b *bytes.Buffer) error { return Markdown(b, s, m) }},
		{"table.txt", func(b *bytes.Buffer) error { return Table(b, s, m) }},
		{"compare.txt", func(b *bytes.Buffer) error { return CompareTable(b, s, "qwen2.5:7b", m) }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := tt.write(&b); err != nil {
				t.Fatal(err)
			}
			golden(t, tt.name, b.Bytes())
		})
	}
}

// The numbers the goldens hold, checked by hand so a golden regenerated
// over a bug does not pass silently.
func TestFixtureNumbers(t *testing.T) {
	s := bench.Summarize(fixture())
	if len(s.Groups) != 3 {
		t.Fatalf("%d groups", len(s.Groups))
	}
	byName := map[string]bench.Group{}
	for _, g := range s.Groups {
		byName[g.Model+"/"+g.Format] = g
	}
	xml := byName["qwen2.5:7b/xml"]
	if xml.Cases != 13 || xml.Errors != 1 || xml.LenientFailure.K != 6 || xml.LenientFailure.N != 12 ||
		xml.FirstTry.K != 6 || xml.Within1.K != 12 || xml.FirstTry.N != 12 || xml.MeanRetries != 0.5 {
		t.Errorf("xml group: %+v", xml)
	}
	hermes := byName["qwen2.5:7b/hermes"]
	if hermes.StrictFailure.K != 3 || hermes.LenientFailure.K != 0 || hermes.FirstTry.K != 12 {
		t.Errorf("hermes group: strict %+v lenient %+v first %+v", hermes.StrictFailure, hermes.LenientFailure, hermes.FirstTry)
	}
	if hermes.CacheReuse == nil || *hermes.CacheReuse < 0.6 || *hermes.CacheReuse > 0.8 {
		t.Errorf("cache reuse %v", hermes.CacheReuse)
	}
	tiny := byName["<b>tiny</b> & co/hermes"]
	if tiny.Within3.K != 0 || tiny.Attempts != 48 || tiny.MeanRetries != 3 {
		t.Errorf("tiny group: %+v", tiny)
	}
	var found bool
	for _, c := range s.Comparisons {
		if c.Metric == "lenient_parse_failure" && c.Model == "qwen2.5:7b" {
			found = true
			// 0/12 vs 6/12: pooled 0.25, expected failures 3 < 5: not tested.
			if c.Test.Significant || c.Test.Note == "" {
				t.Errorf("comparison %+v", c)
			}
		}
	}
	if !found {
		t.Error("no format comparison for qwen2.5:7b")
	}
}

func TestWriteAll(t *testing.T) {
	dir := t.TempDir()
	if err := WriteAll(dir, bench.Summarize(fixture()), Meta{}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{SummaryJSON, SummaryCSV, SummaryMD, ReportHTML} {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil || len(data) == 0 {
			t.Errorf("%s: %v (%d bytes)", name, err, len(data))
		}
		if bytes.Contains(data, []byte(`\u003c`)) {
			t.Errorf("%s is HTML-escaped JSON", name)
		}
	}
	html, _ := os.ReadFile(filepath.Join(dir, ReportHTML))
	if strings.Contains(string(html), "<b>tiny</b>") || !strings.Contains(string(html), "&lt;b&gt;tiny&lt;/b&gt; &amp; co") {
		t.Error("model name not escaped in report.html")
	}
	for _, bad := range []string{"http://", "https://", "<script", "src="} {
		if bad == "http://" {
			// The SVG namespace is an identifier, not a fetch.
			if strings.Count(string(html), "http://") != strings.Count(string(html), `xmlns="http://www.w3.org/2000/svg"`) {
				t.Error("report.html references a network URL")
			}
			continue
		}
		if strings.Contains(string(html), bad) {
			t.Errorf("report.html contains %q: it must be self-contained", bad)
		}
	}
}

// TestAllErrorsMeasuresNothing: a group whose every case failed with an
// error (a dead server; for one case, the retry after a judged first
// attempt) shows its errors and no number anywhere: every rate and the
// mean retries are "not measured".
func TestAllErrorsMeasuresNothing(t *testing.T) {
	exp := []bench.ExpectedCall{{Name: "f"}}
	recs := []bench.Record{
		{ID: "a", Model: "m", Format: "hermes", Mode: "raw", Expected: exp, Verdict: bench.VerdictMissedCall, TotalMillis: 900, PromptTokens: 400},
		{ID: "a", Model: "m", Format: "hermes", Mode: "raw", Attempt: 1, Retries: 1, Final: true, Expected: exp, Verdict: bench.VerdictError,
			Error: "backend: ollama: server (HTTP 500): model runner crashed"},
	}
	for _, id := range []string{"b", "c"} {
		recs = append(recs, bench.Record{ID: id, Model: "m", Format: "hermes", Mode: "raw", Final: true,
			Expected: exp, Verdict: bench.VerdictError, Error: "cannot reach Ollama at http://127.0.0.1:9: connection refused"})
	}
	s := bench.Summarize(recs)
	var table, md, csv, page strings.Builder
	if err := Table(&table, s, Meta{}); err != nil {
		t.Fatal(err)
	}
	if err := Markdown(&md, s, Meta{}); err != nil {
		t.Fatal(err)
	}
	if err := CSV(&csv, s, Meta{}); err != nil {
		t.Fatal(err)
	}
	if err := HTML(&page, s, Meta{}); err != nil {
		t.Fatal(err)
	}
	number := regexp.MustCompile(`\d\.\d+%|\b0\.00\b`)
	for name, out := range map[string]string{"table": table.String(), "markdown": md.String(), "html": page.String()} {
		if m := number.FindString(out); m != "" {
			t.Errorf("%s prints %q for a group with nothing measured:\n%s", name, m, out)
		}
	}
	if !strings.Contains(table.String(), "3 of 3 case(s) failed with a harness or server error") {
		t.Errorf("table does not say the cases failed:\n%s", table.String())
	}
	if row := strings.Split(strings.TrimSpace(csv.String()), "\n")[1]; !strings.HasPrefix(row, "m,hermes,,raw,3,4,3,") || strings.Contains(row, "0.0000") {
		t.Errorf("csv row %q", row)
	}
	if !strings.Contains(page.String(), "<td>3</td><td>3</td>") || strings.Contains(page.String(), "<td>0.00</td>") {
		t.Errorf("html summary row lacks the errors or shows a mean")
	}
}

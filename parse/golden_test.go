package parse

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	goldenfile "github.com/toolharness/toolharness/internal/golden"

	"github.com/toolharness/toolharness/chat"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// goldenModes are the parses recorded for every corpus record.
var goldenModes = []struct {
	name   string
	format string
	strict bool
}{
	{"auto", "auto", false},
	{"auto_strict", "auto", true},
	{"hermes", "hermes", false},
	{"hermes_strict", "hermes", true},
}

type goldenCall struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
	Repairs   []string        `json:"repairs,omitempty"`
	Error     string          `json:"error,omitempty"`
}

type goldenParse struct {
	Calls   []goldenCall `json:"calls,omitempty"`
	Errors  []string     `json:"errors,omitempty"`
	Content int          `json:"content_bytes"`
}

type goldenRecord struct {
	Line  int                    `json:"line"`
	Model string                 `json:"model"`
	Parse map[string]goldenParse `json:"parse"`
}

func goldenOf(r Result) goldenParse {
	g := goldenParse{Content: len(r.Content)}
	for _, c := range r.Calls {
		gc := goldenCall{Name: c.Name, Arguments: c.Arguments, Repairs: c.Repairs}
		if c.Err != nil {
			gc.Error = string(c.Err.Kind) + ": " + c.Err.Message
		}
		g.Calls = append(g.Calls, gc)
	}
	for _, e := range r.Errors {
		g.Errors = append(g.Errors, fmt.Sprintf("%s@%d: %s", e.Kind, e.Offset, e.Message))
	}
	return g
}

// TestCorpusGolden parses every real record of the corpus in each golden
// mode and compares with testdata/golden_<file>.jsonl.
func TestCorpusGolden(t *testing.T) {
	recs := loadCorpus(t)
	byFile := map[string][]corpusRecord{}
	for _, r := range recs {
		byFile[r.File] = append(byFile[r.File], r)
	}
	for file, rs := range byFile {
		t.Run(file, func(t *testing.T) {
			tools := corpusTools(t, file)
			var buf bytes.Buffer
			for _, r := range rs {
				g := goldenRecord{Line: r.Line, Model: r.Model, Parse: map[string]goldenParse{}}
				for _, m := range goldenModes {
					res, err := String(m.format, r.Raw, Options{Tools: tools, Strict: m.strict})
					if err != nil {
						t.Fatal(err)
					}
					if got := reconstructResult(res, r.Raw); got != "" {
						t.Errorf("line %d %s: %s", r.Line, m.name, got)
					}
					g.Parse[m.name] = goldenOf(res)
				}
				line, err := chat.Marshal(g)
				if err != nil {
					t.Fatal(err)
				}
				buf.Write(line)
				buf.WriteByte('\n')
			}
			compareGolden(t, filepath.Join("testdata", "golden_"+strings.TrimSuffix(file, ".jsonl")+".jsonl"), buf.Bytes())
		})
	}
}

// reconstructResult checks that content plus call spans account for every
// byte of the input; it returns a problem description or "".
func reconstructResult(r Result, raw string) string {
	n := len(r.Content)
	seen := map[int]bool{}
	for _, c := range r.Calls {
		if !seen[c.Offset] {
			seen[c.Offset] = true
			n += len(c.Raw)
		}
	}
	for _, e := range r.Errors {
		if e.Raw != "" && !seen[e.Offset] {
			seen[e.Offset] = true
			n += len(e.Raw)
		}
	}
	if n != len(raw) {
		return fmt.Sprintf("content and calls hold %d bytes, input has %d", n, len(raw))
	}
	return ""
}

func compareGolden(t *testing.T, path string, got []byte) {
	t.Helper()
	goldenfile.Check(t, *update, path, string(got))
}

// TestCorpusRates measures call recovery on the corpus against the labels
// the original benchmarks gave, and compares the table with
// testdata/corpus_rates.golden (the numbers quoted in docs/parse.md).
func TestCorpusRates(t *testing.T) {
	recs := loadCorpus(t)
	var b strings.Builder
	for _, format := range []string{"hermes", "auto"} {
		writeRates(&b, format, recs, func(file string) []chat.Tool { return corpusTools(t, file) })
		b.WriteString("\n")
	}
	compareGolden(t, filepath.Join("testdata", "corpus_rates.golden"), []byte(b.String()))
}

// writeRates tabulates, per label group, how many records give a call
// without error (strict and lenient), and how many give the labelled tool
// name first.
func writeRates(b *strings.Builder, format string, recs []corpusRecord, toolsOf func(string) []chat.Tool) {
	type counts struct{ n, strict, lenient, strictName, lenientName int }
	var keys []string
	table := map[string]*counts{}
	bump := func(key string, strictCalls, lenientCalls []Call, wantName string) {
		c := table[key]
		if c == nil {
			c = &counts{}
			table[key] = c
			keys = append(keys, key)
		}
		c.n++
		ok := func(calls []Call) bool { return len(calls) > 0 && calls[0].Err == nil }
		named := func(calls []Call) bool { return ok(calls) && (wantName == "" || calls[0].Name == wantName) }
		if ok(strictCalls) {
			c.strict++
		}
		if ok(lenientCalls) {
			c.lenient++
		}
		if named(strictCalls) {
			c.strictName++
		}
		if named(lenientCalls) {
			c.lenientName++
		}
	}
	for _, r := range recs {
		tools := toolsOf(r.File)
		strict, _ := String(format, r.Raw, Options{Tools: tools, Strict: true})
		lenient, _ := String(format, r.Raw, Options{Tools: tools})
		switch {
		case r.HarnessTool != nil && *r.HarnessTool && r.Backend == "ollama":
			// Ollama's native parser took the call out; raw is what was left.
			bump("mikeveerman labelled called, native-parsed (call removed)", strict.Calls, lenient.Calls, "")
		case r.HarnessTool != nil && *r.HarnessTool:
			bump("mikeveerman labelled called", strict.Calls, lenient.Calls, r.HarnessName)
			bump("mikeveerman labelled called / "+r.Model, strict.Calls, lenient.Calls, r.HarnessName)
		case r.HarnessTool != nil:
			bump("mikeveerman labelled not called", strict.Calls, lenient.Calls, "")
		case len(r.ToolNames) > 0:
			// vLLM already took the calls out of these; what is left
			// should hold none.
			bump("hanxen server-parsed (calls removed)", strict.Calls, lenient.Calls, "")
		default:
			bump("hanxen raw", strict.Calls, lenient.Calls, "")
			bump("hanxen raw / "+r.Model, strict.Calls, lenient.Calls, "")
		}
	}
	sort.Strings(keys)
	fmt.Fprintf(b, "%-62s %5s %16s %16s %16s %16s\n", "group (format "+format+", with catalog)", "n", "strict call", "lenient call", "strict name ok", "lenient name ok")
	pct := func(k, n int) string { return fmt.Sprintf("%4d (%5.1f%%)", k, 100*float64(k)/float64(n)) }
	for _, k := range keys {
		c := table[k]
		fmt.Fprintf(b, "%-62s %5d %16s %16s %16s %16s\n", k, c.n, pct(c.strict, c.n), pct(c.lenient, c.n), pct(c.strictName, c.n), pct(c.lenientName, c.n))
	}
}

package bfcl

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/toolharness/toolharness/bench"
	"github.com/toolharness/toolharness/chat"
)

var update = flag.Bool("update", false, "rewrite the golden files")

const sample = "../../testdata/bench/bfcl_v1_sample.jsonl"

func importSample(t *testing.T) Result {
	t.Helper()
	f, err := os.Open(sample)
	if err != nil {
		t.Fatalf("%v (the BFCL sample is committed under testdata/bench)", err)
	}
	defer f.Close()
	res, err := Import(f, "bfcl-sample")
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// The golden holds the import's shape: counts, skipped questions with
// reasons, notes, and one full case per category.
func TestImportGolden(t *testing.T) {
	res := importSample(t)
	type summary struct {
		Cases      int               `json:"cases"`
		Categories map[string]int    `json:"categories"`
		Skipped    []Skipped         `json:"skipped"`
		Notes      []Note            `json:"notes"`
		Examples   []json.RawMessage `json:"examples"`
	}
	s := summary{Cases: len(res.Suite.Cases), Categories: map[string]int{}, Skipped: res.Skipped, Notes: res.Notes}
	seen := map[string]bool{}
	var examples []bench.Case
	for _, c := range res.Suite.Cases {
		s.Categories[c.Category]++
		if !seen[c.Category] {
			seen[c.Category] = true
			examples = append(examples, c)
		}
	}
	ex, err := chat.Marshal(bench.Suite{Name: "examples", Cases: examples})
	if err != nil {
		t.Fatal(err)
	}
	s.Examples = []json.RawMessage{ex}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(s); err != nil {
		t.Fatal(err)
	}
	got := buf.Bytes()
	golden := filepath.Join("testdata", "import.golden.json")
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test ./bench/bfcl -update)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("import differs from golden (-want +got):\n%s", diff)
	}
}

// Every imported case must accept BFCL's own first accepted answer and
// refuse an answer with a wrong value, and no BFCL type name may survive.
func TestImportAcceptsBFCLAnswers(t *testing.T) {
	res := importSample(t)
	if len(res.Suite.Cases)+len(res.Skipped) != 180 {
		t.Fatalf("%d cases + %d skipped, want 180 questions", len(res.Suite.Cases), len(res.Skipped))
	}
	for _, c := range res.Suite.Cases {
		for _, tool := range c.Tools {
			for _, bad := range []string{`"type":"dict"`, `"type":"float"`, `"type":"tuple"`, `"type":"any"`} {
				if strings.Contains(string(tool.Parameters), bad) {
					t.Errorf("%s: %s left in %s", c.ID, bad, tool.Name)
				}
			}
		}
		if c.Expect.NoCall {
			if v := bench.Judge(c.Expect, bench.ParseResult{Content: "I cannot help with that."}, false); v != bench.VerdictOK {
				t.Errorf("%s: prose judged %s", c.ID, v)
			}
			continue
		}
		var calls, wrong []bench.Call
		for _, e := range c.Expect.Calls {
			args := map[string]any{}
			for _, a := range e.Args {
				switch {
				case a.Kind == bench.MatchAny:
					args[a.Name] = "anything"
				case a.Optional && len(a.Values) == 1 && a.Values[0] == "":
				default:
					args[a.Name] = a.Values[0]
				}
			}
			data, _ := chat.Marshal(args)
			calls = append(calls, bench.Call{Name: e.Name, Arguments: data})
			args["__not_a_parameter"] = 1
			data, _ = chat.Marshal(args)
			wrong = append(wrong, bench.Call{Name: e.Name, Arguments: data})
		}
		// Reverse the calls: order must not matter.
		for i, j := 0, len(calls)-1; i < j; i, j = i+1, j-1 {
			calls[i], calls[j] = calls[j], calls[i]
		}
		if v := bench.Judge(c.Expect, bench.ParseResult{Calls: calls}, false); v != bench.VerdictOK {
			t.Errorf("%s: BFCL's own answer judged %s: %+v", c.ID, v, calls)
		}
		if v := bench.Judge(c.Expect, bench.ParseResult{Calls: wrong}, false); v != bench.VerdictWrongArgs {
			t.Errorf("%s: answer with an extra argument judged %s", c.ID, v)
		}
	}
}

func TestConvertTypesKeepsPropertyNamedType(t *testing.T) {
	in := `{"type":"dict","properties":{"type":{"type":"string"},"x":{"type":"float"},"t":{"type":"tuple","items":{"type":"any"}}}}`
	got, err := convertTypes([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"type":"object","properties":{"type":{"type":"string"},"x":{"type":"number"},"t":{"type":"array","items":{}}}}`
	if string(got) != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

func TestImportErrors(t *testing.T) {
	if _, err := Import(strings.NewReader("{not json\n"), "x"); err == nil || !strings.Contains(err.Error(), "line 1") {
		t.Errorf("broken line: err = %v", err)
	}
	res, err := Import(strings.NewReader(`{"id":"q","question":"?","function":{"name":"f","parameters":{"type":"dict","properties":{}}},"category":"simple","possible_answer":{"g":{}}}`+"\n"), "x")
	if err != nil || len(res.Skipped) != 1 || !strings.Contains(res.Skipped[0].Reason, `names no function`) {
		t.Errorf("answer for unknown function: res=%+v err=%v", res.Skipped, err)
	}
}

package corpusgen

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/toolharness/toolharness/bench"
)

var update = flag.Bool("update", false, "rewrite testdata/bench/corpus.jsonl")

const (
	corpusDir = "../../testdata/corpus"
	generated = "../../testdata/bench/corpus.jsonl"
)

func TestCorpusUpToDate(t *testing.T) {
	got, err := Generate(corpusDir)
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile(generated, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(generated)
	if err != nil {
		t.Fatalf("%v (run go test ./bench/corpusgen -update)", err)
	}
	if !bytes.Equal(want, got) {
		wl, gl := bytes.Split(want, []byte("\n")), bytes.Split(got, []byte("\n"))
		for i := 0; i < len(wl) && i < len(gl); i++ {
			if !bytes.Equal(wl[i], gl[i]) {
				t.Fatalf("%s differs from the generator at line %d (run go test ./bench/corpusgen -update):\n%s", generated, i+1, cmp.Diff(string(wl[i]), string(gl[i])))
			}
		}
		t.Fatalf("%s has %d lines, the generator makes %d (run go test ./bench/corpusgen -update)", generated, len(wl), len(gl))
	}
}

func TestCorpusContent(t *testing.T) {
	data, err := Generate(corpusDir)
	if err != nil {
		t.Fatal(err)
	}
	models := map[string]bool{}
	var n, noCall, expected, leftover int
	for _, line := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
		var r Record
		if err := json.Unmarshal(line, &r); err != nil {
			t.Fatal(err)
		}
		n++
		models[r.Model] = true
		if r.ExpectNoCall {
			noCall++
		}
		if len(r.Expected) > 0 {
			expected++
		}
		if r.Labels.Leftover {
			leftover++
			if len(r.Expected) > 0 {
				t.Errorf("%s: leftover text must not expect calls", r.ID)
			}
		}
		if len(r.Tools) == 0 || r.Source == "" {
			t.Errorf("%s: no tools or source", r.ID)
		}
	}
	// 431 + 337 records of the corpus README; 19 + 5 models.
	if n != 768 || len(models) != 24 {
		t.Errorf("%d records of %d models, want 768 of 24", n, len(models))
	}
	t.Logf("records %d, expect_no_call %d, expected calls %d, leftover %d", n, noCall, expected, leftover)
	if noCall == 0 || expected == 0 || leftover == 0 {
		t.Error("missing a class of records")
	}
}

// TestLabelAgreement scores the corpus with the real parsers and writes
// the agreement with the original labels, class by class, to a golden
// that docs/bench.md quotes.
func TestLabelAgreement(t *testing.T) {
	data, err := os.ReadFile(generated)
	if err != nil {
		t.Fatalf("%v (run go test ./bench/corpusgen -update)", err)
	}
	var corpus []Record
	for _, line := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
		var r Record
		if err := json.Unmarshal(line, &r); err != nil {
			t.Fatal(err)
		}
		corpus = append(corpus, r)
	}
	p, err := bench.NewParser("auto")
	if err != nil {
		t.Fatal(err)
	}
	scoredRes, err := bench.ScoreCorpus(bytes.NewReader(data), bench.CorpusOptions{Format: "auto", Parser: p})
	scored := scoredRes.Records
	if err != nil {
		t.Fatal(err)
	}
	c, err := CompareLabels(corpus, scored)
	if err != nil {
		t.Fatal(err)
	}
	got := []byte(c.Markdown())
	golden := filepath.Join("testdata", "labels.golden.md")
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test ./bench/corpusgen -update)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("label agreement changed (-want +got); check the parser change and regenerate with -update:\n%s", diff)
	}
	if c.Total != 768 || c.Agree < c.Total/2 {
		t.Errorf("agreement %d of %d", c.Agree, c.Total)
	}
}

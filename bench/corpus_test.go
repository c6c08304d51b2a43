package bench

import (
	"errors"
	"os"
	"strings"
	"testing"
)

// The shipped corpus, scored with the real parsers: every record gives
// one result, and the headline rates are what docs/bench.md reports.
func TestScoreShippedCorpus(t *testing.T) {
	f, err := os.Open("../testdata/bench/corpus.jsonl")
	if err != nil {
		t.Fatalf("%v (generate it with go test ./bench/corpusgen -update)", err)
	}
	defer f.Close()
	p, err := NewParser("auto")
	if err != nil {
		t.Fatal(err)
	}
	res, err := ScoreCorpus(f, CorpusOptions{Format: "auto", Parser: p, Validator: NewRegistryValidator()})
	recs := res.Records
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 768 {
		t.Fatalf("%d records, want 768", len(recs))
	}
	s := Summarize(recs)
	if len(s.Groups) != 24 {
		t.Errorf("%d models, want 24", len(s.Groups))
	}
	var strict, lenient, n int
	for _, r := range recs {
		if r.Error != "" {
			t.Errorf("%s: %s", r.ID, r.Error)
		}
		n++
		if StrictFailureKind(r.Strict, r.Lenient) != "" {
			strict++
		}
		if r.Lenient.Failed() {
			lenient++
		}
	}
	t.Logf("strict failures %d/%d, lenient %d/%d", strict, n, lenient, n)
	if lenient > strict {
		t.Errorf("lenient parsing fails more often (%d) than strict (%d)", lenient, strict)
	}
}

func TestScoreCorpusBadLines(t *testing.T) {
	in := strings.Join([]string{
		`{"id":"a","raw":"<tool_call>{\"name\":\"f\",\"arguments\":{}}</tool_call>","tools":[{"name":"f"}],"expected":[{"name":"f"}]}`,
		`{not json`,
		`{"id":"c"}`,
		`{"id":"d","raw":"hi","tools":[{"name":"f"}],"expect_no_call":true,"model":"m2"}`,
	}, "\n")
	p, err := NewParser("hermes")
	if err != nil {
		t.Fatal(err)
	}
	res, err := ScoreCorpus(strings.NewReader(in), CorpusOptions{Format: "hermes", Parser: p, DefaultModel: "m1"})
	if err != nil {
		t.Fatal(err)
	}
	recs := res.Records
	if got := res.Unreadable; len(got) != 2 || got[0].Line != 2 || got[1].Line != 3 {
		t.Errorf("unreadable lines %+v, want lines 2 and 3", got)
	}
	if len(recs) != 4 {
		t.Fatalf("%d records", len(recs))
	}
	want := []struct {
		id, model string
		verdict   Verdict
		err       string
	}{
		{"a", "m1", VerdictOK, ""},
		{"line-2", "m1", VerdictError, "input line 2"},
		{"c", "m1", VerdictError, `no "raw"`},
		{"d", "m2", VerdictOK, ""},
	}
	for i, w := range want {
		r := recs[i]
		if r.ID != w.id || r.Model != w.model || r.Verdict != w.verdict || !strings.Contains(r.Error, w.err) || (w.err == "") != (r.Error == "") {
			t.Errorf("record %d = %s/%s %s %q, want %+v", i, r.ID, r.Model, r.Verdict, r.Error, w)
		}
	}
}

// TestScoreCorpusNothingReadable checks that a file with no record in it
// (a binary file, the wrong file) is an error, while an empty input is
// an empty result and records without tools are counted.
func TestScoreCorpusNothingReadable(t *testing.T) {
	p, err := NewParser("auto")
	if err != nil {
		t.Fatal(err)
	}
	_, err = ScoreCorpus(strings.NewReader("\x00\x01\xff binary\n\x7fELF\n"), CorpusOptions{Format: "auto", Parser: p})
	if !errors.Is(err, ErrNoRecords) || !strings.Contains(err.Error(), "none of the 2 non-empty lines is a record (line 1: not a JSON record") {
		t.Errorf("garbage: %v", err)
	}
	res, err := ScoreCorpus(strings.NewReader("\n\n"), CorpusOptions{Format: "auto", Parser: p})
	if err != nil || len(res.Records) != 0 {
		t.Errorf("empty: %d records, %v", len(res.Records), err)
	}
	res, err = ScoreCorpus(strings.NewReader(`{"raw":"<tool_call>{\"name\":\"f\",\"arguments\":{}}</tool_call>"}`), CorpusOptions{Format: "auto", Parser: p})
	if err != nil || res.NoCatalog != 1 {
		t.Errorf("no catalog: counted %d, %v", res.NoCatalog, err)
	}
}

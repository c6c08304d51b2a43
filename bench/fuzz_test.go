package bench

import (
	"bytes"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/toolharness/toolharness/chat"
)

// FuzzParseSuite: any input gives a suite or an error, never a panic; a
// suite that parses survives a round trip.
func FuzzParseSuite(f *testing.F) {
	f.Add(defaultSuite)
	f.Add([]byte(`{"tools":[{"name":"f"}],"cases":[{"id":"a","prompt":"x","expect":{"calls":[{"name":"f","args":{"a":{"regex":"x+","optional":true}}}]}}]}`))
	f.Add([]byte("cases: [{id: a, prompt: x, expect: {no_call: true}}]\ntools: [{name: f}]"))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := ParseSuite(data)
		if err != nil {
			return
		}
		out, err := chat.Marshal(s)
		if err != nil {
			t.Fatalf("marshal: %v", err)
		}
		if _, err := ParseSuite(out); err != nil {
			t.Fatalf("round trip: %v\n%s", err, out)
		}
	})
}

// FuzzScoreCorpus, seeded with real recorded outputs: one record per
// non-empty input line, never a panic.
func FuzzScoreCorpus(f *testing.F) {
	data, err := os.ReadFile("../testdata/bench/corpus.jsonl")
	if err != nil {
		f.Fatalf("%v (generate it with go test ./bench/corpusgen -update)", err)
	}
	for i, line := range bytes.Split(data, []byte("\n")) {
		if i%40 == 0 && len(line) > 0 {
			f.Add(line)
		}
	}
	p, err := NewParser("auto")
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		want := 0
		for _, l := range strings.Split(string(line), "\n") {
			if strings.TrimSpace(l) != "" {
				want++
			}
		}
		res, err := ScoreCorpus(bytes.NewReader(line), CorpusOptions{Format: "auto", Parser: p, Validator: NewRegistryValidator()})
		recs := res.Records
		if errors.Is(err, ErrNoRecords) && len(res.Unreadable) == len(recs) {
			err = nil // every line unreadable: an error, with every line still recorded
		}
		if err != nil {
			t.Fatal(err)
		}
		if len(recs) != want {
			t.Fatalf("%d records for %d lines", len(recs), want)
		}
	})
}

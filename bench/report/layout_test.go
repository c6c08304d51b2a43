package report

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/toolharness/toolharness/bench"
)

// longNames is the fixture with the longest model name of the shipped
// corpus and three formats, the widest tables a run makes.
func longNames() []bench.Record {
	var recs []bench.Record
	for _, r := range fixture() {
		if r.Model == "<b>tiny</b> & co" {
			r.Model = "cyankiwi/Qwen3-Coder-30B-A3B-Instruct-AWQ-4bit-and-some-more"
		}
		recs = append(recs, r)
		if r.Format == "hermes" && r.Model == "qwen2.5:7b" {
			r.Format, r.FormatUsed = bench.Native, "hermes"
			recs = append(recs, r)
		}
	}
	return recs
}

// TestTablesFitAndShowKN: the terminal tables fit 120 columns and every
// rate shows its k/n.
func TestTablesFitAndShowKN(t *testing.T) {
	s := bench.Summarize(longNames())
	m := Meta{Manifest: fixtureManifest(3)}
	for name, write := range map[string]func(*strings.Builder) error{
		"table":   func(b *strings.Builder) error { return Table(b, s, m) },
		"compare": func(b *strings.Builder) error { return CompareTable(b, s, "qwen2.5:7b", m) },
	} {
		var b strings.Builder
		if err := write(&b); err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(b.String(), "\n") {
			if n := utf8.RuneCountInString(line); n > TableWidth {
				t.Errorf("%s: a line of %d columns:\n%s", name, n, line)
			}
		}
		// Three of qwen2.5:7b/hermes's 12 first attempts fail strictly.
		for _, want := range []string{"25.0% 3/12", "[8.9–53.2]", "100.0% 12/12"} {
			if !strings.Contains(b.String(), want) {
				t.Errorf("%s lacks %q:\n%s", name, want, b.String())
			}
		}
	}
}

// TestRetryRowsFollowTheBudget: with --max-retries 1 there are no rows
// or columns for 2 or 3 retries anywhere; recorded outputs (no retries,
// no timings) have no retry or latency section.
func TestRetryRowsFollowTheBudget(t *testing.T) {
	var recs []bench.Record
	for _, r := range fixture() {
		if r.Model != "<b>tiny</b> & co" { // the one group with 3 retries
			recs = append(recs, r)
		}
	}
	s := bench.Summarize(recs)
	m := Meta{Manifest: fixtureManifest(1)}
	outs := map[string]*strings.Builder{"table": {}, "compare": {}, "markdown": {}, "html": {}}
	for name, err := range map[string]error{
		"table": Table(outs["table"], s, m), "compare": CompareTable(outs["compare"], s, "qwen2.5:7b", m),
		"markdown": Markdown(outs["markdown"], s, m), "html": HTML(outs["html"], s, m),
	} {
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	for name, b := range outs {
		if strings.Contains(b.String(), "≤2") || strings.Contains(b.String(), "≤3") || strings.Contains(b.String(), "3 retries") {
			t.Errorf("%s shows 2 or 3 retries with --max-retries 1:\n%s", name, b.String())
		}
		if !strings.Contains(b.String(), "≤1 retry") && name != "html" {
			t.Errorf("%s has no ≤1 retry:\n%s", name, b.String())
		}
	}

	var corpus []bench.Record
	for _, r := range recs {
		if r.Attempt == 0 {
			r.Final, r.Retries, r.TTFTMillis, r.TotalMillis, r.PromptTokens, r.GeneratedTokens, r.CachedKnown = true, 0, 0, 0, 0, 0, false
			r.Mode, r.Success = "recorded", r.Verdict.Success()
			corpus = append(corpus, r)
		}
	}
	cs := bench.Summarize(corpus)
	var page, md, table strings.Builder
	if err := HTML(&page, cs, Meta{}); err != nil {
		t.Fatal(err)
	}
	if err := Markdown(&md, cs, Meta{}); err != nil {
		t.Fatal(err)
	}
	if err := Table(&table, cs, Meta{}); err != nil {
		t.Fatal(err)
	}
	for _, absent := range []string{"chart-retries", "chart-latency", "<h2>Retries", "<h2>Latency", "retries</th>", "no timings"} {
		if strings.Contains(page.String(), absent) {
			t.Errorf("recorded outputs: the page has %q", absent)
		}
	}
	for name, out := range map[string]string{"markdown": md.String(), "table": table.String()} {
		if strings.Contains(out, "retr") || strings.Contains(out, "latency") {
			t.Errorf("recorded outputs: %s shows retries or latency:\n%s", name, out)
		}
	}
}

// TestNativeIsNamed: a group of the native format says what it resolved
// to, in the tables and the page.
func TestNativeIsNamed(t *testing.T) {
	s := bench.Summarize(longNames())
	var cmp, page, md strings.Builder
	if err := CompareTable(&cmp, s, "qwen2.5:7b", Meta{}); err != nil {
		t.Fatal(err)
	}
	if err := HTML(&page, s, Meta{}); err != nil {
		t.Fatal(err)
	}
	if err := Markdown(&md, s, Meta{}); err != nil {
		t.Fatal(err)
	}
	for name, out := range map[string]string{"compare": cmp.String(), "html": page.String(), "markdown": md.String()} {
		if !strings.Contains(out, "native=hermes") {
			t.Errorf("%s does not say what native resolved to:\n%s", name, out)
		}
	}
	if !strings.Contains(cmp.String(), "native=hermes 100.0% vs") && !strings.Contains(cmp.String(), "vs native=hermes") {
		t.Errorf("verdicts do not name native's resolution:\n%s", cmp.String())
	}
}

// TestCompareMissListsModels: comparing a model the results lack names
// the models they have.
func TestCompareMissListsModels(t *testing.T) {
	err := CompareTable(&strings.Builder{}, bench.Summarize(fixture()), "llama3.2", Meta{})
	var miss *NoModelError
	if !errors.As(err, &miss) || !strings.Contains(err.Error(), `the results have <b>tiny</b> & co, qwen2.5:7b`) {
		t.Errorf("err = %v", err)
	}
}

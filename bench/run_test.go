package bench

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolharness/toolharness/backend"
	"github.com/toolharness/toolharness/internal/reach/reachtest"
)

// scriptDriver answers every case by rule, so the runner's bookkeeping
// (queue, resume, cancellation) can be checked exactly: restraint cases get
// prose, others the first expected call on the second attempt for format
// "xml" (one retry) and on the first otherwise.
type scriptDriver struct {
	calls   atomic.Int64
	block   chan struct{} // when set, cases after the first `after` block until closed
	after   int64
	mu      sync.Mutex
	perEndp map[string]int
}

func (d *scriptDriver) RunCase(ctx context.Context, endpoint string, cell Cell, c Case) (CaseRun, error) {
	n := d.calls.Add(1)
	d.mu.Lock()
	if d.perEndp == nil {
		d.perEndp = map[string]int{}
	}
	d.perEndp[endpoint]++
	d.mu.Unlock()
	if d.block != nil && n > d.after {
		select {
		case <-d.block:
		case <-ctx.Done():
			return CaseRun{}, ctx.Err()
		}
	}
	time.Sleep(time.Millisecond)
	run := CaseRun{FormatUsed: cell.Format}
	if c.Expect.NoCall {
		run.Attempts = []AttemptRun{{Raw: "Hello!", Lenient: ParseResult{Content: "Hello!"}, Strict: ParseResult{Content: "Hello!"}}}
		return run, nil
	}
	want := c.Expect.Calls[0]
	args := map[string]any{}
	for _, a := range want.Args {
		if len(a.Values) > 0 {
			args[a.Name] = a.Values[0]
		}
	}
	data, _ := json.Marshal(args)
	good := ParseResult{Calls: []Call{{Name: want.Name, Arguments: data}}}
	bad := ParseResult{Errors: []Problem{{Kind: "bad_json", Message: "x"}}}
	if cell.Format == "xml" {
		run.Attempts = append(run.Attempts, AttemptRun{Raw: "<broken", Lenient: bad, Strict: bad})
	}
	run.Attempts = append(run.Attempts, AttemptRun{Raw: "call", Lenient: good, Strict: good, Total: 5 * time.Millisecond})
	return run, nil
}

func testSuite(t *testing.T) Suite {
	t.Helper()
	s, err := ParseSuite([]byte(`
tools: [{name: f, input_schema: {type: object, properties: {a: {type: string}}}}]
cases:
  - {id: c1, category: single, prompt: one, expect: {calls: [{name: f, args: {a: x}}]}}
  - {id: c2, category: single, prompt: two, expect: {calls: [{name: f, args: {a: y}}]}}
  - {id: c3, category: restraint, prompt: hi, expect: {no_call: true}}
`))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func keysOf(t *testing.T, recs []Record) map[Key]int {
	t.Helper()
	finals := map[Key]int{}
	for _, r := range recs {
		if r.Final {
			finals[r.Key()]++
		}
	}
	return finals
}

func TestRunSpreadsAndRecords(t *testing.T) {
	dir := t.TempDir()
	cells, err := ParseCells([]string{"m1", "m2"}, []string{"hermes", "xml"}, []string{"raw"})
	if err != nil {
		t.Fatal(err)
	}
	d := &scriptDriver{}
	var last Progress
	res, err := Run(context.Background(), RunConfig{
		Suite: testSuite(t), Cells: cells, Repeats: 2, Driver: d, Out: dir,
		Endpoints: []Endpoint{{URL: "http://a", Concurrency: 2}, {URL: "http://b", Concurrency: 1}},
		Progress:  func(p Progress) { last = p },
	})
	if err != nil {
		t.Fatal(err)
	}
	const cases = 2 * 2 * 2 * 3
	if res.Done != cases || res.Interrupted || last.Done != cases || last.Total != cases {
		t.Fatalf("done %d interrupted %v progress %+v", res.Done, res.Interrupted, last)
	}
	if d.perEndp["http://a"] == 0 || d.perEndp["http://b"] == 0 {
		t.Errorf("work not spread over endpoints: %v", d.perEndp)
	}
	recs, err := ReadResults(dir)
	if err != nil {
		t.Fatal(err)
	}
	// Per model × format: 2 repeats × 3 cases; xml cases that expect calls
	// take two attempts.
	if want := cases + 2*2*2; len(recs) != want {
		t.Errorf("%d records, want %d", len(recs), want)
	}
	for k, n := range keysOf(t, recs) {
		if n != 1 {
			t.Errorf("%v final %d times", k, n)
		}
	}
	s := Summarize(recs)
	for _, g := range s.Groups {
		if g.Format == "xml" && (g.FirstTry.K != 2 || g.Within1.K != 6 || g.LenientFailure.K != 4) {
			t.Errorf("xml group %s: first %+v within1 %+v lenient %+v", g.Model, g.FirstTry, g.Within1, g.LenientFailure)
		}
		if g.Format == "hermes" && g.FirstTry.K != 6 {
			t.Errorf("hermes group %s: first %+v", g.Model, g.FirstTry)
		}
	}
	if _, err := Run(context.Background(), RunConfig{Suite: testSuite(t), Cells: cells, Driver: d, Out: dir,
		Endpoints: []Endpoint{{URL: "http://a"}}}); err == nil || !strings.Contains(err.Error(), "--resume") {
		t.Errorf("rerun without resume: err = %v", err)
	}
}

func TestRunCancelAndResume(t *testing.T) {
	dir := t.TempDir()
	cells, _ := ParseCells([]string{"m"}, []string{"hermes", "xml"}, []string{"raw", "chat"})
	suite := testSuite(t)
	total := len(cells) * len(suite.Cases) * 3
	d := &scriptDriver{block: make(chan struct{}), after: 5}
	ctx, cancel := context.WithCancel(context.Background())
	var once sync.Once
	res, err := Run(ctx, RunConfig{
		Suite: suite, Cells: cells, Repeats: 3, Driver: d, Out: dir,
		Endpoints: []Endpoint{{URL: "http://a", Concurrency: 2}, {URL: "http://b", Concurrency: 2}},
		Progress: func(p Progress) {
			if p.Done >= 3 {
				once.Do(cancel)
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Interrupted || res.Done == 0 || res.Done >= total {
		t.Fatalf("interrupted %v done %d of %d", res.Interrupted, res.Done, total)
	}
	first := res.Done
	// A crash mid-write leaves a torn line: resume must cut it.
	f, err := os.OpenFile(filepath.Join(dir, ResultsFile), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"id":"c1","model":"m","format":"hermes","mode":"raw","final":tr`)
	f.Close()

	d2 := &scriptDriver{}
	res2, err := Run(context.Background(), RunConfig{
		Suite: suite, Cells: cells, Repeats: 3, Driver: d2, Out: dir, Resume: true,
		Endpoints: []Endpoint{{URL: "http://a", Concurrency: 3}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if res2.Skipped != first || res2.Done != total-first || res2.Interrupted {
		t.Errorf("resume skipped %d (want %d), done %d (want %d)", res2.Skipped, first, res2.Done, total-first)
	}
	if int(d2.calls.Load()) != total-first {
		t.Errorf("resume ran %d cases, want %d", d2.calls.Load(), total-first)
	}
	recs, err := ReadResults(dir)
	if err != nil {
		t.Fatal(err)
	}
	finals := checkOncePerCase(t, recs, total)
	// Every attempt record belongs to a final case: nothing half-written.
	perKey := map[Key]int{}
	for _, r := range recs {
		perKey[r.Key()]++
	}
	for k := range perKey {
		if finals[k] != 1 {
			t.Errorf("attempt records of %v without its final record", k)
		}
	}
}

func TestParseCells(t *testing.T) {
	cells, err := ParseCells([]string{"a", "b"}, []string{"hermes", Native}, []string{"raw", "chat"})
	if err != nil || len(cells) != 8 || cells[0] != (Cell{"a", "hermes", "raw"}) {
		t.Errorf("cells %v err %v", cells, err)
	}
	// Server mode: one cell per model, whatever the formats.
	cells, err = ParseCells([]string{"a", "b"}, []string{"hermes", "xml"}, []string{"raw", "server"})
	want := []Cell{{"a", "hermes", "raw"}, {"a", "xml", "raw"}, {"a", ServerFormat, "server"},
		{"b", "hermes", "raw"}, {"b", "xml", "raw"}, {"b", ServerFormat, "server"}}
	if err != nil || !slices.Equal(cells, want) {
		t.Errorf("server cells %v err %v; want %v", cells, err, want)
	}
	bad := []struct {
		name                  string
		models, formats, mode []string
		want                  string
	}{
		{"bad mode", []string{"a"}, []string{"hermes"}, []string{"bogus"}, `bench: --modes "bogus": want raw, chat or server`},
		{"bad format", []string{"a"}, []string{"hermes", "nope"}, []string{"raw"}, `bench: --formats "nope": want one of `},
		{"twice", []string{"a", "a"}, []string{"hermes"}, []string{"raw"}, `bench: --models: "a" given twice`},
		{"no model", nil, []string{"hermes"}, []string{"raw"}, "bench: give at least one model, format and mode"},
	}
	for _, tt := range bad {
		if _, err := ParseCells(tt.models, tt.formats, tt.mode); err == nil || !strings.HasPrefix(err.Error(), tt.want) {
			t.Errorf("%s: got %v, want %q…", tt.name, err, tt.want)
		}
	}
}

// deadDriver fails every case on endpoints in dead as a backend that
// cannot connect would, and runs the others as scriptDriver does.
type deadDriver struct {
	scriptDriver
	dead map[string]bool
}

func (d *deadDriver) RunCase(ctx context.Context, endpoint string, cell Cell, c Case) (CaseRun, error) {
	if d.dead[endpoint] {
		d.calls.Add(1)
		_, err := http.Get(endpoint)
		if err == nil {
			return CaseRun{}, errors.New("the dead endpoint answered")
		}
		return CaseRun{FormatUsed: cell.Format}, &backend.Error{Kind: backend.KindUnreachable, Backend: "ollama", Err: err}
	}
	return d.scriptDriver.RunCase(ctx, endpoint, cell, c)
}

// TestRunStopsDeadEndpoint checks that a server that cannot be reached is
// one error case and a stopped endpoint, not a column of measurements:
// alone, the rest of the run does not happen; beside a live endpoint, the
// live one runs everything else; on resume the error case runs again.
func TestRunStopsDeadEndpoint(t *testing.T) {
	suite := testSuite(t)
	cells, _ := ParseCells([]string{"m"}, []string{"hermes", "xml"}, []string{"raw"})
	total := len(cells) * len(suite.Cases)
	dead := reachtest.DeadURL(t)

	dir := t.TempDir()
	d := &deadDriver{dead: map[string]bool{dead: true}}
	res, err := Run(context.Background(), RunConfig{Suite: suite, Cells: cells, Driver: d, Out: dir,
		Endpoints: []Endpoint{{URL: dead, Concurrency: 1}}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Done != 1 || res.Errors != 1 || res.NotRun != total-1 || res.Interrupted || len(res.Stopped) != 1 {
		t.Fatalf("dead alone: done %d errors %d not run %d interrupted %v stopped %v", res.Done, res.Errors, res.NotRun, res.Interrupted, res.Stopped)
	}
	if want := "cannot reach Ollama at " + dead + ": connection refused (endpoint stopped after 1 case(s))"; res.Stopped[0].Error() != want {
		t.Errorf("stop line %q, want %q", res.Stopped[0].Error(), want)
	}
	if r := res.Records[0]; r.Verdict != VerdictError || !strings.Contains(r.Error, "unreachable") || r.Success {
		t.Errorf("the failed case is recorded as %+v", r)
	}
	g := Summarize(res.Records).Groups[0]
	if g.Errors != 1 || g.LenientFailure.Measured() || g.MissedCall.Measured() || g.FirstTry.Measured() {
		t.Errorf("an error case was measured: %+v", g)
	}

	// Resume beside a live endpoint: the error case runs again, once.
	d2 := &deadDriver{dead: map[string]bool{dead: true}}
	res2, err := Run(context.Background(), RunConfig{Suite: suite, Cells: cells, Driver: d2, Out: dir, Resume: true,
		Endpoints: []Endpoint{{URL: dead, Concurrency: 1}, {URL: "http://live", Concurrency: 1}}})
	if err != nil {
		t.Fatal(err)
	}
	if res2.Skipped != 0 || res2.NotRun != 0 || len(res2.Stopped) != 1 || res2.Done != total {
		t.Fatalf("resume: skipped %d not run %d stopped %v done %d", res2.Skipped, res2.NotRun, res2.Stopped, res2.Done)
	}
	recs, err := ReadResults(dir)
	if err != nil {
		t.Fatal(err)
	}
	checkOncePerCase(t, recs, total)
	errs := 0
	for _, r := range recs {
		if r.Error != "" {
			errs++
		}
	}
	if errs != res2.Errors || errs > 1 {
		t.Errorf("%d error records after resume, run says %d", errs, res2.Errors)
	}
}

// checkOncePerCase asserts that recs hold total distinct cases, each with
// exactly one final record, and returns the final records per case.
func checkOncePerCase(t *testing.T, recs []Record, total int) map[Key]int {
	t.Helper()
	finals := keysOf(t, recs)
	if len(finals) != total {
		t.Errorf("%d distinct cases in results, want %d", len(finals), total)
	}
	for k, n := range finals {
		if n != 1 {
			t.Errorf("%v recorded %d times", k, n)
		}
	}
	return finals
}

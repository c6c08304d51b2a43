package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/toolharness/toolharness/bench"
	"github.com/toolharness/toolharness/internal/ollamatest"
)

func benchCLI(t *testing.T, stdin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = run(append([]string{"toolharness"}, args...), strings.NewReader(stdin), &out, &errOut)
	return out.String(), errOut.String(), code
}

const shippedCorpus = "../../testdata/bench/corpus.jsonl"

func TestBenchCorpusCommand(t *testing.T) {
	dir := t.TempDir()
	out, errOut, code := benchCLI(t, "", "bench", "corpus", "--in", shippedCorpus, "--out", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if !strings.HasPrefix(l, "repairs (") {
			lines = append(lines, l)
		}
	}
	// Header note, column names, rule, then one row per model (and a
	// line of repairs per model that had any).
	if len(lines) != 3+24 || !strings.Contains(lines[0], "format auto, mode recorded") {
		t.Errorf("table has %d lines:\n%s", len(lines), out)
	}
	for _, name := range []string{"results.jsonl", "summary.json", "summary.csv", "summary.md", "report.html"} {
		if st, err := os.Stat(filepath.Join(dir, name)); err != nil || st.Size() == 0 {
			t.Errorf("%s not written: %v", name, err)
		}
	}
	recs, err := bench.ReadResults(dir)
	if err != nil || len(recs) != 768 {
		t.Fatalf("results: %d records, %v", len(recs), err)
	}

	// bench report rebuilds the same summary from results.jsonl.
	first, _ := os.ReadFile(filepath.Join(dir, "summary.csv"))
	os.Remove(filepath.Join(dir, "summary.csv"))
	out, errOut, code = benchCLI(t, "", "bench", "report", "--json", dir)
	if code != 0 {
		t.Fatalf("report: exit %d: %s", code, errOut)
	}
	var s struct{ Groups []bench.Group }
	if err := json.Unmarshal([]byte(out), &s); err != nil || len(s.Groups) != 24 {
		t.Fatalf("report --json: %d groups, %v", len(s.Groups), err)
	}
	again, err := os.ReadFile(filepath.Join(dir, "summary.csv"))
	if err != nil || !bytes.Equal(first, again) {
		t.Errorf("bench report wrote a different summary.csv (%v)", err)
	}

	// compare --from reads the same results.
	out, errOut, code = benchCLI(t, "", "compare", "--model", "gemma3:1b", "--from", dir)
	if code != 0 || !strings.Contains(out, "lenient fail") || !strings.Contains(out, "auto (recorded)") {
		t.Errorf("compare --from: exit %d\n%s%s", code, out, errOut)
	}
}

func TestBenchCorpusStdin(t *testing.T) {
	in := `{"id":"a","model":"m","raw":"<tool_call>{\"name\":\"f\",\"arguments\":{\"x\":1}}</tool_call>","expected":[{"name":"f"}]}
{"id":"b","model":"m","raw":"` + "```json\\n" + `{\"name\":\"f\",\"arguments\":{\"x\":1}}` + "\\n```" + `","expect_no_call":true}
`
	tools := filepath.Join(t.TempDir(), "tools.json")
	if err := os.WriteFile(tools, []byte(`[{"name":"f","input_schema":{"type":"object","properties":{"x":{"type":"integer"}}}}]`), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := benchCLI(t, in, "bench", "corpus", "--format", "hermes", "--in", "-", "--tools", tools, "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var s struct{ Groups []bench.Group }
	if err := json.Unmarshal([]byte(out), &s); err != nil || len(s.Groups) != 1 {
		t.Fatalf("%v: %s", err, out)
	}
	g := s.Groups[0]
	// b is a fenced call: the strict parser misses it, the lenient one
	// repairs it, and it is a false call for a restraint case.
	if g.Cases != 2 || g.StrictFailure.K != 1 || g.LenientFailure.K != 0 || g.FalseCall.K != 1 || g.StrictFailureKinds["needs_code_fence"] != 1 {
		t.Errorf("group %+v", g)
	}
}

func TestBenchErrors(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"bench", "corpus", "--format", "nope", "--in", shippedCorpus}, "nope"},
		{[]string{"bench", "corpus", "--in", "/does/not/exist"}, "no such file"},
		{[]string{"bench", "report", t.TempDir()}, "no such file"},
		{[]string{"bench", "report"}, "exactly one results directory"},
		{[]string{"bench", "run", "--models", "m", "--modes", "bogus"}, `--modes "bogus"`},
		{[]string{"bench", "run", "--models", "m", "--endpoint", "http://h#x"}, "positive number"},
		{[]string{"compare", "--model", "m", "--from", t.TempDir()}, "no such file"},
	}
	for _, tt := range tests {
		_, errOut, code := benchCLI(t, "", tt.args...)
		if code == 0 || !strings.Contains(errOut, tt.want) {
			t.Errorf("%v: exit %d, stderr %q, want %q", tt.args, code, errOut, tt.want)
		}
	}
}

func TestBenchImportBFCL(t *testing.T) {
	out, errOut, code := benchCLI(t, "", "bench", "import-bfcl", "../../testdata/bench/bfcl_v1_sample.jsonl")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	s, err := bench.ParseSuite([]byte(out))
	if err != nil || len(s.Cases) != 179 || !strings.Contains(errOut, "skipped parallel_multiple_function_179") {
		t.Errorf("%d cases, %v, stderr %q", len(s.Cases), err, errOut)
	}
}

func TestBenchHelpHasExamples(t *testing.T) {
	for _, args := range [][]string{{"bench", "--help"}, {"bench", "corpus", "--help"}, {"bench", "run", "--help"},
		{"bench", "report", "--help"}, {"bench", "import-bfcl", "--help"}, {"compare", "--help"}} {
		out, _, code := benchCLI(t, "", args...)
		if code != 0 || !strings.Contains(out, "Example") {
			t.Errorf("%v: exit %d, no example:\n%s", args, code, out)
		}
	}
}

// TestE2EBenchCLI drives `compare` (which runs the matrix) and `bench run
// --resume` through the CLI against the test Ollama.
func TestE2EBenchCLI(t *testing.T) {
	srv := ollamatest.Start(t, ollamatest.WithOwnProcess())
	dir := t.TempDir()
	suite := smallSuite(t, dir)
	out := filepath.Join(dir, "run")
	common := []string{"--suite", suite, "--endpoint", srv.URL, "--template", "chatml", "--max-tokens", "24", "--max-retries", "1", "--seed", "3"}
	stdout, stderr, code := benchCLI(t, "", append([]string{"compare", "--model", srv.Model, "--formats", "hermes,xml", "--out", out}, common...)...)
	if code != 0 {
		t.Fatalf("compare: exit %d\n%s", code, stderr)
	}
	if !strings.Contains(stdout, "hermes (raw)") || !strings.Contains(stdout, "xml (raw)") || !strings.Contains(stdout, "verdicts") {
		t.Errorf("compare table:\n%s", stdout)
	}
	t.Logf("compare:\n%s", stdout)
	if !strings.Contains(stderr, "bench: 4/4 cases done") {
		t.Errorf("no plain progress line on a non-terminal:\n%s", stderr)
	}
	recs, err := bench.ReadResults(out)
	if err != nil {
		t.Fatal(err)
	}
	n := len(recs)
	stdout, stderr, code = benchCLI(t, "", append([]string{"bench", "run", "--models", srv.Model, "--formats", "hermes,xml", "--out", out, "--resume"}, common...)...)
	if code != 0 || !strings.Contains(stderr, "4/4 cases done (4 resumed)") {
		t.Fatalf("resume: exit %d\n%s%s", code, stdout, stderr)
	}
	if recs, _ = bench.ReadResults(out); len(recs) != n {
		t.Errorf("resume of a finished run changed the results: %d records, was %d", len(recs), n)
	}
	if _, _, code = benchCLI(t, "", append([]string{"bench", "run", "--models", srv.Model, "--out", out}, common...)...); code == 0 {
		t.Error("bench run into a directory with results, without --resume, succeeded")
	}

	// Ctrl-C in the middle of a run: the finished cases stay, the reports
	// are written, exit status 130; --resume finishes the rest.
	out2 := filepath.Join(dir, "interrupted")
	args := append([]string{"bench", "run", "--models", srv.Model, "--formats", "hermes,xml", "--repeats", "6", "--out", out2}, common...)
	type result struct {
		stderr string
		code   int
	}
	done := make(chan result, 1)
	go func() {
		_, stderr, code := benchCLI(t, "", args...)
		done <- result{stderr, code}
	}()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		if data, _ := os.ReadFile(filepath.Join(out2, "results.jsonl")); bytes.Count(data, []byte("\n")) >= 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no result written within 2 minutes")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := syscall.Kill(os.Getpid(), syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	r := <-done
	const total = 2 * 2 * 6
	if r.code != 130 || !strings.Contains(r.stderr, "interrupted after") {
		t.Fatalf("after SIGINT: exit %d\n%s", r.code, r.stderr)
	}
	partial, err := bench.ReadResults(out2)
	if err != nil {
		t.Fatal(err)
	}
	finished := map[bench.Key]bool{}
	for _, rec := range partial {
		if rec.Final {
			finished[rec.Key()] = true
		}
	}
	if len(finished) == 0 || len(finished) >= total {
		t.Fatalf("%d of %d cases finished before the interrupt", len(finished), total)
	}
	if _, err := os.Stat(filepath.Join(out2, "report.html")); err != nil {
		t.Errorf("no report after the interrupt: %v", err)
	}
	_, stderr, code = benchCLI(t, "", append(args, "--resume")...)
	if code != 0 || !strings.Contains(stderr, fmt.Sprintf("%d/%d cases done (%d resumed)", total, total, len(finished))) {
		t.Fatalf("resume after interrupt: exit %d\n%s", code, stderr)
	}
	all, err := bench.ReadResults(out2)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[bench.Key]int{}
	for _, rec := range all {
		if rec.Final {
			seen[rec.Key()]++
		}
	}
	if len(seen) != total {
		t.Errorf("%d cases after resume, want %d", len(seen), total)
	}
	for k, n := range seen {
		if n != 1 {
			t.Errorf("%v recorded %d times", k, n)
		}
	}
	t.Logf("interrupted after %d of %d cases; resume completed the rest", len(finished), total)
}

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
	"unicode/utf8"

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
	lines := strings.Split(strings.TrimSpace(out), "\n")
	// The manifest (build, input), a blank line, the header note, then two
	// tables (parse rates, call rates) with a row for each of the 24 models.
	if !strings.HasPrefix(lines[1], "input "+shippedCorpus+", sha256 ") || !strings.Contains(lines[3], "format auto, mode recorded") ||
		strings.Count(out, "\nsmollm3:3b ") != 2 || strings.Count(out, "\nmodel ") != 2 {
		t.Errorf("table:\n%s", out)
	}
	for _, line := range lines {
		if n := utf8.RuneCountInString(line); n > 120 {
			t.Errorf("a line of %d columns: %s", n, line)
		}
	}
	for _, name := range []string{"results.jsonl", "manifest.json", "summary.json", "summary.csv", "summary.md", "report.html"} {
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
	if code != 0 || !strings.Contains(out, "lenient fail") || !strings.Contains(out, "auto (recorded)") || !strings.Contains(out, "input "+shippedCorpus) {
		t.Errorf("compare --from: exit %d\n%s%s", code, out, errOut)
	}
	// A model the results lack: the models they have are listed.
	_, errOut, code = benchCLI(t, "", "compare", "--model", "gemma3:2b", "--from", dir)
	if code != 1 || !strings.Contains(errOut, `compare: `+dir+` has no results for model "gemma3:2b"; it has Qwen/Qwen2.5-Coder-14B-Instruct, `) ||
		!strings.Contains(errOut, "gemma3:1b") {
		t.Errorf("compare --from, another model: exit %d\n%s", code, errOut)
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
	emptyDir := t.TempDir()
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"bench", "corpus", "--format", "nope", "--in", shippedCorpus}, "nope"},
		{[]string{"bench", "corpus", "--in", "/does/not/exist"}, "no such file"},
		{[]string{"bench", "report", "/does/not/exist"}, "toolharness: bench report: /does/not/exist: no such file or directory\n"},
		{[]string{"bench", "report", emptyDir}, "toolharness: bench report: " + emptyDir + " has no results.jsonl: give the --out directory of a bench run or compare\n"},
		{[]string{"bench", "report"}, "exactly one results directory"},
		{[]string{"bench", "run", "--models", "m", "--modes", "bogus"}, `--modes "bogus"`},
		{[]string{"bench", "run", "--models", "m", "--endpoint", "http://h#x"}, "positive number"},
		{[]string{"compare", "--model", "m", "--from", emptyDir}, "toolharness: compare: --from " + emptyDir + " has no results.jsonl: give the --out directory of a bench run or compare\n"},
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
	// The manifest holds what the server said of itself, and a resume
	// with another temperature is refused.
	m, err := bench.ReadManifest(out)
	if err != nil || m == nil || len(m.Servers) != 1 || m.Servers[0].Version == "" || len(m.Servers[0].Models[srv.Model]) < 12 || m.Command != "bench run" || len(m.Resumed) != 1 {
		t.Errorf("manifest %+v (%v)", m, err)
	}
	_, stderr, code = benchCLI(t, "", append([]string{"bench", "run", "--models", srv.Model, "--formats", "hermes,xml", "--out", out, "--resume", "--temperature", "0.7"}, common...)...)
	if code != 1 || !strings.Contains(stderr, "sampling.temperature: 0 → 0.7") {
		t.Errorf("resume with another temperature: exit %d\n%s", code, stderr)
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
	if r.code != 130 || !strings.Contains(r.stderr, "interrupted; ") {
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

// TestBenchResumeRefusesOtherFlags: a run writes its manifest even when
// its server is down, and a --resume with another format list, sampling
// temperature and token limit is refused, naming each differing key,
// with the results left as they were.
func TestBenchResumeRefusesOtherFlags(t *testing.T) {
	dead := deadHost(t)
	out := filepath.Join(t.TempDir(), "run")
	common := []string{"bench", "run", "--models", "m", "--endpoint", dead, "--template", "chatml", "--out", out}
	_, stderr, code := benchCLI(t, "", append(common, "--formats", "hermes", "--temperature", "1", "--max-tokens", "48")...)
	if code != 1 || !strings.Contains(stderr, "nothing measured") {
		t.Fatalf("first run: exit %d\n%s", code, stderr)
	}
	m, err := bench.ReadManifest(out)
	if err != nil || m == nil || m.Sampling == nil || m.Sampling.MaxTokens != 48 || m.Sampling.Temperature != 1 ||
		m.Flags["max-tokens"] != "48" || m.Servers[0].Error == "" || m.Templates[""].Family != "chatml" || m.Suite.SHA256 == "" {
		t.Fatalf("manifest %+v, %v", m, err)
	}
	before, _ := os.ReadFile(filepath.Join(out, bench.ResultsFile))
	_, stderr, code = benchCLI(t, "", append(common, "--resume", "--formats", "hermes,xml", "--temperature", "0.2", "--max-tokens", "20")...)
	want := "was made with another configuration (formats: hermes → hermes,xml; sampling.max_tokens: 48 → 20; sampling.temperature: 1 → 0.2)"
	if code != 1 || !strings.Contains(stderr, want) || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
		t.Errorf("resume with other flags: exit %d\n%s", code, stderr)
	}
	if after, _ := os.ReadFile(filepath.Join(out, bench.ResultsFile)); !bytes.Equal(before, after) {
		t.Error("the refused resume changed the results")
	}
	// The old name of native still works, and says its new name.
	_, stderr, _ = benchCLI(t, "", "bench", "run", "--models", "m", "--endpoint", dead, "--template", "chatml", "--formats", "auto",
		"--out", filepath.Join(t.TempDir(), "auto"))
	if !strings.Contains(stderr, `--formats auto is now called "native"`) || !strings.Contains(stderr, "nothing measured") {
		t.Errorf("--formats auto:\n%s", stderr)
	}
}

// TestCompareFromMissListsModels: compare --from DIR --model X, where DIR
// has no results for X, names the models it has.
func TestCompareFromMissListsModels(t *testing.T) {
	dir := t.TempDir()
	if _, errOut, code := benchCLI(t, "", "bench", "corpus", "--in", shippedCorpus, "--out", dir); code != 0 {
		t.Fatalf("bench corpus: exit %d: %s", code, errOut)
	}
	_, errOut, code := benchCLI(t, "", "compare", "--model", "nosuch", "--from", dir)
	want := "toolharness: compare: " + dir + ` has no results for model "nosuch"; it has Qwen/Qwen2.5-Coder-14B-Instruct, `
	if code != 1 || !strings.HasPrefix(errOut, want) || !strings.Contains(errOut, ", qwen3:4b, ") || strings.Count(errOut, "\n") != 1 {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
}

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolharness/toolharness/bench"
	"github.com/toolharness/toolharness/internal/ollamatest"
)

// smallSuite writes a two-case suite for the CLI's live bench tests:
// one call, one restraint case.
func smallSuite(t *testing.T, dir string) string {
	t.Helper()
	p := filepath.Join(dir, "suite.yaml")
	if err := os.WriteFile(p, []byte(`
name: cli-e2e
tools: [{name: get_weather, description: "Weather of a city.", input_schema: {type: object, properties: {city: {type: string}}, required: [city]}}]
cases:
  - {id: single, prompt: "Weather in Paris?", expect: {calls: [{name: get_weather, args: {city: Paris}}]}}
  - {id: restraint, prompt: "Hello!", expect: {no_call: true}}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// checkNoFakeMeasurement asserts what issue 13 asks of a run that hit a
// dead server: every case that failed is a verdict-error record with the
// error text, none is judged on an empty reply, and the summary measures
// exactly the cases that did not fail.
func checkNoFakeMeasurement(t *testing.T, dir string) (errs, measured int) {
	t.Helper()
	recs, err := bench.ReadResults(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if r.Error != "" {
			if r.Verdict != bench.VerdictError || r.Success {
				t.Errorf("error case %s judged %s (success %v): %s", r.ID, r.Verdict, r.Success, r.Error)
			}
			if r.Final {
				errs++
			}
			continue
		}
		if r.Raw == "" && r.GeneratedTokens == 0 && r.Verdict != bench.VerdictError {
			t.Errorf("case %s judged %s on a reply that never came", r.ID, r.Verdict)
		}
		if r.Final && r.Attempt == 0 {
			measured++
		}
	}
	data, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var s struct{ Groups []bench.Group }
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatal(err)
	}
	gotErrs, gotN := 0, 0
	for _, g := range s.Groups {
		gotErrs += g.Errors
		gotN += g.LenientFailure.N
	}
	if gotErrs != errs || gotN != measured {
		t.Errorf("summary: %d errors over %d measured first attempts, the records say %d and %d", gotErrs, gotN, errs, measured)
	}
	return errs, measured
}

// TestE2EBenchDeadServer runs bench run and compare against a port with
// no server, then against a real Ollama that is killed in the middle of
// the run: the failed cases are errors, no rate counts them, the exit
// status is non-zero, and the reason is one line.
func TestE2EBenchDeadServer(t *testing.T) {
	dir := t.TempDir()
	suite := smallSuite(t, dir)
	dead := deadHost(t)
	common := []string{"--suite", suite, "--template", "chatml", "--max-tokens", "24", "--max-retries", "1", "--seed", "3"}

	t.Run("dead port", func(t *testing.T) {
		for _, cmd := range [][]string{
			{"bench", "run", "--models", "m", "--formats", "hermes,xml"},
			{"compare", "--model", "m", "--formats", "hermes,xml"},
		} {
			out := filepath.Join(dir, cmd[0]+"-dead")
			args := append(append(append([]string{"--host", dead}, cmd...), "--out", out), common...)
			stdout, stderr, code := runCLI(t, "", args...)
			want := "cannot reach Ollama at " + dead + ": connection refused; nothing measured, 3 case(s) not run"
			if code != 1 || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, want) {
				t.Errorf("%v: exit %d, stderr %q, want one line with %q", cmd, code, stderr, want)
			}
			if regexp.MustCompile(`\d\.\d%`).MatchString(stdout) {
				t.Errorf("%v printed a rate:\n%s", cmd, stdout)
			}
			if errs, measured := checkNoFakeMeasurement(t, out); errs != 1 || measured != 0 {
				t.Errorf("%v: %d error cases, %d measured; want 1 and 0", cmd, errs, measured)
			}
		}
	})

	srv := ollamatest.Start(t, ollamatest.WithOwnProcess())
	t.Run("killed mid-run", func(t *testing.T) {
		for i, cmd := range [][]string{
			{"bench", "run", "--models", srv.Model, "--formats", "hermes,xml", "--repeats", "8"},
			{"compare", "--model", srv.Model, "--formats", "hermes,xml", "--repeats", "8"},
		} {
			if i > 0 {
				if err := srv.Restart(); err != nil {
					t.Fatal(err)
				}
			}
			out := filepath.Join(dir, cmd[0]+"-killed")
			args := append(append(append([]string{"--host", srv.URL}, cmd...), "--out", out), common...)
			type result struct {
				stdout, stderr string
				code           int
			}
			done := make(chan result, 1)
			go func() {
				stdout, stderr, code := runCLI(t, "", args...)
				done <- result{stdout, stderr, code}
			}()
			deadline := time.Now().Add(2 * time.Minute)
			for {
				if data, _ := os.ReadFile(filepath.Join(out, bench.ResultsFile)); bytes.Count(data, []byte("\n")) >= 2 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatal("no result written within 2 minutes")
				}
				time.Sleep(10 * time.Millisecond)
			}
			if err := srv.Kill(); err != nil {
				t.Fatal(err)
			}
			r := <-done
			if r.code != 1 || !strings.Contains(r.stderr, "cannot reach Ollama at "+srv.URL) || !strings.Contains(r.stderr, "not run") {
				t.Errorf("%v after the kill: exit %d\n%s", cmd, r.code, r.stderr)
			}
			errs, measured := checkNoFakeMeasurement(t, out)
			if errs == 0 || measured == 0 {
				t.Errorf("%v: %d error cases, %d measured; want some of each", cmd, errs, measured)
			}
			t.Logf("%v: %d cases measured before the kill, %d errors after; stderr:\n%s", cmd, measured, errs, r.stderr)
		}
	})
}

// lineWriter is a stdout that reports each complete line as it arrives.
type lineWriter struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	lines chan string
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	for {
		line, err := w.buf.ReadString('\n')
		if err != nil {
			w.buf.WriteString(line) // keep the partial line
			return len(p), nil
		}
		w.lines <- line
	}
}

// TestE2EChatServerKilled: the server dies between two messages of a
// scripted chat; the next message fails with one "cannot reach" line and
// the session ends there instead of failing every remaining line.
func TestE2EChatServerKilled(t *testing.T) {
	srv := ollamatest.Start(t, ollamatest.WithOwnProcess())
	stdinR, stdinW := io.Pipe()
	out := &lineWriter{lines: make(chan string, 16)}
	var errb bytes.Buffer
	done := make(chan int, 1)
	go func() {
		done <- run([]string{"toolharness", "chat", "--host", srv.URL, "--json", "--model", srv.Model, "--template", "chatml", "--max-tokens", "8"},
			stdinR, out, &errb)
	}()
	go fmt.Fprintln(stdinW, "one")
	select {
	case line := <-out.lines:
		// The random model's reply is cut at 8 tokens: a limit (stop
		// "length", whose error says so), not a server failure.
		if !strings.Contains(line, `"message":"one"`) || (strings.Contains(line, `"error"`) && !strings.Contains(line, `"stop":"length"`)) {
			t.Fatalf("first message: %s", line)
		}
	case <-time.After(2 * time.Minute):
		t.Fatal("no answer to the first message within 2 minutes")
	}
	if err := srv.Kill(); err != nil {
		t.Fatal(err)
	}
	// The writes block once chat stops reading: from a goroutine, ended by
	// closing the read side when chat has returned.
	go func() {
		fmt.Fprintln(stdinW, "two")
		fmt.Fprintln(stdinW, "three")
		stdinW.Close()
	}()
	code := <-done
	stdinR.Close()
	stderr := errb.String()
	want := "toolharness: chat: message 2: cannot reach Ollama at " + srv.URL + ": connection refused; the session ends\n"
	if code != exitHarnessError || !strings.HasSuffix(stderr, want) || strings.Contains(stderr, "message 3") {
		t.Errorf("exit %d, stderr:\n%s\nwant it to end with:\n%s", code, stderr, want)
	}
	close(out.lines)
	var rest []string
	for l := range out.lines {
		rest = append(rest, l)
	}
	if len(rest) != 1 || !strings.Contains(rest[0], `"message":"two"`) || !strings.Contains(rest[0], "cannot reach Ollama") {
		t.Errorf("after the kill, stdout has %q; want one error record for message two", rest)
	}
}

package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolharness/toolharness/internal/ollamatest"
)

// TestE2ERunConstrainedCut: a constrained call the token limit cuts is
// reported as cut, to the model and on the terminal, not only as
// "unexpected end of JSON input"; out of retries, run exits 2.
func TestE2ERunConstrainedCut(t *testing.T) {
	srv := ollamatest.Start(t)
	ws, _ := agentWorkspace(t)
	trace := filepath.Join(t.TempDir(), "run.jsonl")
	args := append([]string{"--host", srv.URL, "run", "--tools", "builtin:fs", "--workspace", ws, "--max-retries", "1"}, tinyFlags(srv, trace)...)
	// The last --max-tokens wins: too few tokens for any call object.
	code, _, stderr := runAgentCLI("", append(args, "--max-tokens", "4", "list the files")...)
	if code != exitLimit {
		t.Fatalf("exit %d, want %d; stderr:\n%s", code, exitLimit, stderr)
	}
	for _, want := range []string{"unexpected end of JSON input; the reply was cut off by the token limit (4 tokens)", "run: retries: "} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	var cut int
	for _, r := range traceRecords(t, trace) {
		if r["type"] == "step" && r["stop_reason"] == "length" {
			cut++
		}
	}
	if cut != 2 {
		t.Errorf("%d steps cut by the limit in the trace, want 2 (the first try and the retry)", cut)
	}
}

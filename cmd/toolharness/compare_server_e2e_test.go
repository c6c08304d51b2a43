package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolharness/toolharness/bench"
	"github.com/toolharness/toolharness/internal/llamacpptest"
)

// TestE2ECompareServerMode runs `compare --modes raw,server` against a
// real llama-server (Qwen2.5's template, a random model left alone, so
// neither mode makes the call): both modes run, every result says which
// mode made it, the table shows them side by side with a raw-versus-server
// verdict, and the manifest records the modes.
func TestE2ECompareServerMode(t *testing.T) {
	srv := llamacpptest.Start(t, llamacpptest.WithChatTemplate(qwenJinja(t)))
	dir := t.TempDir()
	suite := filepath.Join(dir, "suite.yaml")
	if err := os.WriteFile(suite, []byte(`name: one
tools:
  - {name: get_weather, description: "Weather of a city.", input_schema: {type: object, properties: {city: {type: string}}, required: [city]}}
cases:
  - {id: single, category: single, prompt: "Weather in Paris?", expect: {calls: [{name: get_weather, args: {city: Paris}}]}}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "run")
	stdout, stderr, code := runCLI(t, "", "compare", "--backend", "llamacpp", "--host", srv.URL, "--model", "tiny", "--template", "qwen2.5",
		"--formats", "hermes", "--modes", "raw,server", "--suite", suite, "--max-tokens", "16", "--max-retries", "0", "--seed", "3", "--out", out)
	if code != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	for _, want := range []string{"hermes (raw)", "server (server)", "raw vs server: hermes (raw)"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("the table lacks %q:\n%s", want, stdout)
		}
	}
	recs, err := bench.ReadResults(out)
	if err != nil {
		t.Fatal(err)
	}
	modes := map[string]string{}
	for _, r := range recs {
		modes[r.Mode] = r.Format
		if r.Verdict == bench.VerdictError {
			t.Errorf("%s mode: error %s", r.Mode, r.Error)
		}
	}
	if modes["raw"] != "hermes" || modes["server"] != bench.ServerFormat {
		t.Errorf("modes and formats of the results: %v", modes)
	}
	data, err := os.ReadFile(filepath.Join(out, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m struct{ Modes []string }
	if err := json.Unmarshal(data, &m); err != nil || strings.Join(m.Modes, ",") != "raw,server" {
		t.Errorf("manifest modes %v (%v)", m.Modes, err)
	}
	t.Logf("compare output:\n%s", stdout)

	// run --mode server on the same server: one step in server mode.
	trace := filepath.Join(dir, "run.jsonl")
	stdout, stderr, code = runCLI(t, "", "run", "--backend", "llamacpp", "--host", srv.URL, "--model", "tiny", "--mode", "server",
		"--tools", "builtin:fs", "--workspace", t.TempDir(), "--max-turns", "1", "--max-tokens", "4", "--trace", trace, "--json", "say hi")
	if code == exitHarnessError || strings.Contains(stdout, `"stop":"error"`) {
		t.Fatalf("run --mode server: exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	if data, err = os.ReadFile(trace); err != nil || !strings.Contains(string(data), `"mode":"server"`) {
		t.Errorf("the trace holds no server-mode step (%v):\n%s", err, data)
	}
}

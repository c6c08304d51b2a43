package bench

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func testManifest(temp float64, maxTokens int, formats ...string) *Manifest {
	retries := 3
	return &Manifest{
		Command: "bench run", Created: "2026-12-02T10:00:00Z", Toolharness: Build{Version: "0.1.0-dev", Revision: "abc"},
		Suite: &SuiteID{Name: "s", Cases: 3, SHA256: "f00"}, Models: []string{"m"}, Formats: formats, Modes: []string{"raw"},
		Repeats: 1, Sampling: &Sampling{Temperature: temp, MaxTokens: maxTokens}, MaxRetries: &retries, Backend: "ollama",
		Templates: map[string]TemplateID{"m": {Source: "server", Family: "qwen2.5", SHA256: "beef"}},
		Servers:   []ServerInfo{{URL: "http://a", Backend: "ollama", Version: "0.6.5", Models: map[string]string{"m": "sha256:1"}}},
	}
}

// TestResumeRefusesAnotherRun: a resume with other flags is refused,
// naming each differing key, and leaves the results as they were; the
// same flags resume, keeping the first run's creation time.
func TestResumeRefusesAnotherRun(t *testing.T) {
	dir := t.TempDir()
	cells, _ := ParseCells([]string{"m"}, []string{"hermes"}, []string{"raw"})
	cfg := RunConfig{Suite: testSuite(t), Cells: cells, Driver: &scriptDriver{}, Out: dir, Endpoints: []Endpoint{{URL: "http://a"}},
		Manifest: testManifest(1, 48, "hermes")}
	if _, err := Run(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	before, err := os.ReadFile(filepath.Join(dir, ResultsFile))
	if err != nil {
		t.Fatal(err)
	}
	other := cfg
	other.Resume = true
	other.Manifest = testManifest(0.2, 20, "hermes", "xml")
	other.Manifest.Servers[0].URL = "http://b" // another endpoint is no difference
	_, err = Run(context.Background(), other)
	var me *ManifestError
	if !errors.As(err, &me) || !errors.Is(err, ErrManifestDiffers) {
		t.Fatalf("resume with other flags: err = %v", err)
	}
	want := []string{"formats: hermes → hermes,xml", "sampling.max_tokens: 48 → 20", "sampling.temperature: 1 → 0.2"}
	if strings.Join(me.Keys, "; ") != strings.Join(want, "; ") {
		t.Errorf("differing keys %q, want %q", me.Keys, want)
	}
	if after, _ := os.ReadFile(filepath.Join(dir, ResultsFile)); string(after) != string(before) {
		t.Error("a refused resume changed the results")
	}

	same := cfg
	same.Resume = true
	same.Manifest = testManifest(1, 48, "hermes")
	same.Manifest.Created = "2026-12-02T11:00:00Z"
	res, err := Run(context.Background(), same)
	if err != nil || res.Skipped != 3 {
		t.Fatalf("resume with the same flags: skipped %d, err %v", res.Skipped, err)
	}
	m, err := ReadManifest(dir)
	if err != nil || m == nil || m.Created != "2026-12-02T10:00:00Z" || len(m.Resumed) != 1 || m.Resumed[0] != "2026-12-02T11:00:00Z" {
		t.Errorf("manifest after resume: %+v, %v", m, err)
	}
}

// TestManifestDifferences: a key only one side knows (a server down
// during one run) is no difference; a model digest that changed is.
func TestManifestDifferences(t *testing.T) {
	a, b := testManifest(0, 512, "native"), testManifest(0, 512, "native")
	b.Servers[0] = ServerInfo{URL: "http://a", Backend: "ollama", Error: "connection refused"}
	if d := Differences(a, b); len(d) != 0 {
		t.Errorf("unknown server facts differ: %q", d)
	}
	b = testManifest(0, 512, "native")
	b.Command, b.Flags = "compare", map[string]string{"model": "m"} // compare and bench run write the same results
	if d := Differences(a, b); len(d) != 0 {
		t.Errorf("another command differs: %q", d)
	}
	b.Servers[0].Models["m"] = "sha256:2"
	b.Toolharness.Modified = true
	want := "model[m]: sha256:1 → sha256:2; toolharness.revision: abc → abc (modified)"
	if d := strings.Join(Differences(a, b), "; "); d != want {
		t.Errorf("differences %q, want %q", d, want)
	}
}

// TestResumeWithoutManifest: results without a manifest cannot be
// resumed, since nothing says what made them.
func TestResumeWithoutManifest(t *testing.T) {
	dir := t.TempDir()
	cells, _ := ParseCells([]string{"m"}, []string{"hermes"}, []string{"raw"})
	cfg := RunConfig{Suite: testSuite(t), Cells: cells, Driver: &scriptDriver{}, Out: dir, Endpoints: []Endpoint{{URL: "http://a"}}}
	if _, err := Run(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	cfg.Resume, cfg.Manifest = true, testManifest(0, 512, "hermes")
	_, err := Run(context.Background(), cfg)
	var me *ManifestError
	if !errors.As(err, &me) || !me.Missing || !strings.Contains(err.Error(), "no manifest.json") {
		t.Errorf("err = %v", err)
	}
}

// TestManifestLinesSayWhole: a run with --whole says so beside its
// figures (its TTFT is the whole generation); a streamed run, the
// default, has no such line.
func TestManifestLinesSayWhole(t *testing.T) {
	m := testManifest(0, 64, "hermes")
	const line = "replies asked whole, not streamed (--whole): TTFT is the whole generation"
	if strings.Contains(strings.Join(m.Lines(), "\n"), line) {
		t.Errorf("a streamed run's lines say whole:\n%s", strings.Join(m.Lines(), "\n"))
	}
	m.Whole = true
	if !strings.Contains(strings.Join(m.Lines(), "\n"), line) {
		t.Errorf("a --whole run's lines do not say so:\n%s", strings.Join(m.Lines(), "\n"))
	}
}

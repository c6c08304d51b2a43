package derive

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/toolharness/toolharness/chat"
	"github.com/toolharness/toolharness/internal/golden"
)

// unseenDir holds the project's own reconstructions of current templates
// that the shared set lacks (see its README): our text in the shape of
// each model's template, not official copies. Derivation was developed
// and tuned on them (DeepSeek V3.2's DSML, Apertus' name-keyed calls,
// Llama 4's pythonic list were added for them), so they show that it
// reads these shapes, not how it does on templates never seen.
const unseenDir = "../templates/testdata/unseen"

// unseenMustNotWriteCalls render no assistant tool calls; every other
// reconstruction must round-trip one call and, where it renders them,
// two, with NewParser's parser and with the derived syntax alone.
var (
	unseenMustNotWriteCalls = []string{"smollm3-3b-hf", "smollm3-3b-hf__enable_thinking_false", "gemma-3n-e4b-it",
		"phi-4-mini-flash-reasoning", "lfm2-1.2b"}
	// unseenThinkOpen end the generation prompt with the reasoning opener
	// (the model's output starts inside reasoning).
	unseenThinkOpen = []string{"minimax-m2", "deepseek-v3.2__thinking_true", "glm-4.7", "qwen3-2507-thinking"}
)

func loadUnseen(t testing.TB) []suiteEntry {
	t.Helper()
	// compileSuite reads files relative to the conformance directory.
	return loadManifest(t, unseenDir, filepath.Join("..", "unseen"))
}

// loadManifest reads the manifest of dir; rel is dir relative to the
// conformance directory.
func loadManifest(t testing.TB, dir, rel string) []suiteEntry {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m struct{ Templates []suiteEntry }
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	for i := range m.Templates {
		m.Templates[i].File = filepath.Join(rel, m.Templates[i].File)
	}
	return m.Templates
}

// TestUnseenSuite derives every reconstruction through the Go engine and
// round-trips one call and two, checks that the reference Jinja2 renders
// (testdata/renders-unseen) lead to the same, and golden-checks what was
// derived and the outcomes (testdata/unseen.txt).
func TestUnseenSuite(t *testing.T) {
	checkReconstructions(t, loadUnseen(t), "renders-unseen", "unseen.txt")
}

// checkReconstructions is TestUnseenSuite for a set of templates, their
// Jinja2 renders in testdata/rendersDir and the golden report.
func checkReconstructions(t *testing.T, entries []suiteEntry, rendersDir, goldenFile string) {
	tools, err := chat.ParseTools([]byte(roundTripTools))
	if err != nil {
		t.Fatal(err)
	}
	var report strings.Builder
	var goTally, refTally tally
	for _, e := range entries {
		r := compileSuite(t, e)
		ref := newRecordedRenderer(loadRecordingIn(t, rendersDir, e.ID))
		tok := Tokens{BOS: e.token("bos_token"), EOS: e.token("eos_token")}
		line := goTally.roundTripTemplate(r, tok, tools)
		if refLine := refTally.roundTripTemplate(ref, tok, tools); refLine != line {
			line += " [from Jinja2 renders: " + refLine + "]"
		}
		checkUnseenOutcome(t, e.ID, line)
		fmt.Fprintf(&report, "## %s\nround trip: %s\n", e.ID, line)
		got, err := Derive(r, tok)
		want, wantErr := Derive(ref, tok)
		switch {
		case err != nil || wantErr != nil:
			report.WriteString("error: " + firstErr(err, wantErr) + "\n")
		default:
			if got.ThinkOpen != slices.Contains(unseenThinkOpen, e.ID) {
				t.Errorf("%s: generation prompt opens reasoning: %v", e.ID, got.ThinkOpen)
			}
			if d := derivationDiff(want, got); d != "" {
				t.Errorf("%s: derivation from Go-engine renders differs from Jinja2 renders (-jinja2 +go):\n%s", e.ID, d)
			}
			if got.WritesCalls {
				// The model's reply alone, through the output parser.
				out := outputOutcome(r, got, tools)
				if out != "ok" {
					t.Errorf("%s: reply after the generation prompt: %s", e.ID, out)
				}
				report.WriteString("reply alone: " + out + "\n")
			}
			report.WriteString(String(got.Describe()))
		}
		report.WriteString("\n")
	}
	fmt.Fprintf(&report, "Go engine renders: %s\nJinja2 renders: %s\n", goTally, refTally)
	t.Log(report.String())
	golden.Check(t, *update, filepath.Join("testdata", goldenFile), report.String())
}

func checkUnseenOutcome(t *testing.T, id, line string) {
	t.Helper()
	switch {
	case slices.Contains(unseenMustNotWriteCalls, id):
		if line != "writes no tool calls" {
			t.Errorf("%s: %q, want a template that writes no tool calls", id, line)
		}
	case !strings.Contains(line, "one call ok;") || strings.Contains(line, "failed") || strings.Contains(line, "["):
		t.Errorf("%s: %s", id, line)
	}
}

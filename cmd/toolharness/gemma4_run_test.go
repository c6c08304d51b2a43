package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestRunChatTemplateGemma4: `run --chat-template` on Gemma 4's template
// (testdata/reconstructed in package derive) against a scripted server:
// the model's two calls in Gemma 4's syntax (<|"|> quote tokens, bare
// keys) run, their results go back in the template's own tool-response
// turn, and the answer after them is the reply; the server is asked to
// stop at the template's derived role marker.
func TestRunChatTemplateGemma4(t *testing.T) {
	tmpl := filepath.Join("..", "..", "derive", "testdata", "reconstructed", "gemma-4-it.jinja")
	first := `<|tool_call>call:read_file{path:<|"|>notes.txt<|"|>}<tool_call|>` +
		`<|tool_call>call:read_file{path:<|"|>todo, "now".txt<|"|>}<tool_call|>`
	srv := newScriptedOllama(t, first, "Both read.")
	ws := t.TempDir()
	for name, text := range map[string]string{"notes.txt": "NOTES-TEXT\n", `todo, "now".txt`: "TODO-TEXT\n"} {
		if err := os.WriteFile(filepath.Join(ws, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	stdout, stderr, code := runCLI(t, "", "run", "--host", srv.URL, "--model", "m", "--chat-template", tmpl,
		"--tools", "builtin:fs", "--workspace", ws, "read both files")
	if code != 0 || strings.TrimSpace(stdout) != "Both read." {
		t.Fatalf("exit %d, stdout %q, stderr:\n%s", code, stdout, stderr)
	}
	reqs := srv.requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	var second struct {
		Prompt  string `json:"prompt"`
		Options struct {
			Stop []string `json:"stop"`
		} `json:"options"`
	}
	if err := json.Unmarshal(reqs[1], &second); err != nil {
		t.Fatal(err)
	}
	// The template's own role marker, derived, and the plain-text ones
	// stop a model that would write the next turn itself.
	for _, want := range []string{"<|turn>user", "\nUser:", "\n### Instruction"} {
		if !slices.Contains(second.Options.Stop, want) {
			t.Errorf("stop strings %q lack %q", second.Options.Stop, want)
		}
	}
	for _, want := range []string{first, "NOTES-TEXT", "TODO-TEXT", "<|tool_response>"} {
		if !strings.Contains(second.Prompt, want) {
			t.Errorf("the second prompt lacks %q:\n%s", want, second.Prompt)
		}
	}
}

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLoadedTemplateSaysWhatRenders checks the line a loaded template
// prints: a recognised family also says what renders its prompts, so a
// user can tell the loaded template from a transliteration.
func TestLoadedTemplateSaysWhatRenders(t *testing.T) {
	dir := t.TempDir()
	conv := filepath.Join(dir, "conv.json")
	if err := os.WriteFile(conv, []byte(`[{"role": "user", "content": "hi"}]`), 0o644); err != nil {
		t.Fatal(err)
	}
	tmpl := filepath.Join("..", "..", "templates", "testdata", "conformance", "templates", "Qwen3-Coder-30B-A3B-Instruct.gguf.jinja")
	code, _, stderr := runAgentCLI("", "render", "--chat-template", tmpl, "--messages", conv)
	const want = "recognised as the qwen3-coder family, rendered by the loaded template (Qwen3-Coder-30B-A3B-Instruct.gguf)"
	if code != 0 || !strings.Contains(stderr, want) {
		t.Errorf("exit %d, stderr %q, want it to say %q", code, stderr, want)
	}
}

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolharness/toolharness/internal/llamacpptest"
)

// TestE2ERunTemplateFromProps runs a task in raw mode with no --template
// against a real llama-server whose model carries the official Qwen2.5
// template: toolharness reads it from /props, recognises the qwen2.5
// family and completes the turn with it.
func TestE2ERunTemplateFromProps(t *testing.T) {
	srv := llamacpptest.Start(t, llamacpptest.WithChatTemplate(qwenJinja(t)))
	trace := filepath.Join(t.TempDir(), "run.jsonl")
	stdout, stderr, code := runCLI(t, "", "run", "--backend", "llamacpp", "--host", srv.URL, "--model", "m", "--mode", "raw",
		"--workspace", t.TempDir(), "--max-turns", "1", "--max-tokens", "4", "--seed", "5", "--trace", trace, "--json", "say hi")
	if code == exitHarnessError || strings.Contains(stdout, `"stop":"error"`) {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	if !strings.Contains(stderr, "from llama.cpp /props chat_template, recognised as the qwen2.5 family") {
		t.Errorf("stderr does not say the template came from /props as qwen2.5:\n%s", stderr)
	}
	data, err := os.ReadFile(trace)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), `"type":"step"`) {
		t.Errorf("the trace holds no step:\n%s", data)
	}
}

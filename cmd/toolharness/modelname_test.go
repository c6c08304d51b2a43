package main

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolharness/toolharness/internal/ollamatest"
)

// fakeModelsDir is an Ollama models folder holding one model, tiny,
// whose GGUF carries chatTemplate; OLLAMA_MODELS points at it.
func fakeModelsDir(t *testing.T, chatTemplate string) {
	t.Helper()
	dir := t.TempDir()
	gguf := ollamatest.TemplateModel(t, t.TempDir(), chatTemplate)
	data, err := os.ReadFile(gguf)
	if err != nil {
		t.Fatal(err)
	}
	blobs, manifest := filepath.Join(dir, "blobs"), filepath.Join(dir, "manifests", "registry.ollama.ai", "library", "tiny", "latest")
	for _, d := range []string{blobs, filepath.Dir(manifest)} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(blobs, "sha256-0123"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	m := `{"layers":[{"mediaType":"application/vnd.ollama.image.model","digest":"sha256:0123"}]}`
	if err := os.WriteFile(manifest, []byte(m), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("OLLAMA_MODELS", dir)
}

// TestTemplateModelName: render --chat-template and templates inspect
// take an Ollama model's name (with --host) as well as a file, and a name
// that is neither says so in one line.
func TestTemplateModelName(t *testing.T) {
	qwen := readTestFile(t, "../../templates/testdata/official/Qwen-Qwen3-0.6B.jinja")
	fakeModelsDir(t, qwen)
	srv := newScriptedOllama(t)
	conv := writeFile(t, "conv.json", `[{"role":"user","content":"hi"}]`)

	stdout, stderr, code := runCLI(t, "", "templates", "inspect", "--host", srv.URL, "tiny")
	if code != 0 || !strings.Contains(stdout, "family") || !strings.Contains(stdout, "qwen3") {
		t.Errorf("templates inspect tiny: exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	stdout, stderr, code = runCLI(t, "", "render", "--host", srv.URL, "--chat-template", "tiny", "--messages", conv)
	if code != 0 || !strings.Contains(stdout, "<|im_start|>user\nhi<|im_end|>") || !strings.Contains(stderr, "chat template of tiny") {
		t.Errorf("render --chat-template tiny: exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}

	missing := newFailingOllama(t, http.StatusNotFound, "model 'nosuch' not found")
	want := "toolharness: templates inspect: nosuch: no such file, and Ollama at " + missing.URL + " has no model of that name (ollama pull nosuch to fetch it)\n"
	if _, stderr, code := runCLI(t, "", "templates", "inspect", "--host", missing.URL, "nosuch"); code != 1 || stderr != want {
		t.Errorf("exit %d, stderr %q\nwant %q", code, stderr, want)
	}
	want = "toolharness: render: nosuch: no such file, and Ollama at " + missing.URL + " has no model of that name (ollama pull nosuch to fetch it)\n"
	if _, stderr, code := runCLI(t, "", "render", "--host", missing.URL, "--chat-template", "nosuch", "--messages", conv); code != 1 || stderr != want {
		t.Errorf("exit %d, stderr %q\nwant %q", code, stderr, want)
	}
}

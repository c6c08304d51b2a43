package main

import (
	"net/http"
	"strings"
	"testing"
)

// TestErrorLines: a failure the user can fix is one line, the command's
// name and then the cause in the user's terms and the fix, with none of
// the packages' prefixes ("agent: generation 1: backend: ollama: …") and
// no advice that does not apply.
func TestErrorLines(t *testing.T) {
	missing := newFailingOllama(t, http.StatusNotFound, "model 'nosuch' not found")
	plain := newScriptedOllama(t) // answers 404 on every /v1 path
	ws := t.TempDir()
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"model not found, template from the server",
			[]string{"run", "--host", missing.URL, "--model", "nosuch"},
			`run: model "nosuch" not found on ` + missing.URL + `: pull it first (ollama pull nosuch)`},
		{"model not found, template given",
			[]string{"run", "--host", missing.URL, "--model", "nosuch", "--template", "qwen2.5"},
			`run: model "nosuch" not found on ` + missing.URL + `: pull it first (ollama pull nosuch)`},
		{"openai host without /v1",
			[]string{"run", "--backend", "openai", "--host", plain.URL, "--model", "m", "--template", "qwen2.5"},
			"run: " + plain.URL + " has no OpenAI-compatible API at that path (HTTP 404: 404 page not found): the API is under /v1: pass --host " + plain.URL + "/v1"},
		{"raw mode on a chat-only endpoint",
			[]string{"run", "--backend", "openai", "--host", plain.URL + "/v1", "--model", "m", "--template", "qwen2.5"},
			"run: " + plain.URL + "/v1 has no text-completion endpoint for raw mode (HTTP 404: 404 page not found): it takes chat requests only: pass --mode chat"},
		{"raw mode with --quirks ollama",
			[]string{"run", "--backend", "openai", "--quirks", "ollama", "--host", plain.URL + "/v1", "--model", "m", "--template", "qwen2.5"},
			"run: --mode raw: with --quirks ollama the server takes chat requests only (Ollama's /v1/completions applies the model's template): pass --mode chat (see toolharness run --help)"},
		{"no template from an OpenAI-compatible server",
			[]string{"run", "--backend", "openai", "--host", plain.URL + "/v1", "--model", "m"},
			"run: the OpenAI-compatible server does not say which chat template m has, and toolharness renders the prompt and the tool catalog with it: pass --template FAMILY or --chat-template FILE (toolharness templates list names the families)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append(tc.args, "--workspace", ws, "hi")
			stdout, stderr, code := runCLI(t, "", args...)
			if code != 1 || stdout != "" {
				t.Errorf("exit %d, stdout %q", code, stdout)
			}
			if got := strings.TrimSuffix(strings.TrimPrefix(stderr, "toolharness: "), "\n"); got != tc.want {
				t.Errorf("stderr\n got %s\nwant %s", got, tc.want)
			}
		})
	}
}

// TestTemplateFileMissing: a --chat-template (or templates inspect) file
// that is not there is the flag, the file and the cause, on every command,
// without the loader's "source: stat …" chain.
func TestTemplateFileMissing(t *testing.T) {
	missing := t.TempDir() + "/no.jinja"
	conv := writeFile(t, "conv.json", `[{"role":"user","content":"hi"}]`)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "--chat-template", missing, "--model", "m", "--workspace", t.TempDir(), "hi"}, "run: --chat-template " + missing},
		{[]string{"render", "--chat-template", missing, "--messages", conv}, "render: --chat-template " + missing},
		{[]string{"parse", "--chat-template", missing}, "parse: --chat-template " + missing},
		{[]string{"templates", "show", "--chat-template", missing}, "templates show: --chat-template " + missing},
		{[]string{"templates", "inspect", missing}, "templates inspect: " + missing},
		{[]string{"bench", "run", "--models", "m", "--chat-template", missing, "--out", t.TempDir()}, "bench run: --chat-template " + missing},
	} {
		_, stderr, code := runCLI(t, "", tc.args...)
		if want := "toolharness: " + tc.want + ": no such file or directory\n"; code != 1 || stderr != want {
			t.Errorf("%v: exit %d, stderr\n got %q\nwant %q", tc.args, code, stderr, want)
		}
	}
}

package main

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestChatTemplateFlag renders with --chat-template from a file, an HF
// folder and stdin, and checks the flag errors.
func TestChatTemplateFlag(t *testing.T) {
	dir := t.TempDir()
	glm, err := os.ReadFile(filepath.Join("..", "..", "templates", "testdata", "conformance", "templates", "zai-org-GLM-4.5.jinja"))
	if err != nil {
		t.Fatal(err)
	}
	folder := filepath.Join(dir, "GLM-4.5")
	if err := os.MkdirAll(folder, 0o755); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		filepath.Join(folder, "tokenizer_config.json"): `{"eos_token": {"content": "<|endoftext|>"}}`,
		filepath.Join(folder, "chat_template.jinja"):   string(glm),
		filepath.Join(dir, "conv.json"):                `[{"role": "system", "content": "Be brief."}, {"role": "user", "content": "hi"}]`,
	}
	for p, body := range files {
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	conv := filepath.Join(dir, "conv.json")
	const want = "[gMASK]<sop><|system|>\nBe brief.<|user|>hi<|assistant|>" // what Jinja2 renders (render.py)
	for _, tt := range []struct {
		name, stdin string
		args        []string
	}{
		{"folder", "", []string{"render", "--chat-template", folder, "--messages", conv}},
		{"file", "", []string{"render", "--chat-template", filepath.Join(folder, "chat_template.jinja"), "--messages", conv}},
		{"stdin", string(glm), []string{"render", "--chat-template", "-", "--messages", conv}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runAgentCLI(tt.stdin, tt.args...)
			if code != 0 || stdout != want {
				t.Errorf("exit %d, stdout %q, want %q; stderr %s", code, stdout, want, stderr)
			}
			if !strings.Contains(stderr, "no built-in family matches") {
				t.Errorf("stderr does not say which template is used: %q", stderr)
			}
		})
	}
	for _, tt := range []struct {
		args    []string
		wantErr string
	}{
		{[]string{"render", "--template", "qwen2.5", "--chat-template", folder, "--messages", conv}, "exclude each other"},
		{[]string{"render", "--chat-template", filepath.Join(dir, "nope"), "--messages", conv}, "nope: no such file or directory"},
		{[]string{"run", "--model", "m", "--chat-template", "-", "hi"}, "cannot read the template from standard input"},
	} {
		code, _, stderr := runAgentCLI("", tt.args...)
		if code == 0 || !strings.Contains(stderr, tt.wantErr) || strings.Count(strings.TrimSpace(stderr), "\n") > 1 {
			t.Errorf("%v: exit %d, stderr %q, want a short error with %q", tt.args, code, stderr, tt.wantErr)
		}
	}
}

// TestLlamacppNoTemplate: a server whose /props reports no chat template
// is an error naming the flags, never a guess. The server is a stub: a
// current llama-server always reports a template (its ChatML default when
// the model has none; common_chat_templates_init), an older one may not.
// A real server's template: TestE2ELlamacppOwnTemplate.
func TestLlamacppNoTemplate(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/props" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"default_generation_settings":{"n_ctx":4096},"total_slots":1,"model_path":"old.gguf","chat_template":"","bos_token":"<s>","eos_token":"</s>"}`)
	}))
	t.Cleanup(srv.Close)
	_, err := modelFamily(context.Background(), serverRef{kind: "llamacpp", host: srv.URL}, "m", true, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "has no chat_template: pass --template FAMILY or --chat-template FILE") {
		t.Errorf("no template in /props: err %v", err)
	}
}

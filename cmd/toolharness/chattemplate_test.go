package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolharness/toolharness/backend/llamacpp/llamacpptest"
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

// TestLlamacppFamily reads a model's template from GET /props of the
// project's test llama-server (llamacpptest).
func TestLlamacppFamily(t *testing.T) {
	srv := llamacpptest.New()
	t.Cleanup(srv.Close)
	glm, err := os.ReadFile(filepath.Join("..", "..", "templates", "testdata", "conformance", "templates", "zai-org-GLM-4.5.jinja"))
	if err != nil {
		t.Fatal(err)
	}
	srv.ChatTemplate = string(glm)
	var notes strings.Builder
	f, err := modelFamily(context.Background(), serverRef{kind: "llamacpp", host: srv.URL}, "m", true, &notes)
	if err != nil {
		t.Fatal(err)
	}
	if f.NativeFormat != "" || f.EOS != llamacpptest.ImEnd || !strings.Contains(notes.String(), "from llama.cpp /props chat_template, no built-in family matches") {
		t.Errorf("family %s eos %q, notes %q", f.Name, f.EOS, notes.String())
	}
	srv.ChatTemplate = ""
	_, err = modelFamily(context.Background(), serverRef{kind: "llamacpp", host: srv.URL}, "m", true, &notes)
	if err == nil || !strings.Contains(err.Error(), "--template FAMILY or --chat-template FILE") {
		t.Errorf("no template in /props: err %v", err)
	}
}

// TestRunOwnTemplateChatMode runs a task with tools in chat mode with a
// model's own template outside the built-in families (GLM-4.5's, whose
// calls are glm45): the template's own tool section goes to the server as
// the first system message (agent.PlanChatCatalog). The fake llama-server
// renders the messages (/apply-template) and answers.
func TestRunOwnTemplateChatMode(t *testing.T) {
	srv := llamacpptest.New()
	t.Cleanup(srv.Close)
	srv.Script(srv.Tok.Tokenize("fine", true))
	var system string
	srv.ApplyTemplate = func(msgs []llamacpptest.Message) string {
		if len(msgs) > 0 && msgs[0].Role == "system" {
			system = msgs[0].Content
		}
		return "<|user|>hi<|assistant|>"
	}
	glm := filepath.Join("..", "..", "templates", "testdata", "conformance", "templates", "zai-org-GLM-4.5.jinja")
	stdout, stderr, code := runCLI(t, "", "run", "--backend", "llamacpp", "--host", srv.URL, "--model", "m", "--mode", "chat",
		"--chat-template", glm, "--tools", "builtin:fs", "--workspace", t.TempDir(), "--max-turns", "1", "--max-tokens", "4", "--json", "hi")
	if code == exitHarnessError || strings.Contains(stdout, `"stop":"error"`) {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	if !strings.Contains(system, "<arg_key>{arg-key-1}</arg_key>") || !strings.Contains(system, "read_file") {
		t.Errorf("the first system message is not GLM-4.5's own tool section:\n%s", system)
	}
}

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// templates verify against a server: TestE2ETemplatesVerifyLlamaServer
// (every family and conformance template on a real llama-server, its
// identical and differing renderings, in --json and as text).

// qwenJinja is the official Qwen2.5 template, as a server would report it.
func qwenJinja(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "templates", "testdata", "official", "Qwen-Qwen2.5-7B-Instruct.jinja"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestTemplatesVerifyErrors(t *testing.T) {
	conv := writeConversation(t, "c_call_result")
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--messages", conv}, "--host is required"},
		{[]string{"--host", "http://127.0.0.1:1", "--backend", "ollama", "--messages", conv}, "only llamacpp"},
		{[]string{"--host", "http://127.0.0.1:1", "--template", "qwen2.5", "--messages", conv, "--timeout", "2s"}, "templates verify: cannot reach llama.cpp at http://127.0.0.1:1: connection refused\n"},
	} {
		var out, errOut bytes.Buffer
		code := run(append([]string{"toolharness", "templates", "verify"}, tt.args...), nil, &out, &errOut)
		if code == 0 || !strings.Contains(errOut.String(), tt.want) {
			t.Errorf("%v: exit %d, stderr %q; want an error with %q", tt.args, code, errOut.String(), tt.want)
		}
	}
}

package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/toolharness/toolharness/backend/llamacpp/llamacpptest"
)

// officialRendering is the official Jinja template's rendering of a
// reference conversation (templates/testdata/golden, made by render.py,
// the reference renderer configured as transformers does).
func officialRendering(t *testing.T, family, id string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "templates", "testdata", "golden", family, id+".txt"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestTemplatesVerify runs templates verify against the fake llama-server,
// which renders /apply-template as the official template does (the
// reference golden), once faithfully and once with one byte changed.
func TestTemplatesVerify(t *testing.T) {
	conv := writeConversation(t, "c_call_result")
	official := officialRendering(t, "qwen2.5", "c_call_result")
	plantAt := strings.Index(official, "<tool_response>") + 3
	planted := official[:plantAt] + "X" + official[plantAt+1:]
	tests := []struct {
		name     string
		server   string
		args     []string
		code     int
		want     []string
		wantJSON map[string]any
		// props is the chat template the server reports in /props; ""
		// = none, and the test passes --template qwen2.5.
		props string
	}{
		{name: "identical", server: official, code: 0,
			want: []string{"identical: qwen2.5 renders the same", "bytes as the server"}},
		{name: "planted difference", server: planted, code: 1,
			want: []string{"differ at byte " + strconv.Itoa(plantAt), `toolharness: "`, `server:      "`, "<toXl_response>", "<tool_response>"}},
		{name: "planted difference, json", server: planted, args: []string{"--json"}, code: 1,
			wantJSON: map[string]any{"template": "qwen2.5", "equal": false, "offset": float64(plantAt)}},
		{name: "detected from /props", server: official, args: []string{"--json"}, code: 0, props: qwenJinja(t),
			wantJSON: map[string]any{"template": "qwen2.5", "equal": true}},
		// A template outside the built-in families, from /props: its own
		// rendering of the call, as Jinja2 renders it, not the prompted
		// default format's.
		{name: "own template from /props", server: conformanceRendering(t, "zai-org-GLM-4.5", "c_call_result.vllm"), args: []string{"--json"}, code: 0,
			props: glmTemplate(t), wantJSON: map[string]any{"template": "llama.cpp model", "equal": true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llamacpptest.New()
			t.Cleanup(srv.Close)
			var seen []llamacpptest.Message
			srv.ApplyTemplate = func(msgs []llamacpptest.Message) string {
				seen = msgs
				return tt.server
			}
			args := []string{"toolharness", "templates", "verify", "--host", srv.URL, "--messages", conv, "--now", "2025-03-14T09:26:53Z", "--verbatim"}
			if tt.props != "" {
				srv.ChatTemplate = tt.props
			} else {
				args = append(args, "--template", "qwen2.5")
			}
			args = append(args, tt.args...)
			var out, errOut bytes.Buffer
			code := run(args, nil, &out, &errOut)
			if code != tt.code {
				t.Fatalf("exit %d, want %d; stdout %q stderr %q", code, tt.code, out.String(), errOut.String())
			}
			if len(seen) == 0 || seen[0].Role != "system" {
				t.Errorf("the server got messages %+v; want the conversation", seen)
			}
			for _, w := range tt.want {
				if !strings.Contains(out.String(), w) {
					t.Errorf("output lacks %q:\n%s", w, out.String())
				}
			}
			if tt.wantJSON != nil {
				var got map[string]any
				if err := json.Unmarshal(out.Bytes(), &got); err != nil {
					t.Fatalf("--json output %q: %v", out.String(), err)
				}
				for k, v := range tt.wantJSON {
					if got[k] != v {
						t.Errorf("%s = %v, want %v (in %s)", k, got[k], v, out.String())
					}
				}
			}
		})
	}
}

// conformanceRendering is Jinja2's rendering of a conformance conversation
// by one of the suite's templates (templates/testdata/conformance/golden).
func conformanceRendering(t *testing.T, template, id string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "templates", "testdata", "conformance", "golden", template+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var golden map[string]struct {
		Text string `json:"text"`
	}
	if err := json.Unmarshal(b, &golden); err != nil {
		t.Fatal(err)
	}
	if golden[id].Text == "" {
		t.Fatalf("no golden %s for %s", id, template)
	}
	return golden[id].Text
}

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

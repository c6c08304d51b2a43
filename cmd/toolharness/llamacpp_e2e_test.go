package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
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

// TestE2ELlamacppOwnTemplate runs against one real llama-server whose
// model carries GLM-4.5's template, outside the built-in families.
func TestE2ELlamacppOwnTemplate(t *testing.T) {
	srv := llamacpptest.Start(t, llamacpptest.WithChatTemplate(glmTemplate(t)))
	t.Run("family from props", func(t *testing.T) { testLlamacppFamily(t, srv) })
	t.Run("chat mode", func(t *testing.T) { testRunOwnTemplateChatMode(t, srv) })
}

// testLlamacppFamily reads the model's template from GET /props: no
// built-in family, no native call format, the EOS the server reports.
func testLlamacppFamily(t *testing.T, srv *llamacpptest.Server) {
	resp, err := http.Get(srv.URL + "/props")
	if err != nil {
		t.Fatal(err)
	}
	var props struct {
		EOS string `json:"eos_token"`
	}
	err = json.NewDecoder(resp.Body).Decode(&props)
	resp.Body.Close()
	if err != nil || props.EOS == "" {
		t.Fatalf("/props: eos_token %q, %v", props.EOS, err)
	}
	var notes strings.Builder
	f, err := modelFamily(context.Background(), serverRef{kind: "llamacpp", host: srv.URL}, "m", true, &notes)
	if err != nil {
		t.Fatal(err)
	}
	if f.NativeFormat != "" || f.EOS != props.EOS || !strings.Contains(notes.String(), "from llama.cpp /props chat_template, no built-in family matches") {
		t.Errorf("family %s eos %q (server's %q), notes %q", f.Name, f.EOS, props.EOS, notes.String())
	}
}

// testRunOwnTemplateChatMode runs a task with tools in chat mode with the
// model's own template (GLM-4.5's, whose calls are glm45): the template's
// own tool section goes to the server as the first system message
// (agent.PlanChatCatalog). A proxy in front of the server keeps what
// /apply-template was sent.
func testRunOwnTemplateChatMode(t *testing.T, srv *llamacpptest.Server) {
	target, err := url.Parse(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var system string
	applied := 0
	rp := httputil.NewSingleHostReverseProxy(target)
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/apply-template" {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			var in struct {
				Messages []struct{ Role, Content string } `json:"messages"`
			}
			if json.Unmarshal(body, &in) == nil && len(in.Messages) > 0 && in.Messages[0].Role == "system" {
				mu.Lock()
				system, applied = in.Messages[0].Content, applied+1
				mu.Unlock()
			}
		}
		rp.ServeHTTP(w, r)
	}))
	defer proxy.Close()
	glm := filepath.Join("..", "..", "templates", "testdata", "conformance", "templates", "zai-org-GLM-4.5.jinja")
	stdout, stderr, code := runCLI(t, "", "run", "--backend", "llamacpp", "--host", proxy.URL, "--model", "m", "--mode", "chat",
		"--chat-template", glm, "--tools", "builtin:fs", "--workspace", t.TempDir(), "--max-turns", "1", "--max-tokens", "4", "--json", "hi")
	if code == exitHarnessError || strings.Contains(stdout, `"stop":"error"`) {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	mu.Lock()
	defer mu.Unlock()
	if applied == 0 || !strings.Contains(system, "<arg_key>{arg-key-1}</arg_key>") || !strings.Contains(system, "read_file") {
		t.Errorf("%d /apply-template requests; the first system message is not GLM-4.5's own tool section:\n%s", applied, system)
	}
}

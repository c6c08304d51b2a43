package main

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the goldens under testdata/chatcatalog")

// TestRenderChatOwnCatalog pins, byte for byte, the chat-mode list render
// prints for models' own templates: GLM-4.5's and Qwen3's own tool
// sections (as a system message of its own, and after the system text)
// with the results as tool messages their templates render, and the added
// catalog, said on stderr, of Llama 3.1 and Mistral Small 3.2, whose
// templates render their tools outside the system message, with the
// results written in its format.
func TestRenderChatOwnCatalog(t *testing.T) {
	toolMessage := `{"role":"tool","content":"18 C, sunny","tool_call_id":"call_1","name":"get_weather"}`
	dir := filepath.Join("testdata", "chatcatalog")
	conformance := filepath.Join("..", "..", "templates", "testdata", "conformance", "templates")
	official := filepath.Join("..", "..", "templates", "testdata", "official")
	for _, c := range []struct{ name, file, must, result string }{
		{"glm-4.5", filepath.Join(conformance, "zai-org-GLM-4.5.jinja"), "<arg_key>{arg-key-1}</arg_key>", toolMessage},
		{"qwen3", filepath.Join(official, "Qwen-Qwen3-0.6B.jinja"), "You are brief.\\n\\n# Tools", toolMessage},
		{"llama3.1", filepath.Join(official, "meta-llama-Llama-3.1-8B-Instruct.jinja"), "renders its tools outside the system message",
			`{"role":"user","content":"<tool_result name=\"get_weather\" id=\"call_1\">\n18 C, sunny\n</tool_result>"}`},
		{"mistral-small-3.2", filepath.Join(conformance, "Mistral-Small-3.2-24B-Instruct-2506.jinja"), "renders its tools outside the system message",
			`{"role":"user","content":"[TOOL_RESULTS]{\"call_id\": \"call_1\", \"content\": \"18 C, sunny\"}[/TOOL_RESULTS]"}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			stdout, stderr, code := runCLI(t, "", "render", "--mode", "chat", "--chat-template", c.file,
				"--messages", filepath.Join(dir, "conv.json"), "--now", "2025-03-14")
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			got := "stderr:\n" + stderr + "stdout:\n" + stdout
			for _, must := range []string{c.must, c.result} {
				if !strings.Contains(got, must) {
					t.Errorf("the output lacks %q:\n%s", must, got)
				}
			}
			golden := filepath.Join(dir, c.name+".golden")
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if got != string(want) {
				t.Errorf("render --mode chat differs from %s (go test -run TestRenderChatOwnCatalog -update rewrites it):\n%s", golden, got)
			}
		})
	}
}

// TestRunChatOwnCatalog runs a task in chat mode with GLM-4.5's template:
// the server is sent GLM-4.5's own tool section as a system message of
// its own, before the harness's system text, and the model's call in
// GLM-4.5's syntax is read, run, and sent back as the model wrote it.
func TestRunChatOwnCatalog(t *testing.T) {
	glm := filepath.Join("..", "..", "templates", "testdata", "conformance", "templates", "zai-org-GLM-4.5.jinja")
	call := "<tool_call>list_dir\n<arg_key>path</arg_key>\n<arg_value>.</arg_value>\n</tool_call>"
	srv := newScriptedOllama(t, call, "Done.")
	stdout, stderr, code := runCLI(t, "", "run", "--host", srv.URL, "--model", "m", "--mode", "chat", "--chat-template", glm,
		"--tools", "builtin:fs", "--workspace", t.TempDir(), "list the files")
	if code != 0 || stdout != "Done.\n" || !strings.Contains(stderr, "● list_dir(") {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	if strings.Contains(stderr, "catalog is added") {
		t.Errorf("a note of an added catalog for a template whose own is sent:\n%s", stderr)
	}
	bodies := srv.requests()
	if len(bodies) != 2 {
		t.Fatalf("%d requests, want 2", len(bodies))
	}
	var req struct {
		Messages []struct {
			Role, Content string
			ToolName      string `json:"tool_name"`
		}
		Tools []any
	}
	if err := json.Unmarshal(bodies[1], &req); err != nil {
		t.Fatal(err)
	}
	m := req.Messages
	if len(m) < 5 || m[0].Role != "system" || m[1].Role != "system" || len(req.Tools) != 0 {
		t.Fatalf("messages %+v, tools %v: want two system messages and no tools field", m, req.Tools)
	}
	if !strings.HasPrefix(m[0].Content, "# Tools\n\nYou may call one or more functions") || !strings.Contains(m[0].Content, "<arg_key>{arg-key-1}</arg_key>") ||
		!strings.Contains(m[0].Content, `"name": "list_dir"`) || strings.Contains(m[0].Content, "<tool_response>") {
		t.Errorf("the first system message is not GLM-4.5's own tool section:\n%s", m[0].Content)
	}
	if m[3].Role != "assistant" || m[3].Content != call {
		t.Errorf("the call is not sent back as written: %+v", m[3])
	}
	// GLM-4.5's template renders a tool message as its <|observation|> turn.
	if m[4].Role != "tool" || m[4].ToolName != "list_dir" || strings.Contains(m[4].Content, "<tool_result") {
		t.Errorf("the result is not a tool message for the template to render: %+v", m[4])
	}
}

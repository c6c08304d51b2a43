package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/toolharness/toolharness/templates"
)

// writeConversation writes one reference conversation of
// templates/testdata as a --messages file.
func writeConversation(t *testing.T, id string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "templates", "testdata", "conversations.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Conversations []map[string]json.RawMessage `json:"conversations"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	for _, c := range doc.Conversations {
		if string(c["id"]) == `"`+id+`"` {
			out, _ := json.Marshal(map[string]json.RawMessage{"messages": c["messages"], "tools": c["tools"]})
			path := filepath.Join(t.TempDir(), id+".json")
			if err := os.WriteFile(path, out, 0o644); err != nil {
				t.Fatal(err)
			}
			return path
		}
	}
	t.Fatalf("no conversation %s", id)
	return ""
}

// TestRenderCommandMatchesOfficial: the render command prints exactly the
// official template's rendering, and nothing else.
func TestRenderCommandMatchesOfficial(t *testing.T) {
	fams, err := templates.Families()
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"b_tools", "c_call_result", "g_framing_result"} {
		conv := writeConversation(t, id)
		for _, f := range fams {
			want, err := os.ReadFile(filepath.Join("..", "..", "templates", "testdata", "golden", f.Name, id+".txt"))
			if err != nil || f.NativeFormat == "" {
				continue
			}
			t.Run(f.Name+"/"+id, func(t *testing.T) {
				var out, errOut bytes.Buffer
				code := run([]string{"toolharness", "render", "--template", f.Name, "--messages", conv, "--now", "2025-03-14T09:26:53Z", "--verbatim"}, nil, &out, &errOut)
				if code != 0 {
					t.Fatalf("exit %d: %s", code, errOut.String())
				}
				if diff := cmp.Diff(string(want), out.String()); diff != "" {
					t.Errorf("(-official +ours):\n%s", diff)
				}
			})
		}
	}
}

func TestRenderCommandModes(t *testing.T) {
	conv := writeConversation(t, "g_framing_result")
	var out, errOut bytes.Buffer
	if code := run([]string{"toolharness", "render", "--template", "qwen2.5", "--messages", conv}, nil, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	if strings.Count(out.String(), "</tool_response>") != 1 || !strings.Contains(out.String(), "<\u2060/tool_response>") {
		t.Errorf("framing safety not on by default:\n%s", out.String())
	}
	out.Reset()
	if code := run([]string{"toolharness", "render", "--template", "qwen2.5", "--format", "xml", "--mode", "chat", "--messages", conv}, nil, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	var msgs []map[string]any
	if err := json.Unmarshal(out.Bytes(), &msgs); err != nil || len(msgs) != 4 || msgs[3]["role"] != "user" {
		t.Errorf("chat mode: %v %s", err, out.String())
	}
	for _, args := range [][]string{
		{"--template", "nope", "--messages", conv},
		{"--template", "qwen2.5", "--messages", conv, "--format", "yaml"},
		{"--template", "qwen2.5", "--messages", conv, "--now", "tomorrow"},
		{"--template", "qwen2.5", "--messages", conv, "--mode", "xml"},
	} {
		out.Reset()
		errOut.Reset()
		if code := run(append([]string{"toolharness", "render"}, args...), nil, &out, &errOut); code == 0 || out.Len() != 0 {
			t.Errorf("%v: exit %d, stdout %q", args, code, out.String())
		}
	}
}

func TestTemplatesCommand(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run([]string{"toolharness", "templates", "list", "--json"}, nil, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	if n := strings.Count(out.String(), "\n"); n != len(templates.Names()) {
		t.Errorf("%d lines for %d families", n, len(templates.Names()))
	}
	out.Reset()
	file := filepath.Join("..", "..", "templates", "testdata", "official", "openai-gpt-oss-120b.jinja")
	if code := run([]string{"toolharness", "templates", "detect", "--file", file}, nil, &out, &errOut); code != 0 || !strings.Contains(out.String(), "family: gpt-oss\ntool format: harmony\n") {
		t.Errorf("detect: exit %d: %s", code, out.String())
	}
	out.Reset()
	unknown := filepath.Join(t.TempDir(), "t.jinja")
	os.WriteFile(unknown, []byte("{% for m in messages %}{{ m.content }}{% endfor %}"), 0o644)
	if code := run([]string{"toolharness", "templates", "detect", "--file", unknown}, nil, &out, &errOut); code != 1 || !strings.HasPrefix(out.String(), "unknown: ") {
		t.Errorf("unknown: exit %d: %q", code, out.String())
	}
	out.Reset()
	official, err := os.ReadFile(filepath.Join("..", "..", "templates", "testdata", "official", "Qwen-Qwen3-0.6B.jinja"))
	if err != nil {
		t.Fatal(err)
	}
	cfg, _ := json.Marshal(map[string]any{"bos_token": nil, "chat_template": string(official)})
	cfgFile := filepath.Join(t.TempDir(), "tokenizer_config.json")
	os.WriteFile(cfgFile, cfg, 0o644)
	if code := run([]string{"toolharness", "templates", "detect", "--json", "--file", cfgFile}, nil, &out, &errOut); code != 0 || !strings.Contains(out.String(), `"family":"qwen3"`) {
		t.Errorf("tokenizer_config.json: exit %d: %s", code, out.String())
	}
	out.Reset()
	if code := run([]string{"toolharness", "templates", "show", "llama3.2"}, nil, &out, &errOut); code != 0 || !strings.Contains(out.String(), "native_format: json") {
		t.Errorf("show: exit %d: %s", code, out.String())
	}
}

// TestRenderOwnTemplateWritesCalls renders, with --chat-template and no
// --format, conversations with tool calls through templates outside the
// built-in families: the template itself must write the catalog and the
// calls, byte for byte as Jinja2 does (the conformance goldens), not the
// prompted default format's text.
func TestRenderOwnTemplateWritesCalls(t *testing.T) {
	conformance := filepath.Join("..", "..", "templates", "testdata", "conformance")
	var suite struct {
		Conversations []struct {
			ID       string          `json:"id"`
			Messages json.RawMessage `json:"messages"`
			Tools    json.RawMessage `json:"tools"`
		} `json:"conversations"`
	}
	data, err := os.ReadFile(filepath.Join(conformance, "conversations.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &suite); err != nil {
		t.Fatal(err)
	}
	convs := map[string][]byte{}
	for _, c := range suite.Conversations {
		convs[c.ID], _ = json.Marshal(map[string]json.RawMessage{"messages": c.Messages, "tools": c.Tools})
	}
	for _, tt := range []struct{ template, conv string }{
		{"zai-org-GLM-4.5", "c_call_result"},
		{"zai-org-GLM-4.5", "d_parallel"},
		{"NVIDIA-Nemotron-Nano-v2", "c_call_result"},
		{"NVIDIA-Nemotron-Nano-v2", "d_parallel"},
	} {
		t.Run(tt.template+"/"+tt.conv, func(t *testing.T) {
			var golden map[string]struct {
				Text string `json:"text"`
			}
			data, err := os.ReadFile(filepath.Join(conformance, "golden", tt.template+".json"))
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(data, &golden); err != nil {
				t.Fatal(err)
			}
			// vllm style: arguments as objects, content "" (the shape of
			// the conversation file).
			want, ok := golden[tt.conv+".vllm"]
			if !ok {
				t.Fatalf("no golden %s.vllm", tt.conv)
			}
			conv := filepath.Join(t.TempDir(), "conv.json")
			if err := os.WriteFile(conv, convs[tt.conv], 0o644); err != nil {
				t.Fatal(err)
			}
			stdout, stderr, code := runCLI(t, "", "render", "--verbatim", "--now", "2026-01-01",
				"--chat-template", filepath.Join(conformance, "templates", tt.template+".jinja"), "--messages", conv)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			if diff := cmp.Diff(want.Text, stdout); diff != "" {
				t.Errorf("render differs from Jinja2 (-want +got):\n%s", diff)
			}
		})
	}
}

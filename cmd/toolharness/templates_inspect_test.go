package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/toolharness/toolharness/internal/ollamatest"
)

const conformanceTemplates = "../../templates/testdata/conformance/templates"

func TestTemplatesInspect(t *testing.T) {
	for _, tc := range []struct {
		file string
		want []string
	}{
		{"zai-org-GLM-4.5.jinja", []string{"family: (none of the built-in families)\n", "writes calls: yes\n", "parallel calls: yes\n",
			"format: glm45\n", `reasoning: "<think>" … "</think>"` + "\n"}},
		{"llama-cpp-lfm2.jinja", []string{"body: json-list\n", `call open: "<|tool_call_start|>"` + "\n",
			`call close: "<|tool_call_end|>"` + "\n", `name key: "name"` + "\n", `arguments key: "arguments"` + "\n"}},
		{"00-chatml.jinja", []string{"catalog: no\n", "writes calls: no\n", "note: the template does not render the tools it is given\n"}},
	} {
		out, stderr, code := runCLI(t, "", "templates", "inspect", filepath.Join(conformanceTemplates, tc.file))
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", tc.file, code, stderr)
		}
		for _, want := range tc.want {
			if !strings.Contains(out, want) {
				t.Errorf("%s: output lacks %q:\n%s", tc.file, want, out)
			}
		}
	}
}

func TestTemplatesInspectJSON(t *testing.T) {
	cfg := writeFile(t, "tokenizer_config.json", `{"bos_token": {"content": "<s>"}, "eos_token": "</s>", `+
		`"chat_template": [{"name": "default", "template": "x"}, {"name": "tool_use", "template": `+
		`"{% for m in messages %}{{ m.role }}: {{ m.content }}{% for c in m.tool_calls %}<<CALL>>{{ c.function.name }}|{{ c.function.arguments | tojson }}<<END>>{% endfor %}{{ eos_token }}\n{% endfor %}"}]}`)
	out, stderr, code := runCLI(t, "", "templates", "inspect", "--json", cfg)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var got struct {
		BOS, EOS string
		Derived  struct {
			WritesCalls bool              `json:"writes_calls"`
			Syntax      map[string]string `json:"syntax"`
			Stop        []string
		}
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	want := got
	want.BOS, want.EOS = "<s>", "</s>"
	want.Derived.WritesCalls, want.Derived.Stop = true, []string{"</s>"}
	want.Derived.Syntax = map[string]string{"label": "derived:" + filepath.Base(filepath.Dir(cfg)), "body": "name-then-json",
		"call_open": "<<CALL>>", "call_close": "<<END>>", "arguments_prefix": "|"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("(-want +got):\n%s\n%s", d, out)
	}
}

func TestTemplatesInspectUsage(t *testing.T) {
	_, stderr, code := runCLI(t, "", "templates", "inspect")
	if code == 0 || !strings.Contains(stderr, "give one template file") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
}

// TestParseChatTemplate parses GLM-4.5 output in the syntax derived from
// its own template, whole and in 3-byte chunks.
func TestParseChatTemplate(t *testing.T) {
	tools := writeFile(t, "tools.json", `[{"type":"function","function":{"name":"lookup","parameters":{"type":"object",`+
		`"properties":{"city":{"type":"string"},"days":{"type":"integer"}}}}}]`)
	in := "Let me check.\n<tool_call>lookup<arg_key>city</arg_key>\n<arg_value>Paris</arg_value>" +
		"<arg_key>days</arg_key>\n<arg_value>3</arg_value></tool_call>"
	tmpl := filepath.Join(conformanceTemplates, "zai-org-GLM-4.5.jinja")
	want := `{"type":"call","id":"call_0","name":"lookup","arguments":{"city":"Paris","days":3},"repairs":[],"offset":14}`
	for _, chunk := range []string{"0", "3"} {
		out, stderr, code := runCLI(t, in, "parse", "--chat-template", tmpl, "--tools", tools, "--chunk", chunk)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if lines[len(lines)-1] != want {
			t.Errorf("--chunk %s: last event %s, want %s", chunk, lines[len(lines)-1], want)
		}
	}
	if _, stderr, code := runCLI(t, in, "parse", "--chat-template", tmpl, "--format", "hermes"); code == 0 || !strings.Contains(stderr, "not both") {
		t.Errorf("--format with --chat-template: exit %d, %q", code, stderr)
	}
	noCalls := filepath.Join(conformanceTemplates, "00-chatml.jinja")
	if _, stderr, code := runCLI(t, in, "parse", "--chat-template", noCalls); code == 0 || !strings.Contains(stderr, "writes no tool calls") {
		t.Errorf("a template without calls: exit %d, %q", code, stderr)
	}
}

// TestTemplatesInspectGGUF reads the chat template out of a GGUF file (the
// test Ollama's tiny model carrying LFM2's template) and from stdin.
func TestTemplatesInspectGGUF(t *testing.T) {
	src, err := os.ReadFile(filepath.Join(conformanceTemplates, "llama-cpp-lfm2.jinja"))
	if err != nil {
		t.Fatal(err)
	}
	spec := ollamatest.DefaultSpec()
	spec.ChatTemplate = string(src)
	gguf := filepath.Join(t.TempDir(), "lfm2.gguf")
	if err := ollamatest.WriteModel(gguf, spec); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"templates", "inspect", gguf}, {"templates", "inspect", "-"}} {
		out, stderr, code := runCLI(t, string(src), args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, stderr)
		}
		if !strings.Contains(out, `call open: "<|tool_call_start|>"`) {
			t.Errorf("%v: derived syntax missing:\n%s", args, out)
		}
	}
}

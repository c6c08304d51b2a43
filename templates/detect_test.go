package templates

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestDetect(t *testing.T) {
	tests := []struct {
		file, family, syntax string
	}{
		{"official/Qwen-Qwen2.5-7B-Instruct.jinja", "qwen2.5", "jinja"},
		{"official/Qwen-Qwen3-0.6B.jinja", "qwen3", "jinja"},
		{"official/Qwen3-Coder.jinja", "qwen3-coder", "jinja"},
		{"official/NousResearch-Hermes-3-Llama-3.1-8B-tool_use.jinja", "hermes3", "jinja"},
		{"official/meta-llama-Llama-3.1-8B-Instruct.jinja", "llama3.1", "jinja"},
		{"official/meta-llama-Llama-3.2-3B-Instruct.jinja", "llama3.2", "jinja"},
		{"official/mistralai-Mistral-Nemo-Instruct-2407.jinja", "mistral-nemo", "jinja"},
		{"official/mistralai-Mistral-Small-3.1-24B-Instruct-2503.jinja", "mistral-small3", "jinja"},
		{"official/openai-gpt-oss-120b.jinja", "gpt-oss", "jinja"},
		{"official/microsoft-Phi-4-mini-instruct.gguf.jinja", "phi4-mini", "jinja"},
		{"official/ibm-granite-granite-3.3-2B-Instruct.jinja", "granite3", "jinja"},
		{"official/google-gemma-3-it.ollama-index.jinja", "gemma3", "jinja"},
		{"official/chatml.jinja", "chatml", "jinja"},
		{"ollama/chatml.gotmpl", "chatml", "go"},
		{"ollama/gemma3-instruct.gotmpl", "gemma3", "go"},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			d, err := Detect(string(data))
			if err != nil {
				t.Fatal(err)
			}
			if d.Family != tt.family || d.Syntax != tt.syntax {
				t.Errorf("got %s (%s), want %s (%s); matched %q", d.Family, d.Syntax, tt.family, tt.syntax, d.Matched)
			}
		})
	}
	// Ollama-style Go templates, abridged to the lines the fingerprints use.
	for text, want := range map[string]string{
		"{{- if .Tools }}<|start_header_id|>system<|end_header_id|>\nEnvironment: ipython\nCutting Knowledge Date: December 2023\n{{ range .Tools }}{{ . }}{{ end }}":                       "llama3.1",
		"{{- if .Tools }}<|start_header_id|>system<|end_header_id|>\nEnvironment: ipython\nCutting Knowledge Date: December 2023\nToday Date: {{ currentDate }}{{ range .Tools }}{{ end }}": "llama3.2",
		"{{- range .Messages }}{{ if .Tools }}[AVAILABLE_TOOLS] {{ $.Tools }}[/AVAILABLE_TOOLS]{{ end }}[INST] {{ .Content }}[/INST]{{ if .ToolCalls }}[TOOL_CALLS]{{ end }}":               "mistral-nemo",
		"[SYSTEM_PROMPT]{{ .System }}[/SYSTEM_PROMPT]{{ if .Tools }}[AVAILABLE_TOOLS]{{ end }}[INST]{{ .Content }}[/INST][TOOL_CALLS]":                                                      "mistral-small3",
		"{{- if .System }}<|im_start|>system\n{{ .System }}{{ else }}You are Qwen, created by Alibaba Cloud. You are a helpful assistant.{{ end }}<tool_call>":                              "qwen2.5",
		"<|im_start|>{{ .Role }}\n{{ if .Thinking }}<think>{{ .Thinking }}</think>{{ end }}<tool_call>{{ end }}":                                                                            "qwen3",
	} {
		d, err := Detect(text)
		if err != nil || d.Family != want || d.Syntax != "go" {
			t.Errorf("%q: got %+v, %v; want %s", text, d, err, want)
		}
	}
	for _, text := range []string{"", "{{ .Prompt }}", "[INST] {{ range .Messages }}{{ .Content }}{{ end }}"} {
		if d, err := Detect(text); !errors.Is(err, ErrUnknownTemplate) {
			t.Errorf("%q: got %+v, %v; want ErrUnknownTemplate", text, d, err)
		}
	}
}

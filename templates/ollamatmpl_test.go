package templates

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolharness/toolharness/chat"
)

func TestFamilyOfOllama(t *testing.T) {
	llama, err := os.ReadFile(filepath.Join("testdata", "ollama", "gemma3-instruct.gotmpl"))
	if err != nil {
		t.Fatal(err)
	}
	f, err := FamilyOfOllama("gemma3-model", string(llama), nil)
	if err != nil || f.UsesOllamaTemplate() || f.Name != "gemma3" {
		t.Errorf("a Go template of a built-in family: %s, Ollama template %v, err %v", f.Name, f.UsesOllamaTemplate(), err)
	}

	// A ChatML template with tools of its own is no generic ChatML: it is
	// rendered as Ollama would render it.
	const withTools = `{{- if .Tools }}<|im_start|>system
Tools: {{ range .Tools }}{{ .Function.Name }} {{ end }}<|im_end|>
{{ end }}{{- range .Messages }}<|im_start|>{{ .Role }}
{{ .Content }}{{ range .ToolCalls }}<call>{{ .Function.Name }} {{ .Function.Arguments }}</call>{{ end }}<|im_end|>
{{ end }}<|im_start|>assistant
`
	f, err = FamilyOfOllama("custom", withTools, []string{"<|im_end|>"})
	if err != nil || !f.UsesOllamaTemplate() {
		t.Fatalf("custom template: Ollama template %v, err %v", f.UsesOllamaTemplate(), err)
	}
	tools := []chat.Tool{{Name: "get_weather", Description: "d", Parameters: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}}}`)}}
	got, err := f.Render(Input{Messages: []chat.Message{
		{Role: chat.RoleUser, Content: "hi"},
		{Role: chat.RoleAssistant, ToolCalls: []chat.ToolCall{{Name: "get_weather", Arguments: json.RawMessage(`{"city":"Oslo"}`)}}},
	}, Tools: tools})
	if err != nil {
		t.Fatal(err)
	}
	want := "<|im_start|>system\nTools: get_weather <|im_end|>\n<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n<call>get_weather {\"city\":\"Oslo\"}</call><|im_end|>\n<|im_start|>assistant\n"
	if got != want {
		t.Errorf("got %q\nwant %q", got, want)
	}
	if f.Stop[0] != "<|im_end|>" || !contains(f.ControlTokens, "<|im_start|>") {
		t.Errorf("stop %q control %q", f.Stop, f.ControlTokens)
	}
	if _, err := CompileOllama("bad", "{{ .Messages"); err == nil || !strings.HasPrefix(err.Error(), "templates: bad: ") {
		t.Errorf("bad template: err %v", err)
	}
}

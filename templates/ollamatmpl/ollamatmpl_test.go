package ollamatmpl

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/toolharness/toolharness/chat"
	"github.com/toolharness/toolharness/templates"
)

func TestFamilyOfOllama(t *testing.T) {
	llama, err := os.ReadFile(filepath.Join("..", "testdata", "ollama", "gemma3-instruct.gotmpl"))
	if err != nil {
		t.Fatal(err)
	}
	f, own, err := FamilyOf("gemma3-model", string(llama), nil)
	if err != nil || own || f.Name != "gemma3" {
		t.Errorf("a Go template of a built-in family: %s, own %v, err %v", f.Name, own, err)
	}

	// A ChatML template with tools of its own is no generic ChatML: it is
	// rendered as Ollama would render it.
	const withTools = `{{- if .Tools }}<|im_start|>system
Tools: {{ range .Tools }}{{ .Function.Name }} {{ end }}<|im_end|>
{{ end }}{{- range .Messages }}<|im_start|>{{ .Role }}
{{ .Content }}{{ range .ToolCalls }}<call>{{ .Function.Name }} {{ .Function.Arguments }}</call>{{ end }}<|im_end|>
{{ end }}<|im_start|>assistant
`
	f, own, err = FamilyOf("custom", withTools, []string{"<|im_end|>"})
	if err != nil || !own {
		t.Fatalf("custom template: own %v, err %v", own, err)
	}
	tools := []chat.Tool{{Name: "get_weather", Description: "d", Parameters: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}}}`)}}
	got, err := f.Render(templates.Input{Messages: []chat.Message{
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
	if f.Stop[0] != "<|im_end|>" || !slices.Contains(f.ControlTokens, "<|im_start|>") {
		t.Errorf("stop %q control %q", f.Stop, f.ControlTokens)
	}
	if _, err := Compile("bad", "{{ .Messages"); err == nil || !strings.HasPrefix(err.Error(), "ollamatmpl: bad: ") {
		t.Errorf("bad template: err %v", err)
	}
}

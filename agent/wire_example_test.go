package agent

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/toolharness/toolharness/chat"
	"github.com/toolharness/toolharness/templates/source"
)

// TestFormatCallInTemplateSyntax: a session whose calls are in a syntax
// package render does not write (derived from a loaded template, or only
// parsed: GLM-4.5's glm45) writes the corrected example of a model-facing
// error as the template writes a call, and the session's own parser reads
// it back as the same call; never as plain JSON in another syntax.
func TestFormatCallInTemplateSyntax(t *testing.T) {
	for _, file := range []string{
		"zai-org-GLM-4.5.jinja",         // glm45: parsed, never written by render
		"llama-cpp-lfm2.jinja",          // a derived syntax
		"NVIDIA-Nemotron-Nano-v2.jinja", // a derived syntax
	} {
		t.Run(file, func(t *testing.T) {
			r := loadedRenderer(t, "../templates/testdata/conformance/templates/"+file)
			call := chat.ToolCall{ID: "call_0", Name: "get_weather", Arguments: json.RawMessage(`{"city":"Paris","days":2}`)}
			text, err := r.FormatCall(call)
			if err != nil {
				t.Fatalf("format %s: %v", r.Format(), err)
			}
			if strings.HasPrefix(text, `{"name"`) {
				t.Fatalf("plain JSON, not the template's syntax: %s", text)
			}
			tools := []chat.Tool{{Name: "get_weather", Parameters: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"},"days":{"type":"integer"}}}`)}}
			p, err := r.NewParser(tools)
			if err != nil {
				t.Fatal(err)
			}
			var calls []chat.ToolCall
			for _, ev := range append(p.Feed(text), p.Close()...) {
				if ev.Kind == EventCall && ev.Err == nil {
					calls = append(calls, *ev.Call)
				}
			}
			if len(calls) != 1 || calls[0].Name != "get_weather" || !sameJSON(t, calls[0].Arguments, call.Arguments) {
				t.Errorf("format %s wrote %q, read back as %+v", r.Format(), text, calls)
			}
		})
	}
}

func sameJSON(t *testing.T, a, b json.RawMessage) bool {
	t.Helper()
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return string(xa) == string(ya)
}

// loadedRenderer is the renderer of a session on the template file at path,
// loaded as --chat-template loads it.
func loadedRenderer(t *testing.T, path string) Renderer {
	t.Helper()
	tmpl, err := source.Load(path, source.Options{Tools: true})
	if err != nil {
		t.Fatal(err)
	}
	fam, err := tmpl.Family()
	if err != nil {
		t.Fatal(err)
	}
	r, err := NewRenderer(RendererOptions{Family: &fam})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

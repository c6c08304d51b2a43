package agent

import (
	"strings"
	"testing"
	"time"

	"github.com/toolharness/toolharness/chat"
	"github.com/toolharness/toolharness/templates"
)

// TestRendererPromptTail: where a loaded template's generation prompt ends
// inside the call syntax (functionary v3.2's ">>>", gpt-oss's
// "<|start|>assistant"), the session's parser reads the model's output
// after the prompt as if the prompt's tail preceded it: the call is found,
// at offset 0 with Raw the output's own bytes, and an answer stays
// content byte for byte, without the tail.
func TestRendererPromptTail(t *testing.T) {
	tools := []chat.Tool{{Name: "lookup", Description: "Look up.", Parameters: []byte(`{"type": "object", "properties": {"city": {"type": "string"}}}`)}}
	for _, tc := range []struct {
		file, tail, call, answer string
	}{
		{"templates/meetkai-functionary-medium-v3.2.jinja", ">>>", "lookup\n{\"city\": \"Paris\"}", "all\nIt is sunny."},
		// Detected as the built-in gpt-oss family: the tail comes from its renders.
		{"../official/openai-gpt-oss-120b.jinja", "<|start|>assistant",
			" to=functions.lookup<|channel|>commentary json<|message|>{\"city\": \"Paris\"}<|call|>",
			"<|channel|>final<|message|>It is sunny.<|return|>"},
	} {
		fam := loadedFamily(t, "../templates/testdata/conformance/"+tc.file, templates.SpecialTokens{EOS: "<|eot_id|>"})
		r, err := NewRenderer(RendererOptions{Family: &fam})
		if err != nil {
			t.Fatalf("%s: %v", tc.file, err)
		}
		prompt, err := r.Prompt(System{Tools: tools, Now: time.Date(2025, 3, 14, 9, 0, 0, 0, time.UTC)}, []Msg{{Message: chat.Message{Role: chat.RoleUser, Content: "hi"}}})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasSuffix(prompt, tc.tail) {
			t.Fatalf("%s: the session's prompt does not end with %q:\n%s", tc.file, tc.tail, prompt)
		}
		calls, text := feedAll(t, r, tools, tc.call)
		if len(calls) != 1 || calls[0].Name != "lookup" || string(calls[0].Arguments) != `{"city":"Paris"}` || text != "" {
			t.Errorf("%s: calls %+v, text %q from %q", tc.file, calls, text, tc.call)
		} else if c := calls[0]; c.Offset != 0 || !strings.HasPrefix(tc.call, c.Raw) {
			t.Errorf("%s: call at %d with Raw %q, want the output's own bytes at 0", tc.file, c.Offset, c.Raw)
		}
		if calls, text := feedAll(t, r, tools, tc.answer); len(calls) != 0 || text != tc.answer {
			t.Errorf("%s: answer %q gave calls %+v and content %q", tc.file, tc.answer, calls, text)
		}
	}
}

// feedAll parses output with a fresh session parser, byte by byte.
func feedAll(t *testing.T, r Renderer, tools []chat.Tool, output string) ([]chat.ToolCall, string) {
	t.Helper()
	p, err := r.NewParser(tools)
	if err != nil {
		t.Fatal(err)
	}
	var evs []Event
	for i := range len(output) {
		evs = append(evs, p.Feed(output[i:i+1])...)
	}
	evs = append(evs, p.Close()...)
	var calls []chat.ToolCall
	var text strings.Builder
	for _, e := range evs {
		switch {
		case e.Err != nil:
			t.Errorf("parse error %+v in %q", *e.Err, output)
		case e.Kind == EventCall:
			calls = append(calls, *e.Call)
		case e.Kind == EventText:
			text.WriteString(e.Text)
		}
	}
	return calls, text.String()
}

// TestRendererBuiltinPromptTail: the same for a built-in family whose
// generation prompt ends inside its native call syntax (gpt-oss: the
// header "<|start|>assistant" a call's " to=functions.NAME" extends),
// learned from the family's own renders; other families keep a tail-free
// parser.
func TestRendererBuiltinPromptTail(t *testing.T) {
	tools := []chat.Tool{{Name: "lookup", Description: "Look up.", Parameters: []byte(`{"type": "object", "properties": {"city": {"type": "string"}}}`)}}
	r, err := NewRenderer(RendererOptions{Template: "gpt-oss"})
	if err != nil {
		t.Fatal(err)
	}
	if got := r.(*renderer).tail; got != "<|start|>assistant" {
		t.Errorf("gpt-oss: tail %q, want %q", got, "<|start|>assistant")
	}
	for _, output := range []string{
		" to=functions.lookup<|channel|>commentary json<|message|>{\"city\": \"Paris\"}<|call|>",
		"<|channel|>analysis<|message|>Look it up.<|end|><|start|>assistant<|channel|>commentary to=functions.lookup <|constrain|>json<|message|>{\"city\": \"Paris\"}<|call|>",
	} {
		calls, _ := feedAll(t, r, tools, output)
		if len(calls) != 1 || calls[0].Name != "lookup" || string(calls[0].Arguments) != `{"city":"Paris"}` || !strings.Contains(output, calls[0].Raw) {
			t.Errorf("gpt-oss: calls %+v from %q", calls, output)
		}
	}
	answer := "<|channel|>final<|message|>It is sunny.<|return|>"
	if calls, text := feedAll(t, r, tools, answer); len(calls) != 0 || text != answer {
		t.Errorf("gpt-oss: answer gave calls %+v and content %q", calls, text)
	}
	for _, name := range []string{"qwen3", "llama3.1", "mistral-small3", "hermes3"} {
		r, err := NewRenderer(RendererOptions{Template: name})
		if err != nil {
			t.Fatal(err)
		}
		if got := r.(*renderer).tail; got != "" {
			t.Errorf("%s: tail %q, want none", name, got)
		}
	}
}

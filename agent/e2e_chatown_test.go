package agent

import (
	"context"
	"strings"
	"testing"

	"github.com/toolharness/toolharness/backend/llamacpp"
	"github.com/toolharness/toolharness/chat"
	"github.com/toolharness/toolharness/internal/llamacpptest"
	"github.com/toolharness/toolharness/internal/ollamatest"
	"github.com/toolharness/toolharness/render"
	"github.com/toolharness/toolharness/templates"
)

// TestE2EChatOwnResultsOnServer: chat mode with a model's own tool
// section, on a real llama-server that applies the same template (--jinja
// --chat-template-file): the server renders the list chat mode sends
// (the section in the system messages, results as tool messages, no
// tools) exactly as it renders the conversation with its tools, results
// in the template's own tool turn.
func TestE2EChatOwnResultsOnServer(t *testing.T) {
	tools := []chat.Tool{{Name: "lookup", Description: "Look up.", Parameters: []byte(`{"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}`)}}
	for _, c := range []struct {
		name, path, eos, result string
	}{
		{"glm-4.5", "../templates/testdata/conformance/templates/zai-org-GLM-4.5.jinja", "<|endoftext|>", "<|observation|>\n<tool_response>\nParis: 18 C\n</tool_response>"},
		{"qwen3", "../templates/testdata/official/Qwen-Qwen3-0.6B.jinja", "<|im_end|>", "<|im_start|>user\n<tool_response>\nParis: 18 C\n</tool_response>\n<tool_response>\nOslo: 9 C\n</tool_response><|im_end|>"},
	} {
		t.Run(c.name, func(t *testing.T) {
			fam := loadedFamily(t, c.path, templates.SpecialTokens{EOS: c.eos})
			r, err := NewRenderer(RendererOptions{Family: &fam, Chat: true})
			if err != nil {
				t.Fatal(err)
			}
			calls := []chat.ToolCall{{ID: "call_1", Name: "lookup", Arguments: []byte(`{"city":"Paris"}`)},
				{ID: "call_2", Name: "lookup", Arguments: []byte(`{"city":"Oslo"}`)}}
			if c.name == "glm-4.5" {
				calls = calls[:1]
			}
			// The calls as the template writes a turn holding them.
			raw, err := render.TemplateTurn(r.(*renderer).fam, chat.Message{Role: chat.RoleAssistant, ToolCalls: calls})
			if err != nil {
				t.Fatal(err)
			}
			sys := System{Text: "Be brief.", Tools: tools}
			hist := []Msg{{Message: chat.Message{Role: chat.RoleUser, Content: "Weather?"}},
				{Message: chat.Message{Role: chat.RoleAssistant, Raw: raw, ToolCalls: calls}}}
			conv := []chat.Message{{Role: chat.RoleSystem, Content: sys.Text}, hist[0].Message, {Role: chat.RoleAssistant, Content: raw}}
			for i, call := range calls {
				m := chat.Message{Role: chat.RoleTool, ToolCallID: call.ID, Name: call.Name, Content: []string{"Paris: 18 C", "Oslo: 9 C"}[i]}
				hist = append(hist, Msg{Message: m})
				conv = append(conv, m)
			}
			tr, err := r.Transcript(sys)
			if err != nil {
				t.Fatal(err)
			}
			msgs, err := tr.Messages(hist)
			if err != nil {
				t.Fatal(err)
			}
			spec := ollamatest.DefaultSpec()
			spec.EOSText = c.eos
			srv, err := llamacpptest.New(llamacpptest.WithSpec(spec), llamacpptest.WithArgs("--jinja", "--chat-template-file", c.path))
			if err != nil {
				t.Fatal(err)
			}
			defer srv.Close()
			client, err := llamacpp.New(llamacpp.Config{BaseURL: srv.URL})
			if err != nil {
				t.Fatal(err)
			}
			got, err := client.ApplyTemplate(context.Background(), msgs, nil)
			if err != nil {
				t.Fatal(err)
			}
			want, err := client.ApplyTemplate(context.Background(), conv, tools)
			if err != nil {
				t.Fatal(err)
			}
			if got != want {
				t.Errorf("the server renders the chat-mode list otherwise than the conversation with tools:\nlist:  %q\nconv:  %q", got, want)
			}
			if !strings.Contains(got, c.result) {
				t.Errorf("the results are not in the template's own tool turn %q:\n%q", c.result, got)
			}
		})
	}
}

package ollamatmpl

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/ollama/ollama/api"
	ollamatemplate "github.com/ollama/ollama/template"

	"github.com/toolharness/toolharness/chat"
	"github.com/toolharness/toolharness/templates"
)

// Template is an Ollama model's own Go template (the TEMPLATE of its
// Modelfile), executed in-process by Ollama's template package exactly as
// the server executes it for /api/chat. It is what toolharness renders
// when a model's Hugging Face template is not available (Ollama's
// /api/show drops tokenizer.chat_template from model_info).
type Template struct {
	name string
	text string
	tmpl *ollamatemplate.Template
}

// Compile parses an Ollama Go template.
func Compile(name, text string) (*Template, error) {
	if strings.TrimSpace(text) == "" {
		return nil, fmt.Errorf("ollamatmpl: %s: empty template", name)
	}
	t, err := ollamatemplate.Parse(text)
	if err != nil {
		return nil, fmt.Errorf("ollamatmpl: %s: %w", name, err)
	}
	return &Template{name: name, text: text, tmpl: t}, nil
}

// Render executes the template on messages and tools as the server does
// (it always ends with the assistant turn's opener: Ollama templates have
// no add_generation_prompt).
func (o *Template) Render(msgs []chat.Message, tools []chat.Tool) (string, error) {
	var values ollamatemplate.Values
	if err := json.Unmarshal(ollamaMessagesJSON(msgs), &values.Messages); err != nil {
		return "", fmt.Errorf("ollamatmpl: %s: messages: %w", o.name, err)
	}
	if len(tools) > 0 {
		raw, err := templates.JinjaTools(tools) // the OpenAI tool shape the server decodes into api.Tools
		if err != nil {
			return "", err
		}
		var t api.Tools
		if err := json.Unmarshal(raw, &t); err != nil {
			return "", fmt.Errorf("ollamatmpl: %s: tools: %w", o.name, err)
		}
		values.Tools = t
	}
	var b strings.Builder
	if err := o.tmpl.Execute(&b, values); err != nil {
		return "", fmt.Errorf("ollamatmpl: %s: %w", o.name, err)
	}
	return b.String(), nil
}

// ollamaMessagesJSON writes messages in /api/chat's request shape.
func ollamaMessagesJSON(msgs []chat.Message) []byte {
	type fn struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}
	type call struct {
		Function fn `json:"function"`
	}
	type message struct {
		Role       string `json:"role"`
		Content    string `json:"content"`
		Thinking   string `json:"thinking,omitempty"`
		ToolCalls  []call `json:"tool_calls,omitempty"`
		ToolName   string `json:"tool_name,omitempty"`
		ToolCallID string `json:"tool_call_id,omitempty"`
	}
	out := make([]message, 0, len(msgs))
	for _, m := range msgs {
		om := message{Role: string(m.Role), Content: m.Content, Thinking: m.Reasoning, ToolCallID: m.ToolCallID}
		if m.Role == chat.RoleTool {
			om.ToolName = m.Name
		}
		for _, c := range m.ToolCalls {
			args := c.Arguments
			if len(args) == 0 {
				args = json.RawMessage(`{}`)
			}
			om.ToolCalls = append(om.ToolCalls, call{Function: fn{Name: c.Name, Arguments: args}})
		}
		out = append(out, om)
	}
	data, _ := json.Marshal(out) // only strings and valid raw JSON: cannot fail
	return data
}

// FamilyOf returns the Family of an Ollama model known only by its Go
// template: the built-in family it is detected as (rendered with that
// family's official template; ChatML markers alone do not count when the
// template has tool support of its own), else a Family that renders the
// Go template in-process as the server would, with the model's stop
// parameters as its stops. own reports the latter.
func FamilyOf(name, text string, stop []string) (f templates.Family, own bool, err error) {
	if d, err := templates.Detect(text); err == nil && !(d.Family == "chatml" && strings.Contains(strings.ToLower(text), "tool")) {
		f, err := templates.Lookup(d.Family)
		return f, false, err
	}
	o, err := Compile(name, text)
	if err != nil {
		return templates.Family{}, false, err
	}
	f = templates.Family{
		Name:          name,
		Description:   "Ollama's Go template of the model (its Hugging Face chat template was not available)",
		Official:      "Ollama TEMPLATE of " + name,
		DefaultFormat: templates.UnknownDefaultFormat,
		Template:      name,
		Stop:          append([]string(nil), stop...),
		ControlTokens: slices.Compact(slices.Sorted(slices.Values(append(append([]string(nil), stop...), templates.ControlTokensIn(text)...)))),
	}
	return f.WithRenderer(text, func(in templates.Input) (string, error) { return o.Render(in.Messages, in.Tools) }), true, nil
}

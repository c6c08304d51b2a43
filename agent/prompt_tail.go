package agent

import (
	"encoding/json"
	"time"

	"github.com/toolharness/toolharness/chat"
	"github.com/toolharness/toolharness/derive"
	"github.com/toolharness/toolharness/parse"
	"github.com/toolharness/toolharness/render"
	"github.com/toolharness/toolharness/templates"
)

// The probe conversation a session's prompt tail is learned from: a user
// turn offering one tool, and the same with a call of it in place of the
// generation prompt. Distinct names, so that finding them in a render says
// where the conversation's text went.
const (
	tailProbeUser = "PROBE_USER_TEXT"
	tailProbeTool = "probe_alpha"
)

// promptTail is the tail of the family's generation prompt that belongs to
// format's call syntax (gpt-oss: "<|start|>assistant", which a call's
// " to=functions.NAME" extends), learned as package derive learns it for a
// loaded template, from the family's own renders of a probe conversation;
// "" when the model's output parses on its own, or when the probe does not
// render (the parser is then the format's, as before).
func promptTail(fam templates.Family, format string) string {
	tool := chat.Tool{Name: tailProbeTool, Description: "A probe.",
		Parameters: json.RawMessage(`{"type": "object", "properties": {"first_arg": {"type": "string"}}}`)}
	call := chat.ToolCall{ID: "call_0", Name: tailProbeTool, Arguments: json.RawMessage(`{"first_arg": "alpha_value"}`)}
	req := render.Request{Family: fam, Format: format, Tools: []chat.Tool{tool}, Verbatim: true,
		Messages: []chat.Message{{Role: chat.RoleUser, Content: tailProbeUser}},
		Now:      time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)}
	prompt, err := render.Prompt(req)
	if err != nil {
		return ""
	}
	req.Messages = append(req.Messages, chat.Message{Role: chat.RoleAssistant, ToolCalls: []chat.ToolCall{call}})
	req.NoGenerationPrompt = true
	turn, err := render.Prompt(req)
	if err != nil {
		return ""
	}
	newParser := func() (*parse.Parser, error) { return parse.New(format, parse.Options{}) }
	return derive.PromptTail(prompt, turn, tailProbeUser, newParser, tailProbeTool)
}

package render

import (
	"fmt"
	"strings"
	"time"

	"github.com/toolharness/toolharness/chat"
	"github.com/toolharness/toolharness/templates"
)

// chatCatalog is the catalog of a chat-mode message list and where it goes.
type chatCatalog struct {
	text  string // "" when no tools are offered
	place ToolPlace
	// own: the template's own section (TemplateTools), placed verbatim;
	// else a catalog this package writes, after a blank line.
	own bool
	// toolResults: results go as tool messages the template renders
	// (ToolSection.ToolMessages), not as one user message of text.
	toolResults bool
}

// ownCatalog is fam's template's own tool section for a conversation whose
// system text is system.
func ownCatalog(fam templates.Family, system string, tools []chat.Tool, now time.Time) (chatCatalog, error) {
	s, err := TemplateTools(fam, system, tools, now)
	if err != nil {
		return chatCatalog{}, err
	}
	return chatCatalog{text: s.Text, place: s.Place, own: true, toolResults: s.ToolMessages}, nil
}

// head returns the system messages of a chat-mode list of msgs, catalog
// included, in a new list, and the messages that follow them.
func (c chatCatalog) head(msgs []chat.Message) (out, rest []chat.Message) {
	out = make([]chat.Message, 0, len(msgs)+1)
	first := len(msgs) > 0 && (msgs[0].Role == chat.RoleSystem || msgs[0].Role == chat.RoleDeveloper)
	switch {
	case c.text == "":
		return out, msgs
	case c.place == OwnSystem:
		return append(out, chat.Message{Role: chat.RoleSystem, Content: c.text}), msgs
	case !first:
		return append(out, chat.Message{Role: chat.RoleSystem, Content: c.text}), msgs
	}
	sys := msgs[0]
	if sys.Content != "" && !c.own {
		sys.Content += "\n\n"
	}
	sys.Content += c.text
	return append(out, sys), msgs[1:]
}

// assistantMessage is an assistant turn as chat mode sends it: its raw
// text, or else its content and calls written in format (by the template
// itself when only the template writes the format).
func assistantMessage(fam templates.Family, format string, m chat.Message) (chat.Message, error) {
	text := m.Raw
	if text == "" {
		if checkFormat(format) != nil && fam.Jinja() != nil && format == fam.NativeFormat && len(m.ToolCalls) > 0 {
			turn := chat.Message{Role: chat.RoleAssistant, Content: m.Content, ToolCalls: m.ToolCalls}
			written, err := TemplateTurn(fam, turn)
			if err != nil {
				return chat.Message{}, err
			}
			return chat.Message{Role: chat.RoleAssistant, Content: written, Reasoning: m.Reasoning}, nil
		}
		written, err := FormatCalls(format, m.ToolCalls)
		if err != nil {
			return chat.Message{}, err
		}
		text = m.Content
		if text != "" && written != "" {
			text += "\n"
		}
		text += written
	}
	return chat.Message{Role: chat.RoleAssistant, Content: text, Reasoning: rawlessReasoning(m)}, nil
}

// toolResult is a tool message as the result it carries.
func toolResult(m chat.Message) chat.ToolResult {
	return chat.ToolResult{CallID: m.ToolCallID, Name: m.Name, Content: m.Content, IsError: m.IsError}
}

// chatReminders puts reminders into msgs, a chat-mode list or the part of
// it not sent before: at the end of the last tool message where tool
// messages follow the newest user message (as raw mode's Session puts
// them after results the template renders), else at the start of the
// newest user message (results written as text are one). It changes msgs
// in place.
func chatReminders(msgs []chat.Message, reminders []string) error {
	if len(reminders) == 0 {
		return nil
	}
	i := len(msgs) - 1
	for ; i >= 0 && msgs[i].Role != chat.RoleUser && msgs[i].Role != chat.RoleTool; i-- {
	}
	switch {
	case i < 0:
		return ErrNoUserMessage
	case msgs[i].Role == chat.RoleTool:
		msgs[i].Content += "\n" + strings.TrimSuffix(reminderText(reminders), "\n")
	default:
		msgs[i].Content = reminderText(reminders) + msgs[i].Content
	}
	return nil
}

// appendResults appends one turn's results, matched to its calls, to out:
// as tool messages, in the order of calls, for a template that renders
// them itself (asTool); else as one user message, the results written in
// format. Their text is already framing-safe (safeMessages,
// ChatSession.AddResults).
func appendResults(out []chat.Message, format string, calls []chat.ToolCall, results []chat.ToolResult, asTool bool) ([]chat.Message, error) {
	ordered, err := MatchResults(calls, results)
	if err != nil {
		return nil, err
	}
	if asTool {
		for _, r := range ordered {
			out = append(out, r.Message())
		}
		return out, nil
	}
	text, err := formatResults(format, ordered, func(s string) string { return s })
	if err != nil {
		return nil, err
	}
	return append(out, chat.Message{Role: chat.RoleUser, Content: text}), nil
}

// toolRun is the results of the run of tool messages that starts at
// msgs[i], and the index after it.
func toolRun(msgs []chat.Message, i int) ([]chat.ToolResult, int) {
	var results []chat.ToolResult
	for ; i < len(msgs) && msgs[i].Role == chat.RoleTool; i++ {
		results = append(results, toolResult(msgs[i]))
	}
	return results, i
}

// TemplateTurn is assistant message m as fam's template writes it, as the
// model would: the render of the turn after a user's, less the opening it
// shares with the generation prompt and the end of turn. It is how a turn
// is written in a syntax only the template writes (one derived from it).
func TemplateTurn(fam templates.Family, m chat.Message) (string, error) {
	user := chat.Message{Role: chat.RoleUser, Content: "example"}
	// A date the template prints is not in the turn's text.
	req := Request{Family: fam, Messages: []chat.Message{user}, Verbatim: true, NoGenerationPrompt: true,
		Now: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)}
	prompt, err := Prompt(req)
	if err != nil {
		return "", err
	}
	req.NoGenerationPrompt = false
	withOpener, err := Prompt(req)
	if err != nil {
		return "", err
	}
	req.Messages = append(req.Messages, m)
	req.NoGenerationPrompt = true
	turn, err := Prompt(req)
	if err != nil {
		return "", err
	}
	if !strings.HasPrefix(turn, prompt) || !strings.HasPrefix(withOpener, prompt) {
		return "", fmt.Errorf("render: the %s template's assistant turn does not extend its prompt", fam.Name)
	}
	turn, opener := turn[len(prompt):], withOpener[len(prompt):]
	n := 0
	for n < len(turn) && n < len(opener) && turn[n] == opener[n] {
		n++
	}
	if n < len(opener) {
		// The turn parts from the opener inside a marker (the opener's
		// "<think>", the turn's "<TOOLCALL>"): cut after the last line
		// or marker end they share.
		for n > 0 && !strings.ContainsRune("\n>]", rune(turn[n-1])) {
			n--
		}
	}
	return strings.TrimSpace(strings.TrimSuffix(turn[n:], fam.EndOfTurn)), nil
}

package render

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/toolharness/toolharness/chat"
	"github.com/toolharness/toolharness/templates"
)

// A chat endpoint applies the model's template to the messages it is sent,
// and chat mode never fills the server's tools field: a template that
// renders tools itself would be sent none. So chat mode on a loaded
// template sends the template's own tool section as message text, placed
// so that the server's rendering of the messages without tools is the
// template's rendering of them with tools, byte for byte. TemplateTools
// learns that text and place from renders, and proves it by rendering.

// ToolPlace is where a template's tool section goes in a chat-mode list.
type ToolPlace int

const (
	// AfterSystem: at the end of the system message's text (the section
	// carries its own separator).
	AfterSystem ToolPlace = iota + 1
	// OwnSystem: a system message of its own, before the conversation's
	// system message (GLM-4.5 writes the tools as a system turn of
	// their own), or the only system message when there is none.
	OwnSystem
)

// ToolSection is a template's own rendering of a tool catalog, as chat-mode
// message text.
type ToolSection struct {
	Text  string
	Place ToolPlace
	// ToolMessages: the template renders a tool message after the placed
	// section, without tools, as it renders it with tools, the result's
	// text included, so chat mode sends results as tool messages for it
	// to render; else as text in a user message (a template that renders
	// no tool messages would drop them).
	ToolMessages bool
}

// ErrNoTemplateTools is returned (wrapped) by TemplateTools for a template
// that renders the same with tools as without.
var ErrNoTemplateTools = errors.New("render: the template renders no tools")

// ErrToolsOutsideSystem is returned (wrapped) by TemplateTools for a
// template that renders tools where no system message can carry them (in
// the user turn, as Llama 3.1's does; before the last user message, as
// Mistral's do).
var ErrToolsOutsideSystem = errors.New("render: the template renders its tools outside the system message")

// Probe texts of TemplateTools: no whitespace at the ends (templates trim)
// and no markup.
const (
	probeUser    = "\u27e6toolharness-user\u27e7"
	probeSection = "\u27e6toolharness-section\u27e7"
	probeAnswer  = "\u27e6toolharness-answer\u27e7"
	probeResult  = "\u27e6toolharness-result\u27e7"
	// probeCallID is nine letters and digits, the only ids some
	// templates (Mistral's) accept.
	probeCallID = "probe0001"
)

// TemplateTools returns fam's template's own tool section for tools and
// where it goes, for a conversation whose system text is system ("" for
// none): the part of the render with tools that the render without tools
// lacks, placed at the end of the system message or as a system message of
// its own, whichever renders back, without tools, to the render with tools.
func TemplateTools(fam templates.Family, system string, tools []chat.Tool, now time.Time) (ToolSection, error) {
	if len(tools) == 0 {
		return ToolSection{}, errors.New("render: no tools to render")
	}
	var head []chat.Message
	if system != "" {
		head = []chat.Message{{Role: chat.RoleSystem, Content: system}}
	}
	user := chat.Message{Role: chat.RoleUser, Content: probeUser}
	render := func(msgs []chat.Message, tools []chat.Tool) (string, error) {
		return fam.Render(templates.Input{Messages: append(msgs, user), Tools: tools, AddGenerationPrompt: true, Now: now})
	}
	with, err := render(head, tools)
	if err != nil {
		return ToolSection{}, fmt.Errorf("render: %s with tools: %w", fam.Name, err)
	}
	without, err := render(head, nil)
	if err != nil {
		return ToolSection{}, fmt.Errorf("render: %s without tools: %w", fam.Name, err)
	}
	if with == without {
		return ToolSection{}, fmt.Errorf("%w (%s)", ErrNoTemplateTools, fam.Name)
	}
	for _, l := range sectionLayouts(system) {
		text, ok := sectionText(with, l, render)
		if ok {
			results := rendersToolMessages(fam, head, l.msgs(text), tools, now)
			return ToolSection{Text: text, Place: l.place, ToolMessages: results}, nil
		}
	}
	return ToolSection{}, fmt.Errorf("%w (%s)", ErrToolsOutsideSystem, fam.Name)
}

// layout is one way of carrying a section in the system messages.
type layout struct {
	place ToolPlace
	msgs  func(section string) []chat.Message
}

func sectionLayouts(system string) []layout {
	sys := func(s string) chat.Message { return chat.Message{Role: chat.RoleSystem, Content: s} }
	if system == "" {
		return []layout{{OwnSystem, func(s string) []chat.Message { return []chat.Message{sys(s)} }}}
	}
	return []layout{
		{AfterSystem, func(s string) []chat.Message { return []chat.Message{sys(system + s)} }},
		{OwnSystem, func(s string) []chat.Message { return []chat.Message{sys(s), sys(system)} }},
	}
}

// sectionText finds what l must carry for the render without tools to be
// with: l rendered with a probe gives the text around the section, which
// with must start and end with; the middle is the section, kept only when
// l rendered with it is with.
func sectionText(with string, l layout, render func([]chat.Message, []chat.Tool) (string, error)) (string, bool) {
	framed, err := render(l.msgs(probeSection), nil)
	if err != nil || strings.Count(framed, probeSection) != 1 {
		return "", false
	}
	i := strings.Index(framed, probeSection)
	before, after := framed[:i], framed[i+len(probeSection):]
	if len(before)+len(after) >= len(with) || !strings.HasPrefix(with, before) || !strings.HasSuffix(with, after) {
		return "", false
	}
	text := with[len(before) : len(with)-len(after)]
	got, err := render(l.msgs(text), nil)
	return text, err == nil && got == with
}

// rendersToolMessages reports whether fam's template renders a turn's
// result, as a tool message after an answer, the same way after the chat
// list's system messages (list, without tools) as after the
// conversation's (head, with tools), and shows the result's text.
func rendersToolMessages(fam templates.Family, head, list []chat.Message, tools []chat.Tool, now time.Time) bool {
	turn := resultProbe(tools[0].Name)
	with, err := fam.Render(templates.Input{Messages: append(slices.Clip(head), turn...), Tools: tools, AddGenerationPrompt: true, Now: now})
	if err != nil {
		return false
	}
	without, err := fam.Render(templates.Input{Messages: append(slices.Clip(list), turn...), AddGenerationPrompt: true, Now: now})
	return err == nil && without == with && strings.Contains(with, probeResult)
}

// resultProbe is a turn whose tool result a template shows or drops: a
// question, an answer, and the result of a call to tool.
func resultProbe(tool string) []chat.Message {
	return []chat.Message{{Role: chat.RoleUser, Content: probeUser}, {Role: chat.RoleAssistant, Content: probeAnswer},
		{Role: chat.RoleTool, ToolCallID: probeCallID, Name: tool, Content: probeResult}}
}

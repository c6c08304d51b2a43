package render

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/toolharness/toolharness/chat"
	"github.com/toolharness/toolharness/templates"
)

// Request is one rendering of a conversation.
type Request struct {
	// Family is the chat template (templates.Lookup).
	Family templates.Family
	// Format is the tool format; "" means the family's default format
	// (its native one where it has one).
	Format   string
	Messages []chat.Message
	// Tools is nil when no tools are offered.
	Tools []chat.Tool
	// Reminders go, as <system-reminder> blocks, at the start of the newest
	// user message.
	Reminders []string
	// NoGenerationPrompt leaves out the assistant turn opener.
	NoGenerationPrompt bool
	// Now is the clock for families that print a date; it is required for
	// them (no clock is read here).
	Now time.Time
	// Verbatim turns framing safety off: untrusted text goes in as is, and
	// the output is byte-identical to the official template.
	Verbatim bool
	// Prepared, when set, is Prepare's result for the same Family, Format
	// and Tools: what depends only on them, computed once for the
	// requests of a session rather than on each.
	Prepared *Prepared
	// OwnCatalog (chat mode) sends the template's own tool section
	// (TemplateTools) instead of a catalog this package writes; a
	// template that renders its tools where no system message can carry
	// them is then an error (ErrToolsOutsideSystem). The section asks for
	// calls in the template's own syntax, so Format should be the
	// family's native one (derive.Own; agent.PlanChatCatalog decides
	// both). Raw mode ignores it: there the template renders its tools
	// itself in its native format.
	OwnCatalog bool
}

// Prepared is what depends only on a request's family, format and tools:
// the tool set the template reads, the catalog text, the safety markers.
// It is never written after Prepare and is safe for concurrent use.
type Prepared struct {
	format string
	set    *templates.ToolSet // nil when no tools are offered
	// catalog is the catalog text, when hasCatalog (a format this package
	// writes, and tools offered).
	catalog     string
	hasCatalog  bool
	userMarkers []string
	// resultsAsText: the family's template, in its native format, renders
	// no tool messages (rendersToolResults is false).
	resultsAsText bool
}

// Prepare computes what a session's requests share (Request.Prepared).
func Prepare(req Request) (*Prepared, error) {
	format, err := resolveFormat(req)
	if err != nil {
		return nil, err
	}
	return newPrepared(req, format)
}

func newPrepared(req Request, format string) (*Prepared, error) {
	c := &Prepared{format: format, userMarkers: Markers(req.Family, format, req.Tools)}
	if format == req.Family.NativeFormat {
		c.resultsAsText = !rendersToolResults(req.Family)
	}
	if req.Tools == nil {
		return c, nil
	}
	var err error
	if c.set, err = templates.NewToolSet(req.Tools); err != nil {
		return nil, fmt.Errorf("render: %w", err)
	}
	// Chat mode writes the catalog as text in any format this package
	// writes, the family's native one included.
	if len(req.Tools) > 0 && checkFormat(format) == nil {
		if c.catalog, err = Catalog(format, req.Tools); err != nil {
			return nil, err
		}
		c.hasCatalog = true
	}
	return c, nil
}

// ErrNoClock is returned when a date-printing family gets no Request.Now.
var ErrNoClock = errors.New("render: the family prints the date: set Request.Now")

// Prompt renders req in raw mode: the whole prompt string, special tokens
// and BOS text included, as the family's official template prints it (in
// the native format) or with the catalog as text in the system message
// (any other format).
func Prompt(req Request) (string, error) {
	p, err := prepare(req)
	if err != nil {
		return "", err
	}
	in := templates.Input{Messages: p.msgs, Tools: p.tools, AddGenerationPrompt: !req.NoGenerationPrompt, Now: req.Now}
	if p.native && req.Prepared != nil {
		in.ToolSet = req.Prepared.set
	}
	return req.Family.Render(in)
}

// ChatMessages renders req in chat mode: the message list for a chat
// endpoint that applies its own template. The catalog travels as text at
// the end of the system message (with OwnCatalog, the template's own tool
// section where TemplateTools places it), an assistant turn is its raw
// text (or its content and calls written in the format), and the results
// of a turn are one user message written in the format; with OwnCatalog
// they are tool messages, which the server's template renders as raw
// mode's does (where it renders them: ToolSection.ToolMessages). Nothing goes
// in a server-side tools field. It converts the whole conversation; a session's turns use
// ChatSession, which converts only what each turn adds.
func ChatMessages(req Request) ([]chat.Message, error) {
	p, err := prepareText(req)
	if err != nil {
		return nil, err
	}
	return p.msgs, nil
}

type prepared struct {
	format string
	native bool
	msgs   []chat.Message
	tools  []chat.Tool
}

func resolveFormat(req Request) (string, error) {
	if req.Family.Name == "" {
		return "", errors.New("render: Request.Family is not set (use templates.Lookup)")
	}
	format := req.Format
	if format == "" {
		format = req.Family.DefaultFormat
	}
	// A family's own native format needs no writer here: its template
	// renders the catalog and the calls itself. That is how a template
	// loaded from a model (its call syntax derived from it, package derive)
	// is used in raw mode; any other format is written by this package.
	if format != req.Family.NativeFormat {
		if err := checkFormat(format); err != nil {
			return "", err
		}
	}
	if req.Family.PrintsDate && req.Now.IsZero() {
		return "", fmt.Errorf("%w (family %s)", ErrNoClock, req.Family.Name)
	}
	return format, nil
}

func prepare(req Request) (prepared, error) {
	format, err := resolveFormat(req)
	if err != nil {
		return prepared{}, err
	}
	if req.Family.NativeFormat == "" || format != req.Family.NativeFormat {
		return prepareText(req)
	}
	msgs := safeMessages(req, format)
	if msgs, err = WithReminders(msgs, req.Reminders...); err != nil {
		return prepared{}, err
	}
	var asText bool
	if req.Prepared != nil && req.Prepared.format == format {
		asText = req.Prepared.resultsAsText
	} else {
		asText = !rendersToolResults(req.Family)
	}
	if msgs, err = nativeMessages(format, msgs, asText); err != nil {
		return prepared{}, err
	}
	return prepared{format: format, native: true, msgs: msgs, tools: req.Tools}, nil
}

func prepareText(req Request) (prepared, error) {
	format, err := resolveFormat(req)
	if err != nil {
		return prepared{}, err
	}
	msgs := safeMessages(req, format)
	cat, err := requestCatalog(req, format, msgs)
	if err != nil {
		return prepared{}, err
	}
	if msgs, err = textMessages(msgs, req.Family, format, cat); err != nil {
		return prepared{}, err
	}
	// After the conversion, so that reminders after tool results go with
	// the results (chatReminders).
	if err := chatReminders(msgs, req.Reminders); err != nil {
		return prepared{}, err
	}
	return prepared{format: format, msgs: msgs}, nil
}

// requestCatalog is the catalog of a chat-mode list of msgs and where it
// goes.
func requestCatalog(req Request, format string, msgs []chat.Message) (chatCatalog, error) {
	if len(req.Tools) == 0 {
		return chatCatalog{}, nil
	}
	if req.OwnCatalog {
		system := ""
		if len(msgs) > 0 && msgs[0].Role == chat.RoleSystem {
			system = msgs[0].Content
		}
		return ownCatalog(req.Family, system, req.Tools, req.Now)
	}
	if req.Prepared != nil && req.Prepared.format == format && req.Prepared.hasCatalog {
		return chatCatalog{text: req.Prepared.catalog, place: AfterSystem}, nil
	}
	text, err := Catalog(format, req.Tools)
	if err != nil {
		return chatCatalog{}, err
	}
	return chatCatalog{text: text, place: AfterSystem}, nil
}

// safeMessages neutralises untrusted text: user messages and tool results.
// System, developer and assistant text is the harness's or the model's own.
func safeMessages(req Request, format string) []chat.Message {
	out := make([]chat.Message, len(req.Messages))
	copy(out, req.Messages)
	if req.Verbatim {
		return out
	}
	var userMarkers []string
	if req.Prepared != nil && req.Prepared.format == format {
		userMarkers = req.Prepared.userMarkers
	} else {
		userMarkers = Markers(req.Family, format, req.Tools)
	}
	resultMarkers := ResultTextMarkers(req.Family, format)
	for i := range out {
		switch out[i].Role {
		case chat.RoleUser:
			out[i].Content = neutralize(out[i].Content, userMarkers)
		case chat.RoleTool:
			out[i].Content = neutralize(out[i].Content, resultMarkers)
		}
	}
	return out
}

// nativeMessages prepares messages for a family template in its native
// format: an assistant turn with Raw text is rendered from that text (its
// calls are not re-serialised), and tool messages get the name of the call
// they answer. A template that renders no tool messages would drop the
// results: there (asText) each turn's results are one user message
// written in format, as in a format this package writes.
func nativeMessages(format string, msgs []chat.Message, asText bool) ([]chat.Message, error) {
	out := make([]chat.Message, 0, len(msgs))
	var calls []chat.ToolCall
	for i := 0; i < len(msgs); i++ {
		m := msgs[i]
		switch m.Role {
		case chat.RoleAssistant:
			calls = m.ToolCalls
			if m.Raw != "" {
				m = chat.Message{Role: chat.RoleAssistant, Content: m.Raw}
			}
		case chat.RoleTool:
			if asText {
				var results []chat.ToolResult
				results, i = toolRun(msgs, i)
				i--
				var err error
				if out, err = appendResults(out, format, calls, results, false); err != nil {
					return nil, err
				}
				continue
			}
			if m.Name == "" {
				for j, c := range calls {
					if c.ID == m.ToolCallID || (m.ToolCallID == "" && j == 0) {
						m.Name = c.Name
						break
					}
				}
			}
		}
		out = append(out, m)
	}
	return out, nil
}

// rendersToolResults reports whether fam's template shows the text of a
// tool message after an answer. A template that raises on the probe is
// taken at its word: its tool messages are sent as they are, and a real
// conversation's render says what it raises. It renders once; a session
// asks once (Prepared.resultsAsText).
func rendersToolResults(fam templates.Family) bool {
	if fam.Jinja() == nil {
		return true // the built-in families' own renderers render results
	}
	msgs := resultProbe("probe_lookup")
	tools := []chat.Tool{{Name: "probe_lookup", Description: "Looks a word up.", Parameters: []byte(`{"type": "object", "properties": {"word": {"type": "string"}}}`)}}
	text, err := fam.Render(templates.Input{Messages: msgs, Tools: tools, AddGenerationPrompt: true, Now: time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)})
	return err != nil || strings.Contains(text, probeResult)
}

// textMessages turns a conversation into plain messages for a prompted
// format: the catalog in the system messages, assistant turns as their
// text, and each run of tool messages as one user message of results (kept
// as tool messages, matched to their calls, where the template's own
// section is sent and the template renders them: cat.toolResults).
func textMessages(msgs []chat.Message, fam templates.Family, format string, cat chatCatalog) ([]chat.Message, error) {
	out, rest := cat.head(msgs)
	var calls []chat.ToolCall
	for i := 0; i < len(rest); i++ {
		m := rest[i]
		switch m.Role {
		case chat.RoleAssistant:
			calls = m.ToolCalls
			am, err := assistantMessage(fam, format, m)
			if err != nil {
				return nil, err
			}
			out = append(out, am)
		case chat.RoleTool:
			// With the template's own section, the template renders its
			// results itself, as in raw mode.
			var results []chat.ToolResult
			results, i = toolRun(rest, i)
			i--
			var err error
			if out, err = appendResults(out, format, calls, results, cat.toolResults); err != nil {
				return nil, err
			}
		default:
			out = append(out, m)
		}
	}
	return out, nil
}

// rawlessReasoning keeps separate reasoning only when the turn is not
// re-rendered from raw text (raw text already holds it).
func rawlessReasoning(m chat.Message) string {
	if m.Raw != "" {
		return ""
	}
	return m.Reasoning
}

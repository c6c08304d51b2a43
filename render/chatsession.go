package render

import (
	"fmt"

	"github.com/toolharness/toolharness/chat"
	"github.com/toolharness/toolharness/templates"
)

// ChatSession is the message-list builder of one chat-mode session, as
// Session is raw mode's. The list sent on a turn is the list sent before
// and the new messages converted on their own: the catalog goes into the
// system messages once, an assistant turn is its raw text, the results of
// a turn are one user message (tool messages, with a template's own tool
// section that renders them: see ChatMessages). Nothing already sent is converted or
// copied again, so a turn costs what it adds, not what came before, and
// each list extends the previous one message for message. Without
// reminders, the list is ChatMessages of the whole conversation (tests
// prove it turn by turn); reminders stay in the message they were sent
// with. Not safe for concurrent use.
type ChatSession struct {
	fam           templates.Family
	format        string
	verbatim      bool
	userMarkers   []string
	resultMarkers []string
	// toolResults: results go as tool messages the template renders
	// (ToolSection.ToolMessages), not as one user message of text.
	toolResults bool
	msgs        []chat.Message
	sent        int             // messages returned by the last Messages
	calls       []chat.ToolCall // the calls of the newest assistant turn
}

// NewChatSession starts a chat-mode session: the system text with the
// catalog of cfg.Tools (cfg.OwnCatalog: the template's own tool section).
func NewChatSession(cfg SessionConfig) (*ChatSession, error) {
	req := Request{Family: cfg.Family, Format: cfg.Format, Tools: cfg.Tools, Now: cfg.Now, OwnCatalog: cfg.OwnCatalog}
	format, err := resolveFormat(req)
	if err != nil {
		return nil, err
	}
	var sys []chat.Message
	if cfg.System != "" {
		sys = []chat.Message{{Role: chat.RoleSystem, Content: cfg.System}}
	}
	cat, err := requestCatalog(req, format, sys)
	if err != nil {
		return nil, err
	}
	s := &ChatSession{fam: cfg.Family, format: format, verbatim: cfg.Verbatim, toolResults: cat.toolResults}
	if !cfg.Verbatim {
		s.userMarkers = Markers(cfg.Family, format, cfg.Tools)
		s.resultMarkers = ResultTextMarkers(cfg.Family, format)
	}
	head, rest := cat.head(sys)
	s.msgs = append(head, rest...)
	return s, nil
}

// Format is the session's tool format.
func (s *ChatSession) Format() string { return s.format }

// AddUser appends a user message, made framing-safe.
func (s *ChatSession) AddUser(text string) {
	if !s.verbatim {
		text = neutralize(text, s.userMarkers)
	}
	s.msgs = append(s.msgs, chat.Message{Role: chat.RoleUser, Content: text})
}

// AddAssistant appends an assistant turn: its Raw text when it has one,
// else its content and calls written in the session's format. Its calls
// are what the next results answer.
func (s *ChatSession) AddAssistant(m chat.Message) error {
	am, err := assistantMessage(s.fam, s.format, m)
	if err != nil {
		return err
	}
	s.calls = m.ToolCalls
	s.msgs = append(s.msgs, am)
	return nil
}

// AddResults appends the results of the newest assistant turn's calls: one
// user message, or a tool message each with the template's own section.
func (s *ChatSession) AddResults(results []chat.ToolResult) error {
	if !s.verbatim {
		safe := make([]chat.ToolResult, len(results))
		for i, r := range results {
			r.Content = neutralize(r.Content, s.resultMarkers)
			safe[i] = r
		}
		results = safe
	}
	msgs, err := appendResults(s.msgs, s.format, s.calls, results, s.toolResults)
	if err != nil {
		return err
	}
	s.msgs = msgs
	return nil
}

// Messages returns the list to send. Reminders go where chatReminders puts
// them among the messages added since the last list, and stay there. The
// list is shared with the session: callers must not change its messages
// (appending to it is safe).
func (s *ChatSession) Messages(reminders ...string) ([]chat.Message, error) {
	if err := chatReminders(s.msgs[s.sent:], reminders); err != nil {
		return nil, fmt.Errorf("%w since the last list", err)
	}
	s.sent = len(s.msgs)
	return s.msgs[:len(s.msgs):len(s.msgs)], nil
}

// Clone returns an independent copy of the session (benchmarks play one
// turn from the same point many times).
func (s *ChatSession) Clone() *ChatSession {
	c := *s
	c.msgs = append(make([]chat.Message, 0, len(s.msgs)+4), s.msgs...)
	return &c
}

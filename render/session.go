package render

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/toolharness/toolharness/chat"
	"github.com/toolharness/toolharness/templates"
)

// SessionConfig fixes what stays the same for a whole session.
type SessionConfig struct {
	Family templates.Family
	// Format is the tool format; "" means the family's default.
	Format string
	// System is the session's system text (identity, rules); the catalog
	// of Tools is rendered with it once.
	System string
	Tools  []chat.Tool
	// Now is frozen for the session, so date-printing families print the
	// same date on every turn.
	Now      time.Time
	Verbatim bool
}

// Session is the prefix builder of one session in raw mode. The first
// prompt is rendered by the family template; every later prompt is the
// previous prompt, the model's exact raw output, and the rendering of what
// came after it (the turn's closing token, results, user text, the
// generation prompt). Nothing already sent is ever re-rendered, so each
// prompt extends the previous one byte for byte and the server's KV cache
// stays valid. Not safe for concurrent use.
type Session struct {
	cfg      SessionConfig
	msgs     []chat.Message
	prompt   string
	rendered int // messages covered by prompt
}

// sentinel stands for the model's reply while the template renders what
// follows it; it has no whitespace (templates trim) and no markup.
const sentinel = "\u27e6toolharness-reply\u27e7"

// NewSession starts a session.
func NewSession(cfg SessionConfig) (*Session, error) {
	if _, err := resolveFormat(Request{Family: cfg.Family, Format: cfg.Format, Now: cfg.Now}); err != nil {
		return nil, err
	}
	s := &Session{cfg: cfg}
	if cfg.System != "" {
		s.msgs = append(s.msgs, chat.Message{Role: chat.RoleSystem, Content: cfg.System})
	}
	return s, nil
}

// AddUser appends a user message.
func (s *Session) AddUser(text string) {
	s.msgs = append(s.msgs, chat.Message{Role: chat.RoleUser, Content: text})
}

// AddAssistant appends the model's reply: raw is its exact output, calls
// what was parsed from it (used to match results, never re-serialised).
func (s *Session) AddAssistant(raw string, calls []chat.ToolCall) {
	s.msgs = append(s.msgs, chat.Message{Role: chat.RoleAssistant, Raw: raw, ToolCalls: calls})
}

// AddResults appends the results of the last assistant turn's calls.
func (s *Session) AddResults(results []chat.ToolResult) error {
	var calls []chat.ToolCall
	for i := len(s.msgs) - 1; i >= 0; i-- {
		if s.msgs[i].Role == chat.RoleAssistant {
			calls = s.msgs[i].ToolCalls
			break
		}
	}
	ordered, err := MatchResults(calls, results)
	if err != nil {
		return err
	}
	for _, r := range ordered {
		s.msgs = append(s.msgs, r.Message())
	}
	return nil
}

// Messages returns a copy of the session's messages.
func (s *Session) Messages() []chat.Message {
	return append([]chat.Message(nil), s.msgs...)
}

// ErrNoReply is returned when a prompt is asked for after a rendered prompt
// without the model's reply to it.
var ErrNoReply = errors.New("render: session: the model's reply to the previous prompt was not added")

// Prompt returns the next prompt. Reminders go into the newest user message
// of the new part (or, after tool results only, at the end of the results)
// and are never stored: they belong to this turn only.
func (s *Session) Prompt(reminders ...string) (string, error) {
	req := Request{Family: s.cfg.Family, Format: s.cfg.Format, Tools: s.cfg.Tools, Now: s.cfg.Now, Verbatim: s.cfg.Verbatim}
	if s.prompt == "" {
		req.Messages = s.msgs
		req.Reminders = reminders
		p, err := Prompt(req)
		if err != nil {
			return "", err
		}
		s.prompt, s.rendered = p, len(s.msgs)
		return p, nil
	}
	if s.rendered >= len(s.msgs) || s.msgs[s.rendered].Role != chat.RoleAssistant {
		return "", ErrNoReply
	}
	reply := s.msgs[s.rendered]
	newMsgs := s.msgs[s.rendered+1:]
	tail, err := s.tail(req, reply, newMsgs, reminders)
	if err != nil {
		return "", err
	}
	next := s.prompt + reply.Raw + tail
	if d := Diverge(s.prompt+reply.Raw, next); d != nil {
		return "", d // cannot happen by construction; kept as the invariant's guard
	}
	s.prompt, s.rendered = next, len(s.msgs)
	return next, nil
}

// tail renders what follows the model's reply: the template renders the
// history, the reply as a sentinel, and the new messages; everything after
// the sentinel is the tail.
func (s *Session) tail(req Request, reply chat.Message, newMsgs []chat.Message, reminders []string) (string, error) {
	var conv []chat.Message
	for _, m := range s.msgs[:s.rendered] {
		m.Raw = "" // earlier turns only give the template context
		conv = append(conv, m)
	}
	conv = append(conv, chat.Message{Role: chat.RoleAssistant, Raw: sentinel, ToolCalls: reply.ToolCalls})
	format, err := resolveFormat(req)
	if err != nil {
		return "", err
	}
	fam := s.cfg.Family
	native := fam.NativeFormat != "" && format == fam.NativeFormat
	rest := append([]chat.Message(nil), newMsgs...)
	if !req.Verbatim {
		rest = safeMessages(Request{Family: fam, Tools: req.Tools, Messages: rest}, format)
	}
	// Reminders are added after the safety pass (it would break their tags)
	// and only into the new part: what was sent is never rewritten.
	if len(reminders) > 0 {
		hasUser, hasTool := false, false
		for _, m := range rest {
			hasUser = hasUser || m.Role == chat.RoleUser
			hasTool = hasTool || m.Role == chat.RoleTool
		}
		switch {
		case !hasUser && !hasTool:
			return "", ErrNoUserMessage
		case native && !hasUser:
			rest[len(rest)-1].Content += "\n" + strings.TrimSuffix(reminderText(reminders), "\n")
		case native:
			if rest, err = WithReminders(rest, reminders...); err != nil {
				return "", err
			}
		default:
			req.Reminders = reminders // text mode: results are a user message
		}
	}
	req.Verbatim = true // the new part is already safe
	req.Messages = append(conv, rest...)
	out, err := Prompt(req)
	if err != nil {
		return "", err
	}
	i := strings.LastIndex(out, sentinel)
	if i < 0 {
		return "", fmt.Errorf("render: session: the %s template dropped the reply", s.cfg.Family.Name)
	}
	tail := out[i+len(sentinel):]
	if len(reply.ToolCalls) > 0 && fam.CallEnd != "" && strings.HasPrefix(tail, fam.EndOfTurn) {
		tail = fam.CallEnd + tail[len(fam.EndOfTurn):]
	}
	// A reply that kept its stop token already closes the turn.
	for _, stop := range append([]string{fam.CallEnd}, fam.Stop...) {
		if stop != "" && strings.HasSuffix(reply.Raw, stop) && strings.HasPrefix(tail, stop) {
			tail = tail[len(stop):]
			break
		}
	}
	return tail, nil
}

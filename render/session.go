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
	// VerifyEvery, when above 0, renders every VerifyEvery-th turn of an
	// incremental session in full as well and fails the turn with an
	// *IncrementalMismatch when the two differ (a debugging aid: it costs
	// a full render on those turns).
	VerifyEvery int
	// OwnCatalog is Request.OwnCatalog, for chat-mode sessions
	// (ChatSession); raw-mode sessions ignore it.
	OwnCatalog bool
}

// Session is the prefix builder of one session in raw mode. The first
// prompt is rendered by the family template; every later prompt is the
// previous prompt, the model's exact raw output, and the rendering of what
// came after it (the turn's closing token, results, user text, the
// generation prompt). Nothing already sent is ever re-rendered, so each
// prompt extends the previous one byte for byte and the server's KV cache
// stays valid. What follows the reply is rendered from a window of the
// conversation (see Incremental) where the template allows it, so a turn
// costs what it adds, not what came before. Not safe for concurrent use.
type Session struct {
	cfg      SessionConfig
	format   string
	tools    *Prepared
	window   bool // render tails from a window of the history (Incremental)
	msgs     []chat.Message
	prompt   strings.Builder // only ever appended to: each prompt is a prefix of the next
	rendered int             // messages covered by prompt
	turns    int
}

// sentinel stands for the model's reply while the template renders what
// follows it; it has no whitespace (templates trim) and no markup.
const sentinel = "\u27e6toolharness-reply\u27e7"

// NewSession starts a session.
func NewSession(cfg SessionConfig) (*Session, error) {
	s, err := newSession(cfg)
	if err != nil {
		return nil, err
	}
	s.window, _ = incremental(cfg.Family, s.format)
	return s, nil
}

// newSession starts a session that renders every tail in full.
func newSession(cfg SessionConfig) (*Session, error) {
	req := Request{Family: cfg.Family, Format: cfg.Format, Now: cfg.Now, Tools: cfg.Tools}
	format, err := resolveFormat(req)
	if err != nil {
		return nil, err
	}
	tools, err := newPrepared(req, format)
	if err != nil {
		return nil, err
	}
	s := &Session{cfg: cfg, format: format, tools: tools}
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
	req := Request{Family: s.cfg.Family, Format: s.format, Tools: s.cfg.Tools, Now: s.cfg.Now, Verbatim: s.cfg.Verbatim, Prepared: s.tools}
	if s.prompt.Len() == 0 {
		req.Messages = s.msgs
		req.Reminders = reminders
		p, err := Prompt(req)
		if err != nil {
			return "", err
		}
		s.prompt.WriteString(p)
		s.rendered = len(s.msgs)
		return s.prompt.String(), nil
	}
	if s.rendered >= len(s.msgs) || s.msgs[s.rendered].Role != chat.RoleAssistant {
		return "", ErrNoReply
	}
	reply := s.msgs[s.rendered]
	newMsgs := s.msgs[s.rendered+1:]
	s.turns++
	tail, err := s.tail(req, s.window, reply, newMsgs, reminders)
	if err != nil {
		return "", err
	}
	if s.window && s.cfg.VerifyEvery > 0 && s.turns%s.cfg.VerifyEvery == 0 {
		full, err := s.tail(req, false, reply, newMsgs, reminders)
		if err != nil {
			return "", err
		}
		if full != tail {
			return "", &IncrementalMismatch{Family: s.cfg.Family.Name, Turn: s.turns, Divergence: Diverge(full, tail)}
		}
	}
	// The prompt only grows: the previous prompt's bytes are never copied
	// or compared again, by construction the new prompt extends them.
	s.prompt.WriteString(reply.Raw)
	s.prompt.WriteString(tail)
	s.rendered = len(s.msgs)
	return s.prompt.String(), nil
}

// IncrementalMismatch is a turn whose incremental rendering differed from
// the full one (SessionConfig.VerifyEvery).
type IncrementalMismatch struct {
	Family string
	Turn   int
	// Divergence is where the incremental tail leaves the full one (nil
	// when it is a longer extension of it).
	Divergence *Divergence
}

func (e *IncrementalMismatch) Error() string {
	where := "it is longer"
	if e.Divergence != nil {
		where = e.Divergence.Error()
	}
	return fmt.Sprintf("render: session: turn %d of the %s template renders differently incrementally than in full: %s", e.Turn, e.Family, where)
}

// tail renders what follows the model's reply: the template renders the
// history (or a window of it), the reply as a sentinel, and the new
// messages; everything after the sentinel is the tail.
func (s *Session) tail(req Request, window bool, reply chat.Message, newMsgs []chat.Message, reminders []string) (string, error) {
	fam := s.cfg.Family
	native := fam.NativeFormat != "" && s.format == fam.NativeFormat
	rest := append([]chat.Message(nil), newMsgs...)
	if !req.Verbatim {
		rest = safeMessages(Request{Family: fam, Tools: req.Tools, Messages: rest, Prepared: req.Prepared}, s.format)
	}
	// Reminders are added after the safety pass (it would break their tags)
	// and only into the new part: what was sent is never rewritten.
	if len(reminders) > 0 {
		hasUser, hasTool := false, false
		for _, m := range rest {
			hasUser = hasUser || m.Role == chat.RoleUser
			hasTool = hasTool || m.Role == chat.RoleTool
		}
		var err error
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
	head, recent := s.msgs[:s.rendered], []chat.Message(nil)
	if window {
		head, recent = windowOf(head)
		if native && req.Prepared != nil && req.Prepared.set != nil {
			// The catalog is rendered before the reply: the tail needs
			// tools offered, not which (the probe checks it too).
			cache := *req.Prepared
			cache.set = cache.set.First()
			req.Prepared = &cache
		}
	}
	conv := make([]chat.Message, 0, len(head)+len(recent)+1+len(rest))
	for _, part := range [][]chat.Message{head, recent} {
		for _, m := range part {
			m.Raw = "" // earlier turns only give the template context
			conv = append(conv, m)
		}
	}
	conv = append(conv, chat.Message{Role: chat.RoleAssistant, Raw: sentinel, ToolCalls: reply.ToolCalls})
	req.Verbatim = true // the new part is already safe
	req.Messages = append(conv, rest...)
	out, err := Prompt(req)
	if err != nil {
		return "", err
	}
	return cutTail(fam, out, reply)
}

// cutTail is what follows the sentinel in out, less the closing token the
// reply wrote itself.
func cutTail(fam templates.Family, out string, reply chat.Message) (string, error) {
	i := strings.LastIndex(out, sentinel)
	if i < 0 {
		return "", fmt.Errorf("render: session: the %s template dropped the reply", fam.Name)
	}
	tail := out[i+len(sentinel):]
	if len(reply.ToolCalls) > 0 && fam.CallEnd != "" && strings.HasPrefix(tail, fam.EndOfTurn) {
		tail = fam.CallEnd + tail[len(fam.EndOfTurn):]
	}
	// A reply that kept its stop token already closes the turn.
	if fam.CallEnd != "" && strings.HasSuffix(reply.Raw, fam.CallEnd) && strings.HasPrefix(tail, fam.CallEnd) {
		return tail[len(fam.CallEnd):], nil
	}
	for _, stop := range fam.Stop {
		if stop != "" && strings.HasSuffix(reply.Raw, stop) && strings.HasPrefix(tail, stop) {
			return tail[len(stop):], nil
		}
	}
	return tail, nil
}

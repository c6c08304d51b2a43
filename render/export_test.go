package render

import (
	"github.com/toolharness/toolharness/chat"
)

// Clone copies a session so that a benchmark can play the same turn from
// the same state on every iteration. What a session shares between copies
// (its tool cache) is never written after it is built.
func (s *Session) Clone() *Session {
	c := &Session{cfg: s.cfg, format: s.format, tools: s.tools, window: s.window, rendered: s.rendered, turns: s.turns}
	c.msgs = append([]chat.Message(nil), s.msgs...)
	c.prompt.WriteString(s.prompt.String())
	return c
}

// Windowed reports whether s renders its tails through a window.
func (s *Session) Windowed() bool { return s.window }

// SetWindowed forces s to render through a window or in full.
func (s *Session) SetWindowed(w bool) { s.window = w }

// NewSessionWindowed starts a session that renders through a window or in
// full as told, without probing the template.
func NewSessionWindowed(cfg SessionConfig, window bool) (*Session, error) {
	s, err := newSession(cfg)
	if err != nil {
		return nil, err
	}
	s.window = window
	return s, nil
}

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

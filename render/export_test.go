package render

import "github.com/toolharness/toolharness/chat"

// Clone copies a session so that a benchmark can play the same turn from
// the same state on every iteration. What a session shares between copies
// must never be written after it is built.
func (s *Session) Clone() *Session {
	c := *s
	c.msgs = append([]chat.Message(nil), s.msgs...)
	return &c
}

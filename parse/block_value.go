package parse

import (
	"bytes"
	"math"
)

// A block's value: where it ends, read whole at the points where it may
// have ended (valueEnd) or followed byte by byte (track), and the lane
// state that says when Feed's value lane hands a chunk to valueChunk.

// insideString reports whether a JSON (or Python) value that starts with
// s ends inside a string.
func insideString(s []byte) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c == '"' || c == '\'' {
			end, ok := skipString(s, i)
			if !ok {
				return true
			}
			i = end - 1
		}
	}
	return false
}

// skipString returns the index after the string whose opening quote is
// s[i] (" or ', backslash escapes); ok is false when it does not end in
// s.
func skipString[T text](s T, i int) (end int, ok bool) {
	q := s[i]
	for j := i + 1; j < len(s); j++ {
		switch s[j] {
		case '\\':
			j++
		case q:
			return j + 1, true
		}
	}
	return len(s), false
}

// valueEnd returns the index after the JSON value of a jsonInTag block,
// or -1 if it has not ended yet. Nearly every such value is one plain call
// object followed by the closing marker; its end is where the fast path,
// which reads and compacts it, finishes, so the value is read once rather
// than tracked byte by byte and read again. The read is tried when the
// value may be over: at a '<' (a closing marker may start), at the end of
// the output, or once proseAfterValue bytes followed the last closing
// bracket (prose after a call left unclosed, which should not wait for
// the end of the output to be text again). now says the caller saw such
// a point already. A value the fast path does not read (not plain, or not
// all there: a '<' inside a string) makes the block slow: track follows
// the value from its start, as for any other value, and its end is the
// same either way.
func (b *block) valueEnd(eof, now bool) int {
	if !b.slow {
		buf := b.buf
		if !now && !eof {
			seen := buf[b.seen:]
			b.seen = len(buf)
			if bytes.IndexByte(seen, '<') < 0 {
				for k := len(seen) - 1; k >= 0; k-- {
					if valueMark[seen[k]] == markClosing {
						b.lastClose = len(buf) - len(seen) + k + 1
						break
					}
				}
				if b.lastClose == 0 || len(buf)-b.lastClose <= proseAfterValue {
					return -1
				}
			}
		}
		if f, ok := readFastObject(b.ar, buf, b.vpos, b.keys); ok {
			b.pre, b.preOK = f, true
			return f.end
		}
		b.slow = true
	}
	end := b.track()
	if len(b.op.closerB) > 0 {
		if k := b.cutAtCloser(end); k >= 0 {
			// The value ends where its block does.
			return k
		}
	}
	return end
}

// setLane sets inValue to on and, when on, what sends a lane chunk on
// to valueMayEnd: slow, a closing bracket (track); else a '<', or
// proseAfterValue bytes after the last closing bracket (valueEnd).
func (b *block) setLane(on bool) {
	b.inValue = on
	b.laneMask, b.laneUntil = markLess, math.MaxInt
	if b.slow {
		// A '<' may start the closing marker inside a value a brace
		// short (cutAtCloser).
		b.laneMask = markClosing | markLess
	} else if b.lastClose > 0 {
		b.laneUntil = b.lastClose + proseAfterValue
	}
}

// laneOn turns Feed's lane on for a block whose call start is out, where
// it can take the next chunks: inside a JSON value (setLane), or in a
// block ended by its closing marker with no part of a marker pending,
// when the closer (and the opener, where a repeat ends the block) starts
// with '<': a chunk without one changes nothing but where findEnd looks
// next (qwen3-coder's <tool_call>).
func (b *block) laneOn() {
	switch {
	case b.jmode == 1 && b.jend == 0:
		b.setLane(true)
	case b.endLane():
		b.inValue, b.laneMask, b.laneUntil = true, markLess, math.MaxInt
	default:
		b.inValue = false
	}
}

// endLane: the block can take the end lane (laneOn).
func (b *block) endLane() bool {
	return b.scanFrom >= len(b.buf) && b.scanFrom > b.vstart && b.findsEnd() && b.op.closerB[0] == '<' &&
		(!b.op.reopen || len(b.op.markerB) == 0 || b.op.markerB[0] == '<')
}

// closingAt notes a closing bracket that ends at n.
func (b *block) closingAt(n int) {
	b.lastClose = n
	if !b.slow {
		b.laneUntil = n + proseAfterValue
	}
}

// proseAfterValue is how many bytes after a closing bracket valueEnd waits
// for a '<' before it reads the value.
const proseAfterValue = 64

// track follows brackets and quotes of a JSON or Python value from vpos
// and returns the index just after the value, or -1.
func (b *block) track() int {
	// The state lives in locals while scanning (a field load and store
	// per byte was half the cost) and goes back to the block at the end.
	buf := b.buf
	quote, esc, depth := b.quote, b.esc, b.depth
	i := b.vpos
	for ; i < len(buf); i++ {
		if quote != 0 {
			if !esc {
				// Skip the bytes that change nothing.
				for i < len(buf) && !inQuoteSpecial[buf[i]] {
					i++
				}
				if i >= len(buf) {
					break
				}
			}
			c := buf[i]
			switch {
			case esc:
				esc = false
			case c == '\\':
				esc = true
			case c == quote:
				quote = 0
				if depth == 0 {
					// A string value (arguments written as a
					// JSON string) ends with its quote.
					b.quote, b.esc, b.depth, b.vpos = 0, false, 0, i+1
					return i + 1
				}
			}
			continue
		}
		for i < len(buf) && !valueSpecial[buf[i]] {
			i++
		}
		if i >= len(buf) {
			break
		}
		switch c := buf[i]; c {
		case '"', '\'':
			quote = c
		case '{', '[', '(':
			depth++
		case '}', ']', ')':
			depth--
			if depth <= 0 {
				b.quote, b.esc, b.depth, b.vpos = quote, esc, depth, i+1
				return i + 1
			}
		}
	}
	b.quote, b.esc, b.depth, b.vpos = quote, esc, depth, len(buf)
	return -1
}

// valueSpecial marks the bytes track looks at outside strings, and
// inQuoteSpecial those it looks at inside one.
// trackSpecial is their union (1, so that a chunk's bytes can be ORed
// without a branch): bytes outside it never change track's state (except
// the one after a backslash). It marks '<' with 2: it changes nothing for
// track, but may start the closing marker inside a value (cutAtCloser).
var valueSpecial, inQuoteSpecial, trackSpecial = func() (v, q [256]bool, t [256]uint8) {
	for _, c := range []byte(`"'{}[]()`) {
		v[c], t[c] = true, 1
	}
	for _, c := range []byte(`"'\`) {
		q[c], t[c] = true, 1
	}
	t['<'] = 2
	return v, q, t
}()

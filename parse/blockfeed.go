package parse

import "github.com/toolharness/toolharness/chat"

// Feeding an open call block: in pieces, acting on what advance decides
// (more, done, or not a call after all), at the end of the stream, and
// the call start as soon as the name is known.

// blockPiece bounds how much of a chunk is appended to a block before
// looking for its end, so that a block ending early in a large chunk does
// not copy the rest of the chunk (cost stays linear in the input).
const blockPiece = 512

// blockFeed appends s to the open block piece by piece and acts on what
// advance decides; it returns what follows the block.
func (p *Parser) blockFeed(s string) string {
	for len(s) > 0 {
		// An unconfirmed block is decided within its first bytes; small
		// pieces keep prose full of '{' or '[' cheap.
		piece := blockPiece
		if !p.b.confirmed {
			piece = 128
		}
		n := min(len(s), piece)
		rest, done := p.blockPieceFeed(s[:n])
		if done {
			// rest is a suffix of the piece.
			return s[n-len(rest):]
		}
		s = s[n:]
	}
	return ""
}

// blockPieceFeed feeds one piece; done reports that the block is no longer
// open, and rest is the part of the piece that follows it.
func (p *Parser) blockPieceFeed(s string) (rest string, done bool) {
	b := &p.b
	old := len(b.buf)
	if old+len(s) <= cap(b.buf) {
		// Reslicing in place writes only the length: no GC write
		// barrier on every small chunk, as append's store would have.
		b.buf = b.buf[:old+len(s)]
		copy(b.buf[old:], s)
	} else {
		b.buf = append(b.buf, s...)
	}
	p.pos += len(s)
	st, end := b.advance(false)
	return p.blockStep(st, end, old, s)
}

// blockStep acts on what advance decided for the piece s, appended to
// the block at old.
func (p *Parser) blockStep(st status, end, old int, s string) (rest string, done bool) {
	b := &p.b
	switch st {
	case stMore:
		p.early(old)
		return "", false
	case stDone:
		p.pos = b.start + end
		if end >= old {
			p.finish(end, false)
			return s[end-old:], true
		}
		back := string(b.buf[end:old])
		p.finish(end, false)
		p.feed(back, false)
		return s, true
	default: // stReject
		p.reject(old)
		return s, true
	}
}

// reject turns a tentative block back into text: its first byte is
// content and everything after it is scanned again. Only bytes before old
// (those fed earlier) are rescanned here; the caller continues with the
// rest.
func (p *Parser) reject(old int) {
	b := &p.b
	if b.op.kind == kBare {
		// No marker: the bytes fed before this piece are prose
		// (scanned again, no bare call can start now), and the caller
		// goes on with the piece.
		p.inBlock = false
		p.pos = b.start
		if old > 0 {
			p.feed(string(b.buf[:old]), false)
		}
		return
	}
	m := b.op.marker
	n := b.rejectLen()
	p.inBlock = false
	p.pos = b.start + n
	var again string
	if old <= len(m) {
		again = m[n:max(old, n)]
	} else {
		again = string(b.buf[n:old])
	}
	p.rejectText(m[:n], false)
	p.feed(again, false)
}

// rejectLen is how much of a rejected block's marker is text for sure: a
// fence's three backticks and a harmony marker (no marker starts inside
// them, and they stay one text event), one byte of any other marker,
// after which another may start.
func (b *block) rejectLen() int {
	if (b.op.kind == kFence || b.op.kind == kHarmony) && len(b.buf) >= len(b.op.marker) {
		return len(b.op.marker)
	}
	return 1
}

// blockEOF ends the open block at end of stream.
func (p *Parser) blockEOF() {
	b := &p.b
	st, end := b.advance(true)
	switch st {
	case stReject:
		if b.op.kind == kBare {
			p.inBlock = false
			p.pos = b.start
			p.feed(string(b.buf), true)
			return
		}
		n := b.rejectLen()
		again := string(b.buf[n:])
		p.inBlock = false
		p.pos = b.start + n
		p.rejectText(b.op.marker[:n], true)
		p.feed(again, true)
	default:
		if st == stMore {
			// advance always decides at eof; should it not, the
			// block ends here rather than being scanned again forever.
			end = len(b.buf)
		}
		back := string(b.buf[end:])
		p.pos = b.start + end
		p.finish(end, true)
		p.feed(back, true)
	}
}

// early emits the call start of a block as soon as the tool name is known.
// buf[old:] are the bytes fed since the last call.
func (p *Parser) early(old int) {
	b := &p.b
	if b.startSent || !b.confirmed || b.earlyDone {
		return
	}
	if b.markerless() && p.tools == nil || p.fenced && b.op.tentative {
		// Only the decoded block tells (finish).
		return
	}
	if b.jmode == 1 && b.fast && !b.slow && b.leading == vNo && b.jend == 0 {
		// A call object that does not start with its name, whose end
		// is not known yet (valueEnd reads it at a '<'): a name found
		// now may lie after the value ({}"name": …), so finish, which
		// knows the value, sends the call start.
		return
	}
	// A name the last look did not find can only be completed by the byte
	// that ends it (the closing quote or '>'), so without one among the
	// new bytes the window is not searched again: at 4-byte chunks this
	// keeps the look from rescanning the block's start on every chunk.
	if b.nameMissed && b.op.syn == nil && !hasNameEnd(b.buf[max(old, b.vstart):]) {
		if b.contentLen() > nameWindow {
			b.earlyDone = true
		}
		return
	}
	name, ok := b.scanName(p.tools)
	if b.contentLen() > nameWindow {
		b.earlyDone = true
	}
	if !ok {
		b.nameMissed = true
		return
	}
	if (b.op.tentative && !p.acceptable(name)) || b.op.dec == dMistral {
		// Once found, the name stays the same in every longer prefix
		// (scanName), so the answer will not change either.
		b.earlyDone = true
		return
	}
	b.startSent = true
	p.event(Event{Type: EventCallStart, Call: chat.ToolCall{ID: p.callID(p.ncalls), Name: name, Offset: b.start}})
}

package parse

import (
	"strings"

	"github.com/toolharness/toolharness/chat"
)

// The paths Feed takes before the general one, for the chunks call-dense
// output is made of: Feed's lane (inside a call's JSON value, then
// valueChunk and valueMayEnd; or, in a block that its closing marker ends,
// a chunk without a '<': laneOn), the quick cycle's (quick.go), inside a
// call block (feedBlockChunk: the name at the object's start in
// nameChunk, the closing marker coming in), and a chunk that continues a
// marker held back at the end of the last one (extendHeld). Each leaves the parser in the state the general path
// would; the format tests run every case in chunks of 1 to 7 bytes, and
// FuzzChunkInvariance any split, to hold them to that.

// extendHeld takes a chunk that continues the held marker prefix without
// completing it (`<tool` + `_ca`): what is held is still the prefix of a
// marker at the same place, so nothing is decided and nothing emitted.
func (p *Parser) extendHeld(chunk string) bool {
	n := len(p.held) + len(chunk)
	for _, k := range p.tab.byFirst[p.held[0]] {
		m := p.tab.ops[k].marker
		// The byte after the held ones first: most markers that share
		// the held byte (the turn markers after a newline) differ there.
		if n < len(m) && (chunk == "" || m[len(p.held)] == chunk[0]) && m[:len(p.held)] == p.held && m[len(p.held):n] == chunk {
			p.held = m[:n]
			p.pos += len(chunk)
			return true
		}
	}
	return false
}

// valueChunk goes on from Feed's lane (block.inValue: inside a call's
// JSON value, with its call start out) for a chunk appended at old whose
// bytes had the marks mark, or that went past laneUntil. Slow, only a
// closing bracket can end the value (track); else a '<', or enough bytes
// after the last closing bracket (valueEnd).
func (p *Parser) valueChunk(old int, mark uint8, chunk string, emit func(Event)) {
	b := &p.b
	if mark&markClosing != 0 && (p.q.on || b.jmode == 1) {
		b.closingAt(len(b.buf))
	}
	if mark&b.laneMask == 0 && len(b.buf) <= b.laneUntil {
		return
	}
	switch {
	case p.q.on:
		p.emit = emit
		if rest := p.quickArgsEnd(chunk); rest != "" {
			p.quickFeed(rest)
		}
		p.flushText()
	case p.qx.on:
		// The qwen3-coder cycle's block (quickxml.go).
		p.qxLess(old, chunk, emit)
	case b.jmode != 1:
		// The end lane (laneOn): a '<' came. The lane's chunks
		// before it had none, so findEnd need not look at them.
		b.inValue = false
		b.scanFrom = max(b.scanFrom, old)
		p.blockChunkStep(old, chunk, true, emit)
	default:
		p.valueMayEnd(old, chunk, emit)
	}
}

// valueMayEnd goes on from Feed's lane for a chunk appended at old after
// which the value may have ended (valueEnd says when).
func (p *Parser) valueMayEnd(old int, chunk string, emit func(Event)) {
	b := &p.b
	end := b.valueEnd(false, true)
	if end < 0 {
		b.setLane(true) // valueEnd may have made the block slow
		return
	}
	b.jend, b.inValue = end, false
	p.blockChunkStep(old, chunk, true, emit)
}

// nameChunk is feedBlockChunk's path for a chunk of a fast-path call
// object before its name is known: while the object reads as the start of
// {"name": "T", the value cannot have ended and no other name can be
// found first, so nothing but that reading is done, and the call start
// goes out as early would send it. It reports whether it is done with the
// chunk; when not, the general path goes on with it.
func (p *Parser) nameChunk(old int, chunk string, emit func(Event)) bool {
	b := &p.b
	if b.op.tentative || b.op.dec == dMistral || p.fenced {
		// early has more to decide for these.
		b.leading = vNo
		return false
	}
	copy(b.buf[old:], chunk)
	w := b.buf[:min(len(b.buf), b.vstart+nameWindow)]
	var name []byte
	v := vMore
	if b.nameAt > 0 {
		// Inside the name: only the new bytes can end it.
		name, v = nameEnd(w, b.nameAt, max(old, b.nameAt))
	} else {
		var at int
		name, v, at = leadingName(w[min(b.vpos, len(w)):])
		if at > 0 {
			b.nameAt = b.vpos + at
		}
	}
	if v == vMore && len(b.buf) > len(w) {
		v = vNo
	}
	b.leading = v
	switch v {
	case vMore:
		return true
	case vNo:
		return false
	}
	b.startSent = true
	p.emit = emit
	p.event(Event{Type: EventCallStart, Call: chat.ToolCall{ID: p.callID(p.ncalls), Name: catalogName(p.tools, name), Offset: b.start}})
	return false
}

// leadingName reads {"name": "T at the start of w, what jsonNameFrom finds
// first when w starts so: the name (vYes), not yet (vMore: w is a prefix
// of that shape), or w is not of that shape (vNo). at is where the name
// starts in w, once w reaches it.
func leadingName(w []byte) (name []byte, v verdict, at int) {
	i := skipWS(w, 0)
	if i < len(w) && w[i] == '{' {
		i = skipWS(w, i+1)
	} else if i < len(w) {
		return nil, vNo, 0
	}
	const key = `"name"`
	if k := min(len(w)-i, len(key)); string(w[i:i+k]) != key[:k] {
		return nil, vNo, 0
	} else if k < len(key) {
		return nil, vMore, 0
	}
	i = skipWS(w, i+len(key))
	if i < len(w) && w[i] == ':' {
		i = skipWS(w, i+1)
	} else if i < len(w) {
		return nil, vNo, 0
	}
	if i >= len(w) {
		return nil, vMore, 0
	}
	if w[i] != '"' {
		return nil, vNo, 0
	}
	i++
	if name, v = nameEnd(w, i, i); v == vNo {
		return nil, vNo, 0
	}
	return name, v, i
}

// nameEnd looks from w[from:] for the end of the name that starts at
// w[start]: the name (vYes), not yet (vMore), or no name (vNo: empty, or a
// byte jsonNameFrom does not take in one).
func nameEnd(w []byte, start, from int) ([]byte, verdict) {
	for j := from; j < len(w); j++ {
		switch w[j] {
		case '"':
			if j == start {
				return nil, vNo
			}
			return w[start:j], vYes
		case '\\', '\n':
			return nil, vNo
		}
	}
	return nil, vMore
}

// feedBlockChunk is the path of a small chunk inside a confirmed block
// (what call-dense output is made of): the chunk is appended and the
// block advanced without the layers of feed, and without touching emit
// while the block goes on and its call start is out. It reports whether
// it took the chunk.
func (p *Parser) feedBlockChunk(chunk string, emit func(Event)) bool {
	b := &p.b
	old := len(b.buf)
	if old+len(chunk) > cap(b.buf) {
		return false
	}
	b.buf = b.buf[:old+len(chunk)]
	p.pos += len(chunk)
	if b.closerAt > 0 {
		// The value is over and its closing marker is coming in.
		if k, t := len(b.buf)-b.closerAt, b.op.closer; k < len(t) {
			copy(b.buf[old:], chunk)
			if string(b.buf[b.closerAt:]) == t[:k] {
				return true
			}
		}
	}
	started := b.startSent || b.earlyDone
	if !started && b.jmode == 1 && b.jend == 0 && b.leading != vNo && b.fast && !b.slow {
		if p.nameChunk(old, chunk, emit) {
			return true
		}
		started = b.startSent
	}
	if b.jmode == 1 && b.jend == 0 {
		// Inside a call's JSON value (jsonInTag): only the value's
		// end can change anything, and, before the call start is out,
		// the end of the tool name. The chunk is copied and looked at
		// in one loop; a chunk without a quote, bracket or backslash
		// (most of a value) leaves track's state as it is, unless an
		// escape is pending, so track is not even called.
		special := copyMarked(b.buf[old:], chunk, &trackSpecial)
		if special&1 == 0 && !b.esc && (special == 0 || !b.slow) {
			if b.slow {
				b.vpos = len(b.buf)
			}
			if started {
				return true
			}
			if b.nameMissed && b.op.syn == nil && !hasNameEnd(b.buf[max(old, b.vstart):]) {
				// The name cannot have ended here: early only
				// checks how far the window has grown, and emits
				// nothing.
				p.early(old)
				return true
			}
		}
		if started {
			end := b.valueEnd(false, false)
			if end < 0 {
				b.setLane(true)
				return true
			}
			b.jend = end
		}
	} else if started && b.findsEnd() && max(b.vstart, b.scanFrom) >= old {
		// A block whose end is its closing marker (qwen3-coder's
		// <tool_call>), with no part of a marker pending: a chunk
		// without the first byte of the closer (or of the opener,
		// where a repeat ends the block) changes nothing but where
		// findEnd looks next.
		dst := b.buf[old:]
		c0, m0 := b.op.closerB[0], byte(0)
		if b.op.reopen && len(b.op.markerB) > 0 {
			m0 = b.op.markerB[0]
		}
		hit := false
		for i := 0; i < len(chunk) && i < len(dst); i++ {
			c := chunk[i]
			dst[i] = c
			hit = hit || c == c0 || c == m0
		}
		if !hit {
			b.scanFrom = len(b.buf)
			b.laneOn()
			return true
		}
	} else {
		copy(b.buf[old:], chunk)
	}
	p.blockChunkStep(old, chunk, started, emit)
	return true
}

// blockChunkStep advances the block over the chunk appended at old and
// acts on what advance decides.
func (p *Parser) blockChunkStep(old int, chunk string, started bool, emit func(Event)) {
	b := &p.b
	st, end := b.advance(false)
	if st == stMore {
		if started {
			b.laneOn()
			return
		}
	}
	p.emit = emit
	if rest, done := p.blockStep(st, end, old, chunk); done {
		p.feed(rest, false)
	}
	p.flushText()
	if p.inBlock && (b.startSent || b.earlyDone) {
		b.laneOn()
	}
}

// The marks Feed's fastest path looks for: a closing bracket, at which a value may
// end, and '<', with which a closing marker may start.
const (
	markClosing = 1 << iota
	markLess
)

var valueMark = func() (t [256]uint8) {
	for _, c := range []byte("}])") {
		t[c] = markClosing
	}
	t['<'] = markLess
	return t
}()

// copyMarked copies chunk into dst and returns the OR of the marks of its
// bytes: one loop where copy and a scan would be two.
func copyMarked(dst []byte, chunk string, marks *[256]uint8) uint8 {
	dst = dst[:len(chunk)]
	var m uint8
	for i := 0; i < len(chunk); i++ {
		c := chunk[i]
		dst[i] = c
		m |= marks[c]
	}
	return m
}

// nlProse is Feed's path for a chunk of prose, with nothing held, whose
// only marker bytes are newlines (classOf gave cNL): the chunk goes out as
// text when no newline in it is followed by a turn marker's second byte,
// a newline at its end held as nlText holds it. It is anyFirst's newline
// check and nlText in one pass over the newlines, with the same outcome
// as the two in turn; false leaves the chunk to the general path.
func (p *Parser) nlProse(chunk string, emit func(Event)) bool {
	t := p.tab
	if t.nlBeforeNext(chunk) {
		return false
	}
	last := len(chunk) - 1
	if chunk[last] == '\n' {
		if p.noNLText || p.part == PartFraming {
			return false
		}
		p.nlChunks++
		chunk, p.held = chunk[:last], t.nl
	}
	p.pos += last + 1
	if chunk != "" {
		emit(Event{Type: EventText, Part: p.part, Text: chunk})
	}
	return true
}

// nlBeforeNext reports whether a newline in s, but at its end, is
// followed by a byte a turn marker has second. A token's few bytes are
// looked at one by one, where IndexByte's call would cost more.
func (t *table) nlBeforeNext(s string) bool {
	if len(s) <= 8 {
		for i := 0; i+1 < len(s); i++ {
			if s[i] == '\n' && t.nlNext[s[i+1]] {
				return true
			}
		}
		return false
	}
	last := len(s) - 1
	for i := strings.IndexByte(s, '\n'); i >= 0 && i < last; {
		if t.nlNext[s[i+1]] {
			return true
		}
		j := strings.IndexByte(s[i+1:], '\n')
		if j < 0 {
			break
		}
		i += 1 + j
	}
	return false
}

// nlText is Feed's path for a chunk of prose whose only marker bytes are
// newlines (the first byte of the plain-text turn markers, turn.go), with
// nothing or a newline held: what the general path (or the quick cycle)
// would do with it, without its scan. Every newline inside the chunk
// that is not followed by a turn marker's second byte is text; a newline
// at the chunk's end is held until the next byte decides. The held
// newline, then the chunk's text, go out as the general path sends them.
// Prose is a few percent such chunks (a token ending a line or a
// paragraph), and the general path costs them ten times a plain chunk.
func (p *Parser) nlText(chunk string, emit func(Event)) bool {
	t := p.tab
	// t.nl is "\n" where it is set: held is compared with the
	// constant, without memequal's call.
	if t.nl == "" || chunk == "" || p.noNLText || p.part == PartFraming || p.held != "" && (p.held != "\n" || t.nlNext[chunk[0]]) {
		return false
	}
	// With t.nl set, a newline is the only byte of class cNL.
	m := t.classOf(chunk)
	if m&cFast != 0 || m != 0 && t.nlBeforeNext(chunk) {
		return false
	}
	p.nlChunks++
	if p.held != "" {
		emit(Event{Type: EventText, Part: p.part, Text: p.held})
		p.held = ""
	}
	p.pos += len(chunk)
	if last := len(chunk) - 1; m != 0 && chunk[last] == '\n' {
		chunk, p.held = chunk[:last], t.nl
	}
	if chunk != "" {
		emit(Event{Type: EventText, Part: p.part, Text: chunk})
	}
	return true
}

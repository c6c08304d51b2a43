package parse

// The two paths Feed takes before the general one, for the chunks
// call-dense output is made of: a chunk inside a call block, and a chunk
// that continues a marker held back at the end of the last one. Both
// leave the parser in the state the general path would.

// extendHeld takes a chunk that continues the held marker prefix without
// completing it (`<tool` + `_ca`): what is held is still the prefix of a
// marker at the same place, so nothing is decided and nothing emitted.
func (p *Parser) extendHeld(chunk string) bool {
	n := len(p.held) + len(chunk)
	for _, k := range p.tab.byFirst[p.held[0]] {
		m := p.tab.ops[k].marker
		if n < len(m) && m[:len(p.held)] == p.held && m[len(p.held):n] == chunk {
			p.held = m[:n]
			p.pos += len(chunk)
			return true
		}
	}
	return false
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
	started := b.startSent || b.earlyDone
	if b.jmode == 1 && b.jend == 0 {
		// Inside a call's JSON value (jsonInTag): only the value's
		// end can change anything, and, before the call start is out,
		// the end of the tool name. The chunk is copied and looked at
		// in one loop; a chunk without a quote, bracket or backslash
		// (most of a value) leaves track's state as it is, unless an
		// escape is pending, so track is not even called.
		dst := b.buf[old:]
		var special uint8
		for i := 0; i < len(chunk) && i < len(dst); i++ {
			c := chunk[i]
			dst[i] = c
			special |= trackSpecial[c]
		}
		if special == 0 && !b.esc {
			b.vpos = len(b.buf)
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
			end := b.track()
			if end < 0 {
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
			return true
		}
	} else {
		copy(b.buf[old:], chunk)
	}
	st, end := b.advance(old, false)
	if st == stMore && started {
		return true
	}
	p.emit = emit
	if rest, done := p.blockStep(st, end, old, chunk); done {
		p.feed(rest, false)
	}
	p.flushText()
	p.emit = nil
	return true
}

package parse

import (
	"strings"
	"unsafe"
)

// Feed parses the next chunk of the model's output, emitting what it can
// decide already.
//
// A chunk of prose, with nothing held and no block open (lane), takes
// the prose lane: its bytes are classed once (classOf) and, with no
// marker byte among them, it is one text event. A chunk inside a call's
// JSON value takes the value lane, one inside the quick cycle's framing
// or tool name its lane. Everything else goes to the general paths,
// after which lane is worked out again (the lanes change none of the
// state it depends on).
//
// Feed itself is the lanes for a token's few bytes (up to 8), written
// out, and each chunk's state is looked at once: a chunk a lane does not
// finish goes on to the one function that takes it from where the lane
// left it. Every call is the last thing Feed does, because at a few bytes
// a chunk a call costs about as much as the lanes' work, and a function
// whose arguments live past a call saves them on entry, in every lane.
func (p *Parser) Feed(chunk string, emit func(Event)) {
	n := len(chunk)
	if p.lane {
		if uint(n-1) >= 8 {
			if n > 8 {
				p.proseLong(chunk, emit)
			}
			return
		}
		// classOf's read of up to eight bytes, written out: classOf
		// is over the compiler's budget for inlining.
		c, s := &p.tab.cls, unsafe.Pointer(unsafe.StringData(chunk))
		at := func(i int) byte { return *(*byte)(unsafe.Add(s, i)) }
		h, q := n>>1, n>>2
		m := c[at(0)] | c[at(n-1)] | c[at(h)] | c[at((n+1)>>2)] |
			c[at((n+1)>>1-1)] | c[at((n+4)>>3)] | c[at(n-1-q)] | c[at(h+q)]
		if m != 0 {
			p.proseMarked(chunk, m, emit)
			return
		}
		p.pos += n
		emit(Event{Type: EventText, Part: p.part, Text: chunk})
		return
	}
	// Inside a call's JSON value with its call start out, the bulk of
	// call-dense output, the bytes are only appended. A chunk after
	// which the value may have ended goes on to valueChunk.
	if b := &p.b; b.inValue {
		old := len(b.buf)
		if uint(n-1) >= 8 || cap(b.buf)-old < 8 {
			// (An empty chunk, which changes nothing, goes there
			// too: one compare where n == 0 would be two.)
			p.valueLong(chunk, emit)
			return
		}
		// copyMarked without its loop, into the eight bytes of room
		// past the buffer's end: up to three bytes are s[0], s[n/2] and
		// s[n-1]; up to eight, two four-byte windows that overlap. The
		// room and n <= 8 are checked above, which the compiler cannot
		// see through: pointers, not slices.
		// (Call-dense output's token lengths follow the calls'
		// pattern, which the branch predictor learns, so here the
		// branch on n < 4 costs less than the prose lane's eight
		// positions: these cost BenchmarkAgentParse's dense inputs 10
		// to 20% more time.)
		d, s := unsafe.Add(unsafe.Pointer(unsafe.SliceData(b.buf)), old), unsafe.Pointer(unsafe.StringData(chunk))
		at := func(p unsafe.Pointer, i int) *byte { return (*byte)(unsafe.Add(p, i)) }
		var mark uint8
		if n < 4 {
			x, y, z := *at(s, 0), *at(s, n>>1), *at(s, n-1)
			*at(d, 0), *at(d, n>>1), *at(d, n-1) = x, y, z
			mark = valueMark[x] | valueMark[y] | valueMark[z]
		} else {
			// Copied as arrays: one load and one store each where the
			// platform allows unaligned ones.
			*(*[4]byte)(d) = *(*[4]byte)(s)
			*(*[4]byte)(unsafe.Add(d, n-4)) = *(*[4]byte)(unsafe.Add(s, n-4))
			mark = valueMark[*at(s, 0)] | valueMark[*at(s, 1)] | valueMark[*at(s, 2)] | valueMark[*at(s, 3)] |
				valueMark[*at(s, n-4)] | valueMark[*at(s, n-3)] | valueMark[*at(s, n-2)] | valueMark[*at(s, n-1)]
		}
		setLen(&b.buf, old+n)
		p.pos += n
		if mark != 0 || old+n > b.laneUntil {
			if mark == markClosing && b.laneMask&markClosing == 0 && (p.q.on || b.jmode == 1) {
				// valueChunk's first step, for the closing brackets
				// of every call's arguments.
				b.closingAt(old + n)
				if old+n <= b.laneUntil {
					return
				}
			}
			p.valueLaneEnd(old, mark, chunk, emit)
		}
		return
	}
	q := &p.q
	if !q.on {
		if p.qx.on {
			p.qxChunk(chunk, emit)
			return
		}
		p.feedRest(chunk, emit)
		return
	}
	if q.phase == qText {
		// With the prose lane shut: a newline held.
		p.quickText(chunk, emit)
		return
	}
	// The quick cycle's lane: a chunk inside the framing, as learned, or
	// inside the tool name, only goes into the block. As in the value
	// lane, a token's bytes are read, written and compared as s[0],
	// s[m/2] and s[m-1], or as two four-byte windows that overlap,
	// through pointers after the room and size are checked once.
	b := &p.b
	old := len(b.buf)
	if uint(n-1) < 8 && cap(b.buf)-old >= 8 {
		d, s := unsafe.Add(unsafe.Pointer(unsafe.SliceData(b.buf)), old), unsafe.Pointer(unsafe.StringData(chunk))
		at := func(p unsafe.Pointer, i int) *byte { return (*byte)(unsafe.Add(p, i)) }
		if k := q.k; k < len(q.want) {
			m := min(n, len(q.want)-k) // at least 1
			w := unsafe.Add(unsafe.Pointer(unsafe.StringData(q.want)), k)
			var diff uint32
			// Parenthesised: ^ and | bind alike in Go.
			if m < 4 {
				x, y, z := *at(s, 0), *at(s, m>>1), *at(s, m-1)
				*at(d, 0), *at(d, m>>1), *at(d, m-1) = x, y, z
				diff = uint32((x ^ *at(w, 0)) | (y ^ *at(w, m>>1)) | (z ^ *at(w, m-1)))
			} else {
				// No byte's mark is needed here: the windows are
				// read, written and compared as words.
				c, e := load32(s, 0), load32(s, m-4)
				store32(d, 0, c)
				store32(d, m-4, e)
				diff = (c ^ load32(w, 0)) | (e ^ load32(w, m-4))
			}
			if diff == 0 {
				setLen(&b.buf, old+m)
				q.k = k + m
				p.pos += m
				if k+m == len(q.want) {
					p.quickFramed(chunk[m:], emit)
				}
				return
			}
		} else if q.phase == qName && old+n-len(q.open) <= maxQuickName {
			var stop uint8
			if n < 4 {
				x, y, z := *at(s, 0), *at(s, n>>1), *at(s, n-1)
				*at(d, 0), *at(d, n>>1), *at(d, n-1) = x, y, z
				stop = notPlain[x] | notPlain[y] | notPlain[z]
			} else {
				// Copied as arrays: one load and one store each where the
				// platform allows unaligned ones.
				*(*[4]byte)(d) = *(*[4]byte)(s)
				*(*[4]byte)(unsafe.Add(d, n-4)) = *(*[4]byte)(unsafe.Add(s, n-4))
				stop = notPlain[*at(s, 0)] | notPlain[*at(s, 1)] | notPlain[*at(s, 2)] | notPlain[*at(s, 3)] |
					notPlain[*at(s, n-4)] | notPlain[*at(s, n-3)] | notPlain[*at(s, n-2)] | notPlain[*at(s, n-1)]
			}
			if stop == 0 {
				setLen(&b.buf, old+n)
				p.pos += n
				return
			}
			p.quickNameEnd(chunk, emit)
			return
		}
		p.quickChunk(chunk, emit)
		return
	}
	p.quickLong(chunk, emit)
}

// quickLong is Feed's quick lane for a chunk of more than eight bytes (a
// framing string's word, such as "arguments"), or one the block's buffer
// has less than eight bytes of room for.
func (p *Parser) quickLong(chunk string, emit func(Event)) {
	q, b := &p.q, &p.b
	old, n := len(b.buf), len(chunk)
	if n > cap(b.buf)-old {
		p.quickChunk(chunk, emit)
		return
	}
	dst := b.buf[old : old+n]
	if k := q.k; k < len(q.want) {
		m := min(n, len(q.want)-k)
		if chunk[:m] != q.want[k:k+m] {
			p.quickChunk(chunk, emit)
			return
		}
		copy(dst, chunk[:m])
		b.buf = b.buf[:old+m]
		q.k = k + m
		p.pos += m
		if k+m == len(q.want) {
			p.quickFramed(chunk[m:], emit)
		}
		return
	}
	if q.phase == qName && old+n-len(q.open) <= maxQuickName {
		if copyMarked(dst, chunk, &notPlain) == 0 {
			b.buf = b.buf[:old+n]
			p.pos += n
			return
		}
		p.quickNameEnd(chunk, emit)
		return
	}
	p.quickChunk(chunk, emit)
}

// quickNameEnd is Feed's quick lane for a chunk in which the tool name may
// end: quickName reads it, and what follows the name's closing quote goes
// on to Feed's lane for the framing.
func (p *Parser) quickNameEnd(chunk string, emit func(Event)) {
	p.emit = emit
	rest := p.quickName(chunk)
	if q := &p.q; q.on && q.phase == qMid {
		p.flushText()
		if rest != "" {
			p.Feed(rest, emit)
		}
		return
	}
	// The name goes on, or the cycle stopped: quickFeed takes the rest.
	p.quickChunk(rest, emit)
}

// quickFramed goes on from Feed's quick lane after a chunk ended the
// phase's framing string, as quickFeed does; rest is what the chunk has
// after it.
func (p *Parser) quickFramed(rest string, emit func(Event)) {
	// Only the closer's step emits (the call), and only it can make the
	// prose lane open again.
	if p.q.phase != qTail {
		p.quickFramingDone()
	} else {
		p.emit = emit
		p.quickFramingDone()
		p.flushText()
		p.lane = p.proseLane()
	}
	if rest != "" {
		p.Feed(rest, emit)
	}
}

// proseLong is Feed's prose lane for a chunk of more than eight bytes.
func (p *Parser) proseLong(chunk string, emit func(Event)) {
	if m := p.tab.classOf(chunk); m != 0 {
		p.proseMarked(chunk, m, emit)
		return
	}
	p.pos += len(chunk)
	emit(Event{Type: EventText, Part: p.part, Text: chunk})
}

// proseMarked takes a prose-lane chunk with marker bytes, of classes m.
func (p *Parser) proseMarked(chunk string, m uint8, emit func(Event)) {
	switch {
	case m == cNL && p.nlProse(chunk, emit):
		p.lane = p.held == ""
	case p.q.on:
		p.quickChunk(chunk, emit)
	default:
		p.feedRest(chunk, emit)
	}
}

// valueLaneEnd is Feed's value lane for a chunk appended at old after
// which the value may have ended.
func (p *Parser) valueLaneEnd(old int, mark uint8, chunk string, emit func(Event)) {
	p.valueChunk(old, mark, chunk, emit)
	p.lane = p.proseLane()
}

// valueLong is Feed's value lane for a chunk of more than eight bytes, or
// one the block's buffer has no room for as it is, and for an empty one.
func (p *Parser) valueLong(chunk string, emit func(Event)) {
	if chunk == "" {
		return
	}
	if b := &p.b; len(b.buf)+len(chunk) <= cap(b.buf) {
		old := len(b.buf)
		b.buf = b.buf[:old+len(chunk)]
		p.pos += len(chunk)
		if mark := copyMarked(b.buf[old:], chunk, &valueMark); mark != 0 || len(b.buf) > b.laneUntil {
			p.valueLaneEnd(old, mark, chunk, emit)
		}
		return
	}
	if p.q.on {
		p.quickChunk(chunk, emit)
		return
	}
	p.feedRest(chunk, emit)
}

// quickText takes a chunk between the quick cycle's calls with the prose
// lane shut (a newline held, or lanes off).
func (p *Parser) quickText(chunk string, emit func(Event)) {
	if q := &p.q; p.held != "" && chunk != "" && chunk[0] == q.open[0] && !p.tab.nlNext[chunk[0]] {
		// A newline held after a call and the next call's opener, as
		// quickFeed takes them (the newline is text), the opener then
		// Feed's quick lane.
		emit(Event{Type: EventText, Part: p.part, Text: p.held})
		p.held = ""
		q.phase, q.want, q.k, p.b.start = qOpen, q.open, 0, p.pos
		p.b.buf = p.b.buf[:0]
		p.Feed(chunk, emit)
		return
	}
	if p.held != "" && p.nlText(chunk, emit) {
		p.lane = p.proseLane()
		return
	}
	p.quickChunk(chunk, emit)
}

// quickChunk feeds a chunk to the quick cycle.
func (p *Parser) quickChunk(chunk string, emit func(Event)) {
	p.emit = emit
	p.quickFeed(chunk)
	p.flushText()
	p.lane = p.proseLane()
}

// feedRest is Feed outside its lanes and the hermes quick cycle.
func (p *Parser) feedRest(chunk string, emit func(Event)) {
	if p.qx.on {
		p.qxChunk(chunk, emit)
		return
	}
	if p.ended {
		p.pos += len(chunk)
		if chunk != "" {
			emit(Event{Type: EventText, Part: PartOverrun, Text: chunk})
		}
		return
	}
	// Where a quick cycle stopped in prose, it goes on at the first chunk
	// that may open its next call: a chunk that takes this path with the
	// lanes on or off, so that the events (text split alike) do not
	// depend on the lanes.
	if q := &p.q; q.open != "" && !p.inBlock && strings.IndexByte(chunk, q.open[0]) >= 0 && p.quickResume() {
		p.quickChunk(chunk, emit)
		return
	}
	if q := &p.qx; q.open != "" && !p.inBlock && strings.IndexByte(chunk, q.open[0]) >= 0 && p.qxResume() {
		p.qxChunk(chunk, emit)
		return
	}
	// Only that path and blockChunkStep keep inValue: every other path
	// may change what it stands for.
	p.b.inValue = false
	if p.inBlock && p.b.confirmed && len(chunk) <= blockPiece && p.feedBlockChunk(chunk, emit) {
		if !p.inBlock || p.q.on {
			// Inside the block, lane stays false.
			p.lane = p.proseLane()
		}
		return
	}
	p.feedChunk(chunk, emit)
	p.lane = p.proseLane()
}

// load32 reads the four bytes at p+i, which the caller has checked are
// there, as one word: a lane's windows of four bytes, compared or copied
// whole where no byte's mark is needed. Written out rather than as
// binary.LittleEndian.Uint32 of a slice: the compiler makes both one load
// (on the platforms that allow unaligned ones), but the nested inlined
// calls left marker instructions (NOPs) in Feed's lanes, 0.9% of the
// hermes dense benchmark's instructions with store32's.
func load32(p unsafe.Pointer, i int) uint32 {
	b := (*[4]byte)(unsafe.Add(p, i))
	return uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24
}

// store32 writes v to the four bytes at p+i, as load32 reads them.
func store32(p unsafe.Pointer, i int, v uint32) {
	b := (*[4]byte)(unsafe.Add(p, i))
	b[0], b[1], b[2], b[3] = byte(v), byte(v>>8), byte(v>>16), byte(v>>24)
}

// setLen sets len(*s) to n, which the caller has checked is at most
// cap(*s). The lanes check the room for up to eight bytes once, which the
// compiler cannot carry to a reslice: its bounds check is two of a lane's
// few dozen instructions.
func setLen(s *[]byte, n int) {
	(*struct {
		data     unsafe.Pointer
		len, cap int
	})(unsafe.Pointer(s)).len = n
}

// notPlain is 1 for the bytes plainByte does not mark: ORed, where the
// && of plainByte's would be a branch per byte.
var notPlain = func() (t [256]uint8) {
	for c := range t {
		if !plainByte[c] {
			t[c] = 1
		}
	}
	return t
}()

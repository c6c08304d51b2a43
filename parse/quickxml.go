package parse

import (
	"math"
	"strings"

	"github.com/toolharness/toolharness/chat"
)

// The qwen3-coder quick cycle: call-dense qwen3-coder output is one
// framing again and again (`<tool_call>\n<function=`, the name, `>`, the
// parameters, `</tool_call>`), and the general path spends most of a
// call's cost on its markers: the opening marker held back chunk by
// chunk, the name looked for at every '>', and every '<' of the
// parameter tags tried as the closing marker through advance and
// findEnd. What the general path decides about such a block is only
// where its call start goes out (at the '>' after the name) and where
// the block ends (the closing marker, or a repeat of the opening one);
// the parameters are read by finish. So once a block of that framing
// went through the general path, the next ones are matched against it
// byte for byte up to the name, the call start goes out at the '>', the
// block's bytes are taken looking only at each '<' for the closing
// marker, and finish, the general path's own, reads the block: its
// arguments, repairs and errors are the general path's by construction.
//
// The first byte that differs from the framing (prose with a marker
// byte, another tag before the name, a byte a name does not take, a
// repeat of the opening marker) ends the cycle: what it took of the
// current block is fed to the general path, which arrives where it
// would have been had it read those bytes itself; the call start the
// cycle sent already is the one event it then does not send again
// (drop). Once the general path is back where the cycle's prose phase
// stands (no block open, nothing held but a newline), the cycle goes on
// at the first chunk that may open its next call (feedRest).
// TestQuickXMLMatchesGeneral holds it to the general path's events, byte
// by byte.

type qxPhase uint8

const (
	qxText qxPhase = iota // between calls: text without marker bytes
	qxOpen                // the opening marker and what follows it up to the name
	qxName                // the tool name, up to '>'
	qxBody                // from the '>' to the end of the closing marker
)

// quickXML is the state of the qwen3-coder quick cycle.
type quickXML struct {
	on    bool
	phase qxPhase
	// open is the framing up to the name, a substring of the Raw text
	// of the call it was learned from; k is how much of it has been
	// matched (and is in the block's buffer), start where it started.
	// op is the block's opener (an index into the table's openers).
	open     string
	k, start int
	op       int
	// from is where the next '<' is looked for in the block's buffer.
	from int
	// nameTo is where the name ends in the block's buffer; started says
	// the call start of the block went out.
	nameTo  int
	started bool
	// tool is the catalog entry of the last name the cycle looked up.
	tool *toolSchema
	// calls counts the blocks the cycle finished (tests, profiles).
	calls int
}

// qxNameByte marks the bytes of a name the cycle reads: what qwenName
// would take and keep as it is (no whitespace to trim, none of ">\n<").
var qxNameByte = func() (t [256]bool) {
	for c := 0x21; c < 0x80; c++ {
		t[c] = c != '<' && c != '>' && c != 0x7f
	}
	return t
}()

// learnQuickXML starts the cycle after the general path emitted c, the
// only call of the block just finished with raw as its text, when the
// block is one clean call in a framing the cycle can match: a closed tag
// block whose closing marker (and opening one, where a repeat ends the
// block) starts with '<', and whose content starts with <function=NAME>.
func (p *Parser) learnQuickXML(raw string, c dcall, extra repairs) {
	b := &p.b
	o := b.op
	if p.noQuick || p.q.on || o.kind != kTag || o.tentative || o.syn != nil || o.trailer != "" ||
		(o.dec != dToolCall && o.dec != dQwenCoder) || len(o.closerB) == 0 || o.closerB[0] != '<' ||
		o.reopen && o.markerB[0] != '<' || extra != 0 || c.err != nil || c.repairs != 0 ||
		!b.closed || b.reopened || b.trailed || !b.startSent {
		return
	}
	i := skipWS(raw, len(o.marker))
	if i-len(o.marker) > 8 {
		return
	}
	i, ok := expect(raw, i, "<function=")
	if !ok {
		return
	}
	nameFrom := i
	for i < len(raw) && qxNameByte[raw[i]] {
		i++
	}
	if i == nameFrom || i-nameFrom > maxQuickName || i >= len(raw) || raw[i] != '>' || raw[nameFrom:i] != c.name {
		return
	}
	open := raw[:nameFrom]
	op := -1
	for k := range p.tab.ops {
		m := p.tab.ops[k].marker
		if &p.tab.ops[k] == o {
			op = k
		} else if strings.HasPrefix(open, m) || strings.HasPrefix(m, open) {
			// A marker the framing's bytes complete, or are still a
			// prefix of, would change what the general path decides.
			return
		}
	}
	if op < 0 {
		return
	}
	p.qx = quickXML{open: open, op: op, calls: p.qx.calls, tool: p.qx.tool}
	if p.qxClean() {
		p.qx.on = true
	}
}

// qxClean: the general path stands where the cycle's prose phase does
// (proseClean), with the cycle's framing known and no other cycle on.
func (p *Parser) qxClean() bool {
	return p.qx.open != "" && !p.q.on && p.proseClean()
}

// qxChunk is Feed while the cycle is on and its lane (Feed's, as
// inside a JSON value: a chunk of the block without a '<') did not take
// the chunk.
func (p *Parser) qxChunk(chunk string, emit func(Event)) {
	q, b := &p.qx, &p.b
	n := len(chunk)
	switch q.phase {
	case qxText:
		if p.held == "" {
			break
		}
		if p.nlText(chunk, emit) {
			// nlText emits through emit, and flushText has nothing
			// to send.
			p.lane = p.proseLane()
			return
		}
		if n > 0 && chunk[0] == q.open[0] && !p.tab.nlNext[chunk[0]] {
			// The newline held after a call and the next call's
			// opener, as betweenCalls and qxText take them: the
			// newline is text, the opener starts the framing.
			emit(Event{Type: EventText, Part: p.part, Text: p.held})
			p.held = ""
			q.phase, q.k, q.start, q.started = qxOpen, 0, p.pos, false
			b.buf = b.buf[:0]
			if n < len(q.open) && q.open[:n] == chunk {
				b.buf = append(b.buf, chunk...)
				q.k, p.pos = n, p.pos+n
				return
			}
		}
	case qxOpen:
		// A chunk inside the framing that does not complete it: only
		// matched.
		if k := q.k + n; k < len(q.open) && q.open[q.k:k] == chunk {
			b.buf = append(b.buf, chunk...)
			q.k, p.pos = k, p.pos+n
			return
		}
	case qxName:
		if n > 0 && len(b.buf)+n-len(q.open) <= maxQuickName && qxNameRun(chunk) {
			b.buf = append(b.buf, chunk...)
			p.pos += n
			return
		}
	case qxBody:
		if n <= blockPiece {
			// The bytes after a '<' that may start the closing
			// marker. A block that goes on has emitted nothing and
			// leaves the lanes as they were.
			b.buf = append(b.buf, chunk...)
			p.pos += n
			p.emit = emit
			over := p.qxEnd()
			if over == 0 && q.on && q.phase == qxBody {
				return
			}
			// What follows the block, if the chunk ended it, goes on
			// below; nothing else of the chunk does.
			chunk = chunk[n-over:]
		}
	}
	p.emit = emit
	p.qxFeed(chunk)
	p.flushText()
	p.lane = p.proseLane()
}

// qxNameRun: every byte of s is one qxName takes.
func qxNameRun(s string) bool {
	for i := 0; i < len(s); i++ {
		if !qxNameByte[s[i]] {
			return false
		}
	}
	return true
}

// qxLess goes on from Feed's lane for a chunk of the block with a '<',
// appended at old.
func (p *Parser) qxLess(old int, chunk string, emit func(Event)) {
	p.b.inValue = false
	p.qx.from = max(p.qx.from, old)
	p.emit = emit
	if over := p.qxEnd(); over > 0 {
		p.qxFeed(chunk[len(chunk)-over:])
	}
	p.flushText()
}

// qxFeed takes s while the cycle is on. What the cycle does not take
// goes to the general path up to the next byte the framing starts with,
// after which the cycle goes on where it can.
func (p *Parser) qxFeed(s string) {
	q, b := &p.qx, &p.b
	for s != "" {
		if !q.on {
			n := len(s)
			if k := strings.IndexByte(s[1:], q.open[0]); k >= 0 {
				n = k + 1
			}
			p.feed(s[:n], false)
			s = s[n:]
			p.qxResume()
			continue
		}
		switch q.phase {
		case qxText:
			s = p.qxText(s)
		case qxOpen:
			s = p.qxOpen(s)
		case qxName:
			s = p.qxName(s)
		case qxBody:
			n := min(len(s), blockPiece)
			b.buf = append(b.buf, s[:n]...)
			p.pos += n
			s = s[n-p.qxEnd():]
		}
	}
}

// qxResume turns the cycle back on, in its prose phase, once the general
// path stands where that phase does, and reports whether it is on.
func (p *Parser) qxResume() bool {
	if !p.qx.on && p.qxClean() {
		p.qx.on, p.qx.phase = true, qxText
	}
	return p.qx.on
}

// qxText takes the text before a block, as quickFeed's prose phase does,
// and returns what follows it.
func (p *Parser) qxText(s string) string {
	q := &p.qx
	var stop bool
	if s, stop = p.betweenCalls(s); stop {
		q.on = false
		return s
	}
	if s == "" {
		return ""
	}
	if s[0] != q.open[0] {
		q.on = false
		return s
	}
	q.phase, q.k, q.start, q.started = qxOpen, 0, p.pos, false
	p.b.buf = p.b.buf[:0]
	return s
}

// qxOpen matches s against the framing up to the name, into the block's
// buffer. The block opens, as the general path opened it at its marker,
// once the framing is all there.
func (p *Parser) qxOpen(s string) string {
	q, b := &p.qx, &p.b
	n := matched(q.open[q.k:], s)
	b.buf = append(b.buf, s[:n]...)
	p.pos += n
	q.k += n
	s = s[n:]
	if q.k < len(q.open) {
		if s != "" {
			p.qxStop()
		}
		return s
	}
	// open resets the buffer to the marker, the framing's first bytes,
	// in place.
	p.pos = q.start
	p.open(q.op)
	b.buf = b.buf[:len(q.open)]
	p.pos = q.start + len(q.open)
	q.phase = qxName
	return s
}

// qxName reads the tool name from s and returns what follows it: at the
// '>' after it the call start goes out, as early sends it.
func (p *Parser) qxName(s string) string {
	q, b := &p.qx, &p.b
	i := 0
	for i < len(s) && qxNameByte[s[i]] {
		i++
	}
	b.buf = append(b.buf, s[:i]...)
	p.pos += i
	s = s[i:]
	name := b.buf[len(q.open):]
	if len(name) > maxQuickName {
		p.qxStop()
		return s
	}
	if s == "" {
		return ""
	}
	if s[0] != '>' || len(name) == 0 {
		p.qxStop()
		return s
	}
	q.nameTo = len(b.buf)
	b.buf = append(b.buf, '>')
	p.pos++
	b.startSent, q.started = true, true
	var cname string
	if t := q.tool; t != nil && t.name == string(name) {
		// As in quickName: the tool of the last call, compared.
		cname = t.name
	} else if t = p.tools[string(name)]; t != nil {
		q.tool, cname = t, t.name
	} else {
		cname = string(name)
	}
	p.event(Event{Type: EventCallStart, Call: chat.ToolCall{ID: p.callID(p.ncalls), Name: cname, Offset: b.start}})
	q.phase, q.from = qxBody, len(b.buf)
	b.inValue, b.laneMask, b.laneUntil = true, markLess, math.MaxInt
	return s[1:]
}

// qxEnd looks in the block, from where it last stopped, for its end, as
// findEnd does where both markers start with '<': the block is finished
// when the closing marker is all there; a repeat of the opening marker
// ends the cycle. It returns how many of the block's last bytes follow
// the block (to be read again as what follows it).
func (p *Parser) qxEnd() int {
	q, b := &p.qx, &p.b
	buf, o := b.buf, b.op
	for i := q.from; i < len(buf); i++ {
		if buf[i] != '<' {
			continue
		}
		switch tagAt(buf, i, o.closer) {
		case vYes:
			b.inValue = false
			end := i + len(o.closer)
			over := len(buf) - end
			b.vend, b.closed = i, true
			p.pos = b.start + end
			p.finish(end, false)
			q.phase, q.started = qxText, false
			q.calls++
			return over
		case vMore:
			q.from, b.inValue = i, false
			return 0
		}
		if o.reopen {
			switch tagAt(buf, i, o.marker) {
			case vYes:
				p.qxStop()
				return 0
			case vMore:
				q.from, b.inValue = i, false
				return 0
			}
		}
	}
	// Nothing pending: Feed's lane takes the next chunks.
	q.from, b.inValue = len(buf), true
	return 0
}

// tagAt is matchAt for a tag m whose first byte is buf[i]: most tags
// differ from m in their second or third byte.
func tagAt(buf []byte, i int, m string) verdict {
	n := min(len(buf)-i, len(m))
	for j := 1; j < n; j++ {
		if buf[i+j] != m[j] {
			return vNo
		}
	}
	if n == len(m) {
		return vYes
	}
	return vMore
}

// qxStop ends the cycle: the bytes it took of a block it had not finished
// are fed to the general path.
func (p *Parser) qxStop() {
	q, b := &p.qx, &p.b
	if !q.on {
		return
	}
	q.on, b.inValue = false, false
	switch {
	case q.phase == qxText:
	case q.phase == qxOpen:
		// The framing's first k bytes, which the block's buffer holds
		// (no block is open yet): the same bytes from the framing,
		// without a copy.
		p.pos -= q.k
		b.buf = b.buf[:0]
		p.feed(q.open[:q.k], false)
	default:
		p.handBack(q.started)
	}
}

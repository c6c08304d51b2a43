package parse

import (
	"strings"

	"github.com/toolharness/toolharness/chat"
)

// The quick cycle: call-dense output is the same call framing again and
// again (`<tool_call>\n{"name": "`, the name, `", "arguments": `, the
// arguments, `}\n</tool_call>`), and the general path spends most of a
// call's cost on deciding, chunk by chunk, what that framing means. Once a
// call of that shape has gone through the general path, its framing is
// known to mean one plain call; the next calls are matched against it byte
// for byte, and only the name and the arguments are read. Quick emits the
// events the general path would, at the same points: text between calls
// as it comes, the call start at the name's closing quote, the call at the
// end of its closing marker.
//
// The first byte that differs from the framing (prose with a marker byte,
// another key, an escape in the name, a '<' inside the arguments, a
// missing closer) ends the cycle: what quick took of the current block is
// fed to the general path, which, being the same for every chunking,
// arrives where it would have been had it read those bytes itself; the
// call start quick sent already is the one event it then does not send
// again. Where prose stopped it, the cycle goes on at the first chunk that
// may open its next call (quickResume). Nothing is decided by quick that
// the general path would decide differently; TestQuickMatchesGeneral holds
// it to that, byte by byte.

type quickPhase uint8

const (
	qText quickPhase = iota // between calls: text without marker bytes
	qOpen                   // the opening marker and the object up to the name
	qName                   // the tool name
	qMid                    // from the name's closing quote to the arguments
	qArgs                   // the arguments object (Feed's lane)
	qTail                   // from the arguments' end to the end of the closer
)

// quick is the state of the quick cycle.
type quick struct {
	on    bool
	phase quickPhase
	// open, mid and tail are the framing, substrings of the Raw text of
	// the call it was learned from: the block up to the name, the name's
	// closing quote up to the arguments, and the arguments' end to the
	// block's end.
	open, mid, tail string
	// want is the framing string of the phase (qOpen, qMid, qTail: the
	// bytes must be these), k how much of it has been matched.
	want string
	k    int
	// marker is the length of the opening marker, open's start.
	marker int
	// nameTo and argsFrom are offsets in the block's buffer; args the
	// compacted arguments, in the arena.
	nameTo, argsFrom int
	args             []byte
	// started: quick emitted the current block's call start; tool is
	// the catalog entry of the last name quick looked up.
	started bool
	tool    *toolSchema
}

// maxQuickName bounds a name quick reads; longer ones go the general way.
const maxQuickName = 128

// learnQuick starts the quick cycle after the general path emitted c, the
// only call of the block just finished with raw as its text, when that
// block is one plain call in a framing quick can match: a closed tag block
// whose content is {"name": "…", "arguments": {…}} with nothing repaired.
func (p *Parser) learnQuick(raw string, c dcall, extra repairs) {
	b := &p.b
	o := b.op
	keys, fast := p.fastKeys(o)
	if p.noQuick || !fast || o.kind != kTag || o.tentative || o.syn != nil || o.closer == "" || extra != 0 ||
		c.err != nil || c.repairs != 0 || !b.closed || b.reopened || b.trailed || !b.startSent ||
		p.rs != rsNone || p.bare || p.fenced || p.tab != p.ctab {
		return
	}
	if p.tools != nil && p.tools[c.name] == nil {
		return
	}
	// The block up to the name: marker, {, "name", :, opening quote.
	i := len(o.marker)
	var ok bool
	if i, ok = expect(raw, skipWS(raw, i), "{"); !ok {
		return
	}
	for _, w := range [...]string{`"`, keys.name, `"`, ":"} {
		if i, ok = expect(raw, skipWS(raw, i), w); !ok {
			return
		}
	}
	if i, ok = expect(raw, skipWS(raw, i), `"`); !ok || i-len(o.marker) > 64 {
		return
	}
	nameFrom := i
	for i < len(raw) && plainByte[raw[i]] {
		i++
	}
	if i == nameFrom || raw[nameFrom:i] != c.name || i-nameFrom > maxQuickName {
		return
	}
	nameTo := i
	for _, w := range [...]string{`"`, ",", `"`, keys.args, `"`, ":"} {
		if i, ok = expect(raw, skipWS(raw, i), w); !ok {
			return
		}
	}
	argsFrom := skipWS(raw, i)
	if argsFrom >= len(raw) || raw[argsFrom] != '{' {
		return
	}
	args, argsTo, ok := compactValue(p.arena.room(len(raw)-argsFrom), raw, argsFrom)
	if !ok || string(args) != string(c.args) {
		return
	}
	if i, ok = expect(raw, skipWS(raw, argsTo), "}"); !ok || skipWS(raw, i) != len(raw)-len(o.closer) || !strings.HasSuffix(raw, o.closer) {
		return
	}
	if strings.IndexByte(raw[argsTo:], '<') < 0 {
		// Only a '<' makes quick read the arguments (Feed's lane).
		return
	}
	open := raw[:nameFrom]
	for k := range p.tab.ops {
		// A longer marker that the framing's bytes would go on to
		// complete, or still be a prefix of, would change what the
		// general path decides.
		if m := p.tab.ops[k].marker; &p.tab.ops[k] != o && (strings.HasPrefix(open, m) || strings.HasPrefix(m, open)) {
			return
		}
	}
	p.q = quick{on: true, open: open, mid: raw[nameTo:argsFrom], tail: raw[argsTo:], marker: len(o.marker)}
}

// expect reports whether s continues at i with w, and the index after it.
func expect(s string, i int, w string) (int, bool) {
	if len(s)-i < len(w) || s[i:i+len(w)] != w {
		return i, false
	}
	return i + len(w), true
}

// matched is the length of the common prefix of want and s.
func matched[T text](want string, s T) int {
	n := min(len(want), len(s))
	for i := 0; i < n; i++ {
		if want[i] != s[i] {
			return i
		}
	}
	return n
}

// quickFeed is Feed while the quick cycle is on (and outside its lane).
func (p *Parser) quickFeed(s string) {
	q, b := &p.q, &p.b
	for s != "" && q.on {
		switch q.phase {
		case qText:
			var stop bool
			if s, stop = p.betweenCalls(s); stop {
				q.on = false
				break
			}
			if s == "" {
				return
			}
			if s[0] != q.open[0] {
				q.on = false
				break
			}
			q.phase, q.want, q.k, b.start = qOpen, q.open, 0, p.pos
			b.buf = b.buf[:0]
		case qOpen, qMid, qTail:
			var done bool
			if s, done = p.quickMatch(s); !done {
				break
			}
			p.quickFramingDone()
		case qName:
			s = p.quickName(s)
		case qArgs:
			// Up to the first '<', where the arguments may end: the
			// block takes no more of a large chunk than that.
			n := strings.IndexByte(s, '<') + 1
			if n == 0 {
				n = len(s)
			}
			piece := s[:n]
			old := len(b.buf)
			p.quickAppend(piece)
			var mark uint8
			for _, c := range b.buf[old:] {
				mark |= valueMark[c]
			}
			if mark&markClosing != 0 {
				b.closingAt(len(b.buf))
			}
			if mark&markLess == 0 && len(b.buf) <= b.laneUntil {
				s = s[n:]
				break
			}
			// What follows the call, if the piece ended it, is the
			// piece's end: s from there on.
			s = s[n-len(p.quickArgsEnd(piece)):]
		}
	}
	if s != "" {
		p.feed(s, false)
	}
}

// betweenCalls takes, for a quick cycle between calls, the text at the
// start of s up to the first byte that may start a marker, as the general
// path takes it: a newline held back at the end of the last chunk goes
// out first, and a newline at the end of s is held (a plain-text turn
// marker may follow). It returns what is left of s; stop says the held
// newline goes on to a turn marker's second byte, which the general path
// reads, s then untouched.
func (p *Parser) betweenCalls(s string) (rest string, stop bool) {
	if p.held != "" {
		if p.tab.nlNext[s[0]] {
			return s, true
		}
		p.text(p.held)
		p.held = ""
	}
	i := 0
	for i < len(s) {
		c := s[i]
		if !p.tab.first[c] {
			i++
			continue
		}
		// A newline is a marker's first byte only before a plain-text
		// turn marker's second (turn.go); calls are written one a line.
		if c != '\n' || p.tab.nl == "" || i+1 < len(s) && p.tab.nlNext[s[i+1]] {
			break
		}
		if i+1 == len(s) {
			p.text(s[:i])
			p.held = p.tab.nl
			p.pos += i + 1
			return "", false
		}
		i++
	}
	if i > 0 {
		p.pos += i
		p.text(s[:i])
		s = s[i:]
	}
	return s, false
}

// quickMatch takes from s what continues the phase's framing string
// (want) into the block; done says it is all there. A byte that differs
// ends the cycle.
func (p *Parser) quickMatch(s string) (rest string, done bool) {
	q := &p.q
	n := matched(q.want[q.k:], s)
	p.quickAppend(s[:n])
	q.k += n
	s = s[n:]
	if q.k < len(q.want) {
		if s != "" {
			p.quickStop()
		}
		return s, false
	}
	return s, true
}

// quickFramingDone takes the step after the phase's framing string: the
// name after the opener, the arguments after the middle, the call after
// the closer.
func (p *Parser) quickFramingDone() {
	q := &p.q
	switch q.phase {
	case qOpen:
		// want is left as it is: k is at its end, so the lanes see no
		// framing left to match (a pointer write less, see
		// Parser.emit).
		p.inBlock = true
		q.phase = qName
	case qMid:
		p.quickArgs()
	case qTail:
		p.quickCall()
	}
}

// quickArgs starts the arguments, which Feed's value lane takes.
func (p *Parser) quickArgs() {
	q, b := &p.q, &p.b
	q.argsFrom, q.phase = len(b.buf), qArgs // want as in quickFramingDone
	b.slow, b.lastClose = false, 0
	b.setLane(true)
}

// quickName reads the tool name from s and returns what follows it:
// when its closing quote comes, the call start goes out, as nameChunk
// would send it.
func (p *Parser) quickName(s string) string {
	q, b := &p.q, &p.b
	i := 0
	for i < len(s) && i <= maxQuickName && plainByte[s[i]] {
		i++
	}
	if i > 0 {
		// (Most names end at the start of a chunk, `",`: append's
		// call for nothing is skipped.)
		p.quickAppend(s[:i])
		s = s[i:]
	}
	name := b.buf[len(q.open):]
	if len(name) > maxQuickName {
		p.quickStop()
		return s
	}
	if s == "" {
		return s
	}
	if s[0] != '"' || len(name) == 0 {
		p.quickStop()
		return s
	}
	cname := ""
	if t := q.tool; t != nil && t.name == string(name) {
		// Call-dense output calls one tool again and again: a
		// compare instead of a lookup.
		cname = t.name
	} else if p.tools != nil {
		if t = p.tools[string(name)]; t == nil {
			p.quickStop()
			return s
		}
		q.tool, cname = t, t.name
	} else {
		cname = string(name)
	}
	q.nameTo, q.started = len(b.buf), true
	p.event(Event{Type: EventCallStart, Call: chat.ToolCall{ID: p.callID(p.ncalls), Name: cname, Offset: b.start}})
	q.phase, q.want, q.k = qMid, q.mid, 0
	return s
}

// quickAppend adds s to the block.
func (p *Parser) quickAppend(s string) {
	p.b.buf = append(p.b.buf, s...)
	p.pos += len(s)
}

// quickArgsEnd reads the arguments once the block, whose last bytes are
// s, may hold their end (a '<' came, or Feed's lane deadline passed). It
// returns what follows the call when s completed it.
func (p *Parser) quickArgsEnd(s string) string {
	q, b := &p.q, &p.b
	if b.buf[q.argsFrom] != '{' {
		p.quickStop()
		return ""
	}
	args, j, ok := compactValue(p.arena.room(len(b.buf)-q.argsFrom), b.buf, q.argsFrom)
	after := b.buf[j:]
	n := matched(q.tail, after)
	if !ok || n < len(after) && n < len(q.tail) || len(after)-len(q.tail) > len(s) {
		p.quickStop()
		return ""
	}
	q.args = p.arena.keep(args)
	b.inValue = false
	if len(after) < len(q.tail) {
		q.phase, q.want, q.k = qTail, q.tail, len(after)
		return ""
	}
	over := len(after) - len(q.tail)
	b.buf = b.buf[:len(b.buf)-over]
	p.pos -= over
	p.quickCall()
	return s[len(s)-over:]
}

// quickCall emits the call of the block quick matched to its end.
func (p *Parser) quickCall() {
	q, b := &p.q, &p.b
	raw := p.arena.str(b.buf)
	p.event(Event{Type: EventCall, Call: chat.ToolCall{
		ID: p.callID(p.ncalls), Name: raw[len(q.open):q.nameTo], Arguments: q.args, Raw: raw, Offset: b.start,
	}})
	p.ncalls++
	p.quickCalls++
	p.inBlock = false
	b.buf = b.buf[:0]
	q.phase, q.started = qText, false // args is set again before it is read
}

// quickResume turns the quick cycle back on, in its prose phase, once the
// general path stands where that phase does: no block open, nothing held
// but a newline, no call start of the cycle's still to be dropped. Prose
// stops the cycle where a newline may start a turn marker ("\n\nH"
// before "\n\nHuman:"); without this the calls after that would go the
// general way until one of them was learned again.
func (p *Parser) quickResume() bool {
	q := &p.q
	if !q.on && q.open != "" && !p.qx.on && !p.drop && p.proseClean() {
		q.on, q.phase, q.want, q.k, q.started, q.args = true, qText, "", 0, false, nil
	}
	return q.on
}

// proseClean: the general path stands where a quick cycle's prose phase
// does: no block open, nothing held but a newline, no reasoning, bare
// call or fence under way, the turn not ended, the content's table on.
func (p *Parser) proseClean() bool {
	return !p.inBlock && (p.held == "" || p.held == p.tab.nl) && p.rs == rsNone && !p.bare &&
		!p.fenced && !p.ended && p.tab == p.ctab && !p.b.inValue
}

// quickStop ends the quick cycle: the bytes it took of a block it had not
// finished are fed to the general path.
func (p *Parser) quickStop() {
	q, b := &p.q, &p.b
	if !q.on {
		return
	}
	q.on = false
	b.inValue = false
	switch {
	case q.phase == qText:
	case q.phase == qOpen && q.k <= q.marker:
		// Only a marker's prefix, which the general path holds: the
		// same bytes from the framing, without a copy.
		p.pos -= q.k
		b.buf = b.buf[:0]
		p.feed(q.open[:q.k], false)
	default:
		p.handBack(q.started)
	}
}

// handBack feeds the block a quick cycle took so far to the general path,
// from the block's start; started says the cycle sent the block's call
// start, which the general path then does not send again.
func (p *Parser) handBack(started bool) {
	b := &p.b
	s := string(b.buf)
	p.pos, p.inBlock = b.start, false
	b.buf = b.buf[:0]
	if started {
		p.drop, p.dropN = true, p.ncalls
	}
	p.feed(s, false)
}

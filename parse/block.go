package parse

import (
	"bytes"
	"math"
)

// nameWindow bounds how far into a block the tool name is looked for while
// it streams, so that looking costs O(1) per chunk.
const nameWindow = 512

type status uint8

const (
	stMore status = iota
	stDone
	stReject
)

type verdict uint8

const (
	vMore verdict = iota
	vYes
	vNo
)

// block is the call block being assembled. Its memory is the only one
// that grows with the output, and only with the current call.
type block struct {
	op    *opener
	start int
	buf   []byte

	confirmed bool
	// sub is the decoder chosen from the content (brackets, fences).
	sub decoder
	// name is the tool name when the opener syntax gives it (pythonic,
	// harmony, mistral name[ARGS]).
	name string
	// vstart is where the content starts; vend where the value or
	// content ends (before a closer or trailer).
	vstart, vend int
	// value tracking
	phase uint8 // 0 value, 1 trailer
	vpos  int
	depth int
	quote byte
	esc   bool

	// jmode: 0 undecided, 1 the tag holds a JSON value that is tracked,
	// 2 plain content; jend is where that value ended (0: not yet).
	jmode uint8
	jend  int
	// inValue: jmode 1 before jend, with the call start out (or no
	// longer looked for): what Feed's lane needs. A lane chunk goes on
	// to valueMayEnd when it has a byte of laneMask (valueMark) or
	// takes buf past laneUntil (setLane).
	inValue   bool
	laneMask  uint8
	laneUntil int
	// How valueEnd finds the end of a jmode 1 value (see there). keys
	// are the call object's keys, fast says the value can be read by
	// the fast path; slow says it is tracked instead. seen is how far
	// valueEnd looked, lastClose where the last closing bracket it saw
	// ended. pre is what the fast path read of the value at vpos (which
	// only track moves), when preOK.
	keys            objectKeys
	fast, slow      bool
	seen, lastClose int
	ar              *arena
	pre             fastObject
	preOK           bool
	// leading is what nameChunk read of the call object so far, nameAt
	// where the name starts once it got that far.
	leading verdict
	nameAt  int
	// closerAt is where jsonInTag saw the closing marker start, while it
	// is not all there.
	closerAt int
	// jstart is where a jsonInTag value starts; closeFrom is where
	// cutAtCloser looks for the closing marker next.
	jstart, closeFrom int

	closed, reopened, trailed bool
	startSent, earlyDone      bool
	// nameMissed: scanName has looked for the name and not found it.
	nameMissed bool
	// unbracketed: a fence holds a Python call without list brackets.
	unbracketed bool
	// nameFrom is where scanName's next look at a JSON call starts
	// (jsonNameFrom); scanFrom where findEnd's does.
	nameFrom, scanFrom int
}

// hasNameEnd reports whether s holds a byte that ends a tool name scanName
// can find: the closing quote of a JSON string or XML attribute, the '>'
// of <function=…>.
func hasNameEnd(s []byte) bool {
	for _, c := range s {
		if c == '"' || c == '\'' || c == '>' {
			return true
		}
	}
	return false
}

func (b *block) reset(op *opener, start int) {
	buf, ar := b.buf[:0], b.ar
	*b = block{op: op, start: start, buf: buf, ar: ar}
}

func (b *block) contentLen() int { return len(b.buf) - b.vstart }

// markerless: the block's call has no marker of its own (a bare call, a
// Python call alone in a fence), so that without a catalog only a
// clean reading makes it a call.
func (b *block) markerless() bool { return b.op.kind == kBare || b.unbracketed }

// advance says whether the block goes on, ended (at end, a buf index), or
// was not a call after all, reading the block's bytes from where its own
// state (the value's tracked position, or findEnd's search) left off.
// With eof nothing follows buf.
func (b *block) advance(eof bool) (status, int) {
	if !b.confirmed {
		switch b.confirm(eof) {
		case vMore:
			return stMore, 0
		case vNo:
			return stReject, 0
		}
		b.confirmed = true
	}
	switch b.op.kind {
	case kTag, kFence, kHarmony:
		if b.phase == 1 {
			return b.trailer(eof)
		}
		if b.op.kind == kTag && b.op.reopen && b.op.closer != "" && b.jsonContent() && b.jmode != 2 {
			if st, end, ok := b.jsonInTag(eof); ok {
				return st, end
			}
		}
		closer := b.op.closer
		k, r := b.findEnd()
		if r >= 0 {
			b.vend, b.reopened = r, true
			return stDone, r
		}
		if k >= 0 {
			b.vend, b.closed = k, true
			if b.op.trailer != "" {
				b.phase = 1
				return b.trailer(eof)
			}
			return stDone, k + len(closer)
		}
		if eof {
			b.vend = len(b.buf)
			return stDone, len(b.buf)
		}
		return stMore, 0
	default: // kValue, kBracket, kPrefix
		switch b.phase {
		case 1:
			return b.trailer(eof)
		case 2:
			if st, end, ok := b.nextValue(eof); ok {
				return st, end
			}
		}
		if b.vpos < b.vstart {
			b.vpos = b.vstart
		}
		for {
			end := b.track()
			if end < 0 {
				break
			}
			b.vend, b.closed = end, true
			if b.op.multi {
				b.phase = 2
				if st, end, ok := b.nextValue(eof); ok {
					return st, end
				}
				continue
			}
			if b.op.trailer != "" {
				b.phase = 1
				return b.trailer(eof)
			}
			return stDone, end
		}
		if eof {
			b.vend = len(b.buf)
			return stDone, len(b.buf)
		}
		return stMore, 0
	}
}

// findsEnd reports whether advance goes straight to findEnd: a block
// ended by a closing marker, its content not tracked as JSON, and not
// past its closer.
func (b *block) findsEnd() bool {
	switch b.op.kind {
	case kTag, kFence, kHarmony:
	default:
		return false
	}
	if b.phase == 1 || len(b.op.closerB) == 0 {
		return false
	}
	return !(b.op.kind == kTag && b.op.reopen && b.jsonContent() && b.jmode != 2)
}

// jsonContent: the block's calls are JSON values (so that what follows
// the value tells whether the closing marker was left out).
func (b *block) jsonContent() bool {
	switch b.op.dec {
	case dJSON, dToolCall:
		return true
	case dSyntax:
		return !b.op.section && (b.op.syn.Body == BodyJSON || b.op.syn.Body == BodyJSONList)
	}
	return false
}

// nextValue decides, after a value of a multi block, whether another
// follows.
func (b *block) nextValue(eof bool) (status, int, bool) {
	if b.op.kind == kBare {
		if b.sub != dPythonic {
			return stDone, b.vend, true
		}
		return b.anotherBare(eof)
	}
	return b.another(eof)
}

// another decides, after a value of a multi block, whether one more
// value follows (only whitespace or a comma between): ok is false when
// one does and tracking goes on from it.
func (b *block) another(eof bool) (status, int, bool) {
	j := skipWS(b.buf, b.vend)
	if j < len(b.buf) && b.buf[j] == ',' {
		j = skipWS(b.buf, j+1)
	}
	if j-b.vend > 64 {
		return stDone, b.vend, true
	}
	if j >= len(b.buf) {
		if eof {
			return stDone, b.vend, true
		}
		return stMore, 0, true
	}
	if c := b.buf[j]; c != '{' && c != '[' {
		return stDone, b.vend, true
	}
	b.phase, b.vpos, b.depth, b.closed = 0, j, 0, false
	return 0, 0, false
}

// jsonInTag handles a lenient tag block whose content is a JSON value:
// after the value only the closing marker may follow; anything else ends
// the block there (missing_close_tag), so prose after an unclosed call
// stays content. ok is false when the content is not JSON.
func (b *block) jsonInTag(eof bool) (status, int, bool) {
	buf := b.buf
	if b.jmode == 0 {
		j := skipWS(buf, b.vstart)
		if j >= len(buf) {
			if eof {
				return 0, 0, false
			}
			return stMore, 0, true
		}
		if buf[j] != '{' && buf[j] != '[' {
			b.jmode = 2
			return 0, 0, false
		}
		b.jmode, b.vpos, b.seen, b.jstart, b.closeFrom = 1, j, j, j, j
		b.slow = !b.fast || buf[j] != '{'
	}
	if b.jend == 0 {
		end := b.valueEnd(eof, false)
		if end < 0 {
			if eof {
				b.vend = len(buf)
				return stDone, len(buf), true
			}
			return stMore, 0, true
		}
		b.jend = end
	}
	t := b.op.closer
	j := skipWS(buf, b.jend)
	if st, end, ok := b.extraClosers(j, eof); ok {
		return st, end, true
	}
	rem := len(buf) - j
	switch {
	case rem >= len(t) && string(buf[j:j+len(t)]) == t:
		b.vend, b.closed = j, true
		return stDone, j + len(t), true
	case rem < len(t) && string(buf[j:]) == t[:rem] && !eof:
		b.closerAt = j
		return stMore, 0, true
	case rem == 0 && eof:
		// The closer was a stop sequence.
		b.vend = len(buf)
		return stDone, len(buf), true
	}
	b.vend, b.reopened = b.jend, true
	return stDone, b.jend, true
}

// maxExtraClosers bounds the brackets too many that extraClosers takes
// before the closing marker.
const maxExtraClosers = 3

// extraClosers takes a call object written with a bracket or two too many
// (`{…}}}</tool_call>`): when only closing brackets and whitespace lie
// between the value's end j and the closing marker, the block ends at the
// marker, and decoding drops the brackets (missing_braces). ok is false
// when something else follows the value.
func (b *block) extraClosers(j int, eof bool) (status, int, bool) {
	buf, t := b.buf, b.op.closer
	k := j
	for n := 0; n < maxExtraClosers && k < len(buf) && (buf[k] == '}' || buf[k] == ']'); n++ {
		k = skipWS(buf, k+1)
	}
	if k == j {
		return 0, 0, false
	}
	rem := len(buf) - k
	switch {
	case rem >= len(t) && string(buf[k:k+len(t)]) == t:
		b.vend, b.closed = k, true
		return stDone, k + len(t), true
	case rem < len(t) && string(buf[k:]) == t[:rem] && !eof:
		if rem > 0 {
			b.closerAt = k
		}
		return stMore, 0, true
	case rem == 0 && eof:
		// The closer was a stop sequence.
		b.vend = len(buf)
		return stDone, len(buf), true
	}
	return 0, 0, false
}

// cutAtCloser returns where the block's closing marker starts inside a
// value that has not ended by limit (the value's end, or -1 when it has
// not ended yet), outside its strings: a call object a brace short
// (`{"name": …, "arguments": {…}</tool_call>`) ends there, and decoding
// adds the brace (missing_braces). It returns -1 when there is none.
func (b *block) cutAtCloser(limit int) int {
	buf, t := b.buf, b.op.closerB
	if limit < 0 {
		limit = len(buf)
	}
	for b.closeFrom+len(t) <= limit {
		k := bytes.Index(buf[b.closeFrom:limit], t)
		if k < 0 {
			break
		}
		k += b.closeFrom
		b.closeFrom = k + 1
		if !insideString(buf[b.jstart:k]) {
			return k
		}
	}
	b.closeFrom = max(b.closeFrom, limit-len(t)+1)
	return -1
}

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

// afterClose is where a closed block's main part ends.
func (b *block) afterClose() int {
	switch b.op.kind {
	case kTag, kFence, kHarmony:
		return b.vend + len(b.op.closer)
	}
	return b.vend
}

// trailer accepts the optional closing marker after a value that had no
// opening marker (`{…}</tool_call>`).
func (b *block) trailer(eof bool) (status, int) {
	me := b.afterClose()
	j := skipWS(b.buf, me)
	if j-me > 16 {
		return stDone, me
	}
	t := b.op.trailer
	rem := len(b.buf) - j
	if rem >= len(t) {
		if string(b.buf[j:j+len(t)]) == t {
			b.trailed = true
			return stDone, j + len(t)
		}
		return stDone, me
	}
	if !eof && string(b.buf[j:]) == t[:rem] {
		return stMore, 0
	}
	return stDone, me
}

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

// findEnd looks for the block's closing marker, and for a repeat of its
// opening one when that ends it (reopen), whichever comes first. Each
// position is looked at until it is known not to start either: scanFrom
// is the earliest position that might still (a marker cut by the end of
// the bytes so far), so a streamed chunk costs its own bytes, not a
// marker's length of old ones again.
func (b *block) findEnd() (closeAt, reopenAt int) {
	buf, cl, m := b.buf, b.op.closerB, b.op.markerB
	if !b.op.reopen {
		m = nil
	}
	pending := -1
	for i := max(b.vstart, b.scanFrom); i < len(buf); i++ {
		c := buf[i]
		if len(cl) > 0 && c == cl[0] {
			switch matchAt(buf, i, cl) {
			case vYes:
				return i, -1
			case vMore:
				pending = minPending(pending, i)
			}
		}
		if len(m) > 0 && c == m[0] {
			switch matchAt(buf, i, m) {
			case vYes:
				return -1, i
			case vMore:
				pending = minPending(pending, i)
			}
		}
	}
	if pending < 0 {
		pending = len(buf)
	}
	b.scanFrom = pending
	return -1, -1
}

func minPending(p, i int) int {
	if p < 0 {
		return i
	}
	return min(p, i)
}

// matchAt says whether m is at buf[i:] (vYes), cannot be (vNo), or may be
// once more bytes arrive (vMore).
func matchAt(buf []byte, i int, m []byte) verdict {
	rem := len(buf) - i
	if rem >= len(m) {
		if string(buf[i:i+len(m)]) == string(m) {
			return vYes
		}
		return vNo
	}
	if string(buf[i:]) == string(m[:rem]) {
		return vMore
	}
	return vNo
}

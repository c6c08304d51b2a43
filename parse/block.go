package parse

import "bytes"

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

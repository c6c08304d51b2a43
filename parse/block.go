package parse

import (
	"bytes"
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

	closed, reopened, trailed bool
	startSent, earlyDone      bool
}

func (b *block) reset(op *opener, start int) {
	buf := b.buf[:0]
	*b = block{op: op, start: start, buf: buf}
}

func (b *block) contentLen() int { return len(b.buf) - b.vstart }

func skipWS(buf []byte, i int) int {
	for i < len(buf) {
		switch buf[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// advance examines the bytes from old on and says whether the block goes
// on, ended (at end, a buf index), or was not a call after all. With eof
// nothing follows buf.
func (b *block) advance(old int, eof bool) (status, int) {
	if !b.confirmed {
		switch b.confirm(eof) {
		case vMore:
			return stMore, 0
		case vNo:
			return stReject, 0
		}
		b.confirmed = true
		old = b.vstart
	}
	switch b.op.kind {
	case kTag, kFence, kHarmony:
		if b.phase == 1 {
			return b.trailer(eof)
		}
		if b.op.kind == kTag && b.op.reopen && (b.op.dec == dJSON || b.op.dec == dToolCall) && b.jmode != 2 {
			if st, end, ok := b.jsonInTag(eof); ok {
				return st, end
			}
		}
		closer := b.op.closer
		from := max(b.vstart, old-len(closer)+1)
		k := bytes.Index(b.buf[from:], []byte(closer))
		if k >= 0 {
			k += from
		}
		if b.op.reopen {
			m := b.op.marker
			f2 := max(b.vstart, old-len(m)+1)
			if r := bytes.Index(b.buf[f2:], []byte(m)); r >= 0 && (k < 0 || r+f2 < k) {
				b.vend, b.reopened = r+f2, true
				return stDone, r + f2
			}
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
		if b.phase == 1 {
			return b.trailer(eof)
		}
		if b.vpos < b.vstart {
			b.vpos = b.vstart
		}
		if end := b.track(); end >= 0 {
			b.vend, b.closed = end, true
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
		b.jmode, b.vpos = 1, j
	}
	if b.jend == 0 {
		end := b.track()
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
	rem := len(buf) - j
	switch {
	case rem >= len(t) && string(buf[j:j+len(t)]) == t:
		b.vend, b.closed = j, true
		return stDone, j + len(t), true
	case rem < len(t) && string(buf[j:]) == t[:rem] && !eof:
		return stMore, 0, true
	case rem == 0 && eof:
		// The closer was a stop sequence.
		b.vend = len(buf)
		return stDone, len(buf), true
	}
	b.vend, b.reopened = b.jend, true
	return stDone, b.jend, true
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

// track follows brackets and quotes of a JSON or Python value from vpos
// and returns the index just after the value, or -1.
func (b *block) track() int {
	buf := b.buf
	for i := b.vpos; i < len(buf); i++ {
		c := buf[i]
		if b.quote != 0 {
			switch {
			case b.esc:
				b.esc = false
			case c == '\\':
				b.esc = true
			case c == b.quote:
				b.quote = 0
			}
			continue
		}
		switch c {
		case '"', '\'':
			b.quote = c
		case '{', '[', '(':
			b.depth++
		case '}', ']', ')':
			b.depth--
			if b.depth <= 0 {
				b.vpos = i + 1
				return i + 1
			}
		}
	}
	b.vpos = len(buf)
	return -1
}

var callKeys = map[string]bool{
	"name": true, "function": true, "tool_call": true, "tool_calls": true, "tool": true,
	"tool_name": true, "type": true, "function_call": true, "id": true,
}

// confirm decides, from as few bytes as possible, whether a tentative
// block can hold a call. The answer depends only on the bytes, never on
// how they were chunked.
func (b *block) confirm(eof bool) verdict {
	v := b.confirm1()
	if v == vMore && eof {
		return vNo
	}
	return v
}

func (b *block) confirm1() verdict {
	buf, m := b.buf, b.op.marker
	switch b.op.kind {
	case kTag:
		j := skipWS(buf, len(m))
		if j >= len(buf) {
			return vMore
		}
		if bytes.IndexByte([]byte(b.op.first), buf[j]) < 0 {
			return vNo
		}
		b.vstart = len(m)
		return vYes
	case kValue:
		b.vstart = 0
		if buf[0] == '[' {
			return b.bracket(0, true)
		}
		return callish(buf, 0)
	case kBracket:
		b.vstart = 0
		return b.bracket(0, false)
	case kPrefix:
		j := skipWS(buf, len(m))
		if j-len(m) > 64 {
			return vNo
		}
		if j >= len(buf) {
			return vMore
		}
		switch c := buf[j]; {
		case c == '{' || c == '[':
			b.vstart = j
			return vYes
		case b.op.dec == dMistral && isIdentByte(c):
			return b.mistralName(j)
		}
		return vNo
	case kFence:
		return b.fence()
	case kHarmony:
		return b.harmony()
	}
	return vNo
}

// callish: does the object at buf[i] start with a key a call object has?
func callish(buf []byte, i int) verdict {
	j := skipWS(buf, i+1)
	if j-i > 64 {
		return vNo
	}
	if j >= len(buf) {
		return vMore
	}
	q := buf[j]
	if q != '"' && q != '\'' {
		return vNo
	}
	k := j + 1
	for ; k < len(buf) && buf[k] != q; k++ {
		if k-j > 40 || buf[k] == '\\' || buf[k] == '\n' {
			return vNo
		}
	}
	if k >= len(buf) {
		return vMore
	}
	key := string(buf[j+1 : k])
	c := skipWS(buf, k+1)
	if c-k > 64 {
		return vNo
	}
	if c >= len(buf) {
		return vMore
	}
	if buf[c] != ':' || !callKeys[key] {
		return vNo
	}
	return vYes
}

// bracket: a list of call objects, or (unless jsonOnly) a pythonic list.
func (b *block) bracket(i int, jsonOnly bool) verdict {
	buf := b.buf
	j := skipWS(buf, i+1)
	if j-i > 64 {
		return vNo
	}
	if j >= len(buf) {
		return vMore
	}
	if buf[j] == '{' {
		b.sub = dJSON
		return callish(buf, j)
	}
	if jsonOnly {
		return vNo
	}
	v, name := identParen(buf, j)
	if v == vYes {
		b.sub, b.name = dPythonic, name
	}
	return v
}

// identParen: an identifier (dots allowed) and then '(' at buf[j].
func identParen(buf []byte, j int) (verdict, string) {
	if j >= len(buf) {
		return vMore, ""
	}
	if c := buf[j]; !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
		return vNo, ""
	}
	k := j
	for k < len(buf) && (isIdentByte(buf[k]) || buf[k] == '.' || buf[k] == '-') {
		if k-j > 64 {
			return vNo, ""
		}
		k++
	}
	e := k
	for k < len(buf) && (buf[k] == ' ' || buf[k] == '\t') {
		k++
	}
	if k >= len(buf) {
		return vMore, ""
	}
	if buf[k] != '(' {
		return vNo, ""
	}
	return vYes, string(buf[j:e])
}

var fenceLabels = map[string]bool{"": true, "json": true, "tool_call": true, "tool_calls": true, "tool_code": true, "jsonc": true}

func (b *block) fence() verdict {
	buf := b.buf
	nl := bytes.IndexByte(buf[3:], '\n')
	if nl < 0 {
		if len(buf)-3 > 32 {
			return vNo
		}
		for _, c := range buf[3:] {
			if !isIdentByte(c) && c != ' ' && c != '\r' {
				return vNo
			}
		}
		return vMore
	}
	nl += 3
	label := string(bytes.TrimSpace(buf[3:nl]))
	if !fenceLabels[label] {
		return vNo
	}
	j := skipWS(buf, nl+1)
	if j-nl > 64 {
		return vNo
	}
	if j >= len(buf) {
		return vMore
	}
	b.vstart = nl + 1
	switch c := buf[j]; {
	case c == '{':
		b.sub = dJSON
		return callish(buf, j)
	case c == '[':
		return b.bracket(j, false)
	case label == "tool_code":
		v, name := identParen(buf, j)
		if v == vYes {
			b.sub, b.name = dPythonic, name
		}
		return v
	}
	return vNo
}

var (
	harmonyMessage = []byte("<|message|>")
	argsMarker     = []byte("[ARGS]")
)

func (b *block) harmony() verdict {
	buf, m := b.buf, b.op.marker
	k := bytes.Index(buf[len(m):], harmonyMessage)
	if k < 0 {
		if len(buf) > 512 {
			return vNo
		}
		return vMore
	}
	header := buf[len(m) : len(m)+k]
	t := bytes.Index(header, []byte("to="))
	if t < 0 {
		return vNo
	}
	name := header[t+3:]
	if e := bytes.IndexAny(name, " \t\n<"); e >= 0 {
		name = name[:e]
	}
	name = bytes.TrimPrefix(name, []byte("functions."))
	b.name = string(name)
	b.vstart = len(m) + k + len(harmonyMessage)
	return vYes
}

// mistralName reads `name[ARGS]` or `name[CALL_ID]id[ARGS]` at buf[j].
func (b *block) mistralName(j int) verdict {
	buf := b.buf
	end := min(len(buf), j+160)
	k := bytes.Index(buf[j:end], argsMarker)
	if k < 0 {
		for _, c := range buf[j:end] {
			if !isIdentByte(c) && c != '.' && c != '-' && c != '[' && c != ']' {
				return vNo
			}
		}
		if end-j >= 160 {
			return vNo
		}
		return vMore
	}
	head := buf[j : j+k]
	for _, c := range head {
		if !isIdentByte(c) && c != '.' && c != '-' && c != '[' && c != ']' {
			return vNo
		}
	}
	if i := bytes.IndexByte(head, '['); i >= 0 {
		head = head[:i]
	}
	b.name = string(head)
	b.vstart = j + k + len(argsMarker)
	return vYes
}

// scanName finds the tool name in the first nameWindow bytes of the
// content. Once found in a prefix, the same name is found in every longer
// prefix, which keeps call-start events chunk-invariant.
func (b *block) scanName() (string, bool) {
	switch b.op.dec {
	case dTags:
		return b.op.tool, true
	case dHarmony:
		return b.name, b.name != ""
	}
	if b.name != "" {
		return b.name, true
	}
	from := b.vstart
	if from > len(b.buf) {
		return "", false
	}
	w := b.buf[from:min(len(b.buf), from+nameWindow)]
	dec := b.op.dec
	if b.op.kind == kBracket || b.op.kind == kFence || (b.op.kind == kValue && b.sub == dJSON) {
		dec = b.sub
	}
	switch dec {
	case dXML:
		w = b.buf[:min(len(b.buf), b.vstart+nameWindow)]
		return attrName(w, []byte("<invoke name="))
	case dQwenCoder:
		return qwenName(w)
	case dToolCall:
		j := skipWS(w, 0)
		if j < len(w) && w[j] == '<' {
			return qwenName(w)
		}
		return jsonName(w)
	case dJSON, dMistral, dFence:
		return jsonName(w)
	}
	return "", false
}

var nameKey = []byte(`"name"`)

func jsonName(w []byte) (string, bool) {
	from := 0
	for {
		k := bytes.Index(w[from:], nameKey)
		if k < 0 {
			return "", false
		}
		k += from
		from = k + 1
		if k > 0 && w[k-1] == '\\' {
			continue
		}
		j := skipWS(w, k+len(nameKey))
		if j >= len(w) {
			return "", false
		}
		if w[j] != ':' {
			continue
		}
		j = skipWS(w, j+1)
		if j >= len(w) {
			return "", false
		}
		if w[j] != '"' {
			continue
		}
		e := j + 1
		for e < len(w) && w[e] != '"' && w[e] != '\\' && w[e] != '\n' {
			e++
		}
		if e >= len(w) {
			return "", false
		}
		if w[e] != '"' || e == j+1 {
			continue
		}
		return string(w[j+1 : e]), true
	}
}

func qwenName(w []byte) (string, bool) {
	k := bytes.Index(w, []byte("<function="))
	if k < 0 {
		return "", false
	}
	s := w[k+len("<function="):]
	e := bytes.IndexAny(s, ">\n<")
	if e <= 0 || s[e] != '>' {
		return "", false
	}
	return string(bytes.TrimSpace(s[:e])), true
}

func attrName(w, prefix []byte) (string, bool) {
	k := bytes.Index(w, prefix)
	if k < 0 {
		return "", false
	}
	s := w[k+len(prefix):]
	if len(s) < 2 || (s[0] != '"' && s[0] != '\'') {
		return "", false
	}
	e := bytes.IndexByte(s[1:], s[0])
	if e <= 0 {
		return "", false
	}
	return string(s[1 : 1+e]), true
}

package parse

import "bytes"

// This file decides, from the first bytes of a tentative block, whether it
// can hold a call, and finds the tool name while the block streams.

var callKeys = map[string]bool{
	"name": true, "function": true, "tool_call": true, "tool_calls": true, "tool": true,
	"tool_name": true, "type": true, "function_call": true, "id": true,
}

// confirm decides, from as few bytes as possible, whether a tentative
// block can hold a call. The answer depends only on the bytes, never on
// how they were chunked.
func (b *block) confirm(eof bool) verdict {
	v := b.confirm1(eof)
	if v == vMore && eof {
		return vNo
	}
	return v
}

func (b *block) confirm1(eof bool) verdict {
	if b.op.syn != nil {
		return b.confirmSyntax(eof)
	}
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
	case kBare:
		return b.confirmBare(eof)
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
	c := skipWS(buf, k+1)
	if c-k > 64 {
		return vNo
	}
	if c >= len(buf) {
		return vMore
	}
	if buf[c] != ':' || !callKeys[string(buf[j+1:k])] {
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
	// ['f(a=1)'], ['f'(a=1)]: a call or its name quoted as a string.
	v, name := callAt(buf, j)
	if v == vYes {
		b.sub, b.name = dPythonic, name
	}
	return v
}

// pythonStart: Python calls without list brackets start at buf[j]: a
// call, a quoted call, or (lenient readers only see it) a tuple of calls.
func (b *block) pythonStart(j int) verdict {
	buf := b.buf
	if j < len(buf) && buf[j] == '(' {
		k := skipWS(buf, j+1)
		if k-j > 64 {
			return vNo
		}
		j = k
	}
	v, name := callAt(buf, j)
	if v == vYes {
		b.sub, b.name = dPythonic, name
	}
	return v
}

// callAt: a Python call starts at buf[j]: name(…, or quoted, 'name(…
// (a call written as a string) or 'name'(… (its name as a string).
func callAt(buf []byte, j int) (verdict, string) {
	if j >= len(buf) {
		return vMore, ""
	}
	q := buf[j]
	if q != '\'' && q != '"' {
		return identParen(buf, j)
	}
	if v, name := identParen(buf, j+1); v != vNo {
		return v, name
	}
	k := j + 1
	for k < len(buf) && (isIdentByte(buf[k]) || buf[k] == '.' || buf[k] == '-') {
		if k-j > 64 {
			return vNo, ""
		}
		k++
	}
	if k == j+1 {
		return vNo, ""
	}
	if k >= len(buf) {
		return vMore, ""
	}
	if buf[k] != q {
		return vNo, ""
	}
	e := k
	for k++; k < len(buf) && (buf[k] == ' ' || buf[k] == '\t'); k++ {
	}
	if k >= len(buf) {
		return vMore, ""
	}
	if buf[k] != '(' || !isDottedName(string(buf[j+1:e])) {
		return vNo, ""
	}
	return vYes, string(buf[j+1 : e])
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
	escaped := false
	for k < len(buf) {
		if k-j > 64 {
			return vNo, ""
		}
		if c := buf[k]; isIdentByte(c) || c == '.' || c == '-' {
			k++
			continue
		}
		// calculate\_BMI: Markdown-escaped underscores (Mistral
		// medium, Mixtral); the decoder records the repair.
		if buf[k] == '\\' && k > j && (k+1 >= len(buf) || buf[k+1] == '_') {
			if k+1 >= len(buf) {
				return vMore, ""
			}
			escaped = true
			k += 2
			continue
		}
		break
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
	name, _ := unescapeName(string(buf[j:e]), escaped)
	return vYes, name
}

var fenceLabels = map[string]bool{"": true, "json": true, "tool_call": true, "tool_calls": true, "tool_code": true, "jsonc": true,
	"python": true, "py": true}

// jsonFenceLabels are the labels of fences that hold JSON only: the
// others may hold a Python call without list brackets.
var jsonFenceLabels = map[string]bool{"json": true, "jsonc": true, "tool_call": true, "tool_calls": true}

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
	label := bytes.TrimSpace(buf[3:nl])
	if !fenceLabels[string(label)] {
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
	case !jsonFenceLabels[string(label)]:
		v := b.pythonStart(j)
		b.unbracketed = v == vYes
		return v
	}
	return vNo
}

var (
	harmonyMessage = []byte("<|message|>")
	argsMarker     = []byte("[ARGS]")
)

// harmonyHeaderMax bounds the bytes a harmony header is looked for in: a
// block without <|message|> by then is no header.
const harmonyHeaderMax = 512

func (b *block) harmony() verdict {
	buf, m := b.buf, b.op.marker
	k := bytes.Index(buf[len(m):], harmonyMessage)
	if k < 0 {
		if len(buf) > harmonyHeaderMax {
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
//
// tools is the catalog (nil without one): a name it registers is returned
// as the catalog's string, so that finding it allocates nothing.
func (b *block) scanName(tools map[string]*toolSchema) (string, bool) {
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
	var name []byte
	ok := false
	switch dec {
	case dXML:
		w = b.buf[:min(len(b.buf), b.vstart+nameWindow)]
		name, ok = attrName(w, []byte("<invoke name="))
	case dQwenCoder:
		name, ok = qwenName(w)
	case dToolCall:
		j := skipWS(w, 0)
		switch {
		case j < len(w) && w[j] == '<':
			name, ok = qwenName(w)
		case j < len(w) && w[j] != '{' && w[j] != '[':
			name, ok = glmName(w[j:])
		default:
			name, ok, b.nameFrom = jsonNameFrom(w, min(b.nameFrom, len(w)))
		}
	case dJSON, dMistral, dFence:
		name, ok, b.nameFrom = jsonNameFrom(w, min(b.nameFrom, len(w)))
	case dSyntax:
		name, ok = b.op.syn.syntaxName(w, b.op.section)
	}
	if !ok {
		return "", false
	}
	return catalogName(tools, name), true
}

// catalogName is a name read from a block as a string: the catalog's own
// copy when it has the tool (looked up without converting), so that the
// name does not keep the block's bytes alive.
func catalogName(tools map[string]*toolSchema, name []byte) string {
	if t := tools[string(name)]; t != nil {
		return t.name
	}
	return string(name)
}

var nameKey = []byte(`"name"`)

func jsonName(w []byte) ([]byte, bool) {
	name, ok, _ := jsonNameFrom(w, 0)
	return name, ok
}

// jsonNameFrom is jsonName searching from w[from:]; resume is where a
// search of a longer w (same prefix) must start to give the same answer,
// so that looking again as a block streams does not rescan its start.
func jsonNameFrom(w []byte, from int) (name []byte, ok bool, resume int) {
	for {
		k := indexNameKey(w, from)
		if k < 0 {
			return nil, false, max(from, len(w)-len(nameKey)+1)
		}
		from = k + 1
		if k > 0 && w[k-1] == '\\' {
			continue
		}
		j := skipWS(w, k+len(nameKey))
		if j >= len(w) {
			return nil, false, k
		}
		if w[j] != ':' {
			continue
		}
		j = skipWS(w, j+1)
		if j >= len(w) {
			return nil, false, k
		}
		if w[j] != '"' {
			continue
		}
		e := j + 1
		for e < len(w) && w[e] != '"' && w[e] != '\\' && w[e] != '\n' {
			e++
		}
		if e >= len(w) {
			return nil, false, k
		}
		if w[e] != '"' || e == j+1 {
			continue
		}
		return w[j+1 : e], true, k
	}
}

// indexNameKey is bytes.Index(w[from:], nameKey)+from, or -1. The part
// left to search as a call streams is usually a chunk or two, where
// setting up bytes.Index costs more than the search: short parts get a
// plain loop.
func indexNameKey(w []byte, from int) int {
	if len(w)-from > 64 {
		if k := bytes.Index(w[from:], nameKey); k >= 0 {
			return k + from
		}
		return -1
	}
	for i := from; i+len(nameKey) <= len(w); i++ {
		if w[i] == '"' && string(w[i:i+len(nameKey)]) == string(nameKey) {
			return i
		}
	}
	return -1
}

func qwenName(w []byte) ([]byte, bool) {
	k := bytes.Index(w, []byte("<function="))
	if k < 0 {
		return nil, false
	}
	s := w[k+len("<function="):]
	e := bytes.IndexAny(s, ">\n<")
	if e <= 0 || s[e] != '>' {
		return nil, false
	}
	return bytes.TrimSpace(s[:e]), true
}

func attrName(w, prefix []byte) ([]byte, bool) {
	k := bytes.Index(w, prefix)
	if k < 0 {
		return nil, false
	}
	s := w[k+len(prefix):]
	if len(s) < 2 || (s[0] != '"' && s[0] != '\'') {
		return nil, false
	}
	e := bytes.IndexByte(s[1:], s[0])
	if e <= 0 {
		return nil, false
	}
	return s[1 : 1+e], true
}

var argKeyTag = []byte("<arg_key>")

// glmName reads the name of a GLM-4.5 call, `name` then whitespace or
// <arg_key>, at the start of w; found, it stays the same in every longer w.
func glmName(w []byte) ([]byte, bool) {
	k := 0
	for k < len(w) && isNameByte(w[k]) && w[k] != ':' && w[k] != '/' {
		if k > 64 {
			return nil, false
		}
		k++
	}
	if k == 0 {
		return nil, false
	}
	j := skipWS(w, k)
	if len(w)-j < len(argKeyTag) || !bytes.HasPrefix(w[j:], argKeyTag) {
		return nil, false
	}
	return w[:k], true
}

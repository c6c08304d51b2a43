package parse

// Bare calls: calls written with no marker at all, recognised only where
// a reply starts (after optional whitespace and a leading reasoning
// block), because that is where models that write them put them, and
// anywhere else an identifier is just prose.
//
//	pythonic, auto  get_directions(start='Sydney', end='Melbourne')   (Gorilla
//	                OpenFunctions, Raven, Mistral tiny; several separated by
//	                ", " or "; ", maybe ending in ";"), repair missing_brackets
//	glm4            get_weather\n{"location": "Paris"}   (GLM-4's own syntax;
//	                one call after another, whitespace between)
//
// The block is tentative like every markerless one: it is a call only
// when it names a registered tool (any name without a catalog), and with
// a catalog prose that starts with a word and a parenthesis stays text.

// bareOpener returns the opener of format's bare calls, or nil.
func bareOpener(format string, strict bool) *opener {
	switch format {
	case "glm4", "functionary":
		// functionary v3.2's generation prompt ends with ">>>", so a
		// server's reply starts with the name line.
		return &opener{kind: kBare, dec: dNameLine, tentative: true}
	case "pythonic":
		if !strict {
			return &opener{kind: kBare, dec: dPythonic, tentative: true, multi: true}
		}
	case "auto":
		if !strict {
			return &opener{kind: kBare, dec: dBare, tentative: true, multi: true}
		}
	}
	return nil
}

// startBare looks at the prose s while a bare call may still start: it
// emits the leading whitespace and opens a bare block at an identifier;
// it returns what is left for the prose scanner (all of s once a bare
// block was opened, the rest of s having gone into it).
func (p *Parser) startBare(s string) (rest string, opened bool) {
	i := 0
	for i < len(s) && isSpace(s[i]) {
		i++
	}
	p.pos += i
	p.text(s[:i])
	s = s[i:]
	if s == "" {
		return "", false
	}
	p.bare = false
	c := s[0]
	python := p.bareOp.dec != dNameLine && (c == '(' || c == '\'' || c == '"')
	if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || python) {
		return s, false
	}
	o := p.bareOp
	p.inBlock = true
	p.b.reset(o, p.pos)
	return s, true
}

// confirmBare decides a bare block from its first bytes.
func (b *block) confirmBare(eof bool) verdict {
	b.vstart = 0
	if b.op.dec != dNameLine {
		v := b.pythonStart(0)
		if v != vNo || b.op.dec == dPythonic {
			return v
		}
	}
	v := b.nameLine(0)
	if v == vYes {
		b.sub = dNameLine
	}
	return v
}

// nameLine reads `name\n{` at buf[j:] (GLM-4): a tool name alone on its
// line, then a JSON object.
func (b *block) nameLine(j int) verdict {
	buf := b.buf
	k := j
	for k < len(buf) && (isIdentByte(buf[k]) || buf[k] == '.' || buf[k] == '-') {
		if k-j > 64 {
			return vNo
		}
		k++
	}
	if k >= len(buf) {
		return vMore
	}
	e := k
	for k < len(buf) && (buf[k] == ' ' || buf[k] == '\t' || buf[k] == '\r') {
		k++
	}
	if k >= len(buf) {
		return vMore
	}
	if e == j || buf[k] != '\n' {
		return vNo
	}
	k = skipWS(buf, k+1)
	if k-e > 64 {
		return vNo
	}
	if k >= len(buf) {
		return vMore
	}
	if buf[k] != '{' {
		return vNo
	}
	b.name, b.vstart, b.vpos = string(buf[j:e]), k, k
	return vYes
}

// anotherBare decides, after a bare Python call, whether another one
// follows (", " or "; " between): ok is false when one does and tracking
// goes on from it. A trailing ';' belongs to the block.
func (b *block) anotherBare(eof bool) (status, int, bool) {
	buf := b.buf
	j, cont := skipPyWS(buf, b.vend)
	sep := j
	if j < len(buf) && (buf[j] == ',' || buf[j] == ';') {
		var more bool
		j, more = skipPyWS(buf, j+1)
		cont = cont || more
	}
	if j-b.vend > 64 {
		return stDone, b.vend, true
	}
	if j >= len(buf) || !eof && partialContinuation(buf, j) {
		if !eof {
			return stMore, 0, true
		}
		if sep < len(buf) && buf[sep] == ';' {
			b.vend = sep + 1
			return stDone, sep + 1, true
		}
		return stDone, b.vend, true
	}
	if sep == j && !cont {
		// No separator: what follows is not one more call.
		return stDone, b.vend, true
	}
	switch v, _ := callAt(buf, j); v {
	case vMore:
		if eof {
			return stDone, b.vend, true
		}
		return stMore, 0, true
	case vNo:
		if buf[sep] == ';' {
			b.vend = sep + 1
			return stDone, sep + 1, true
		}
		return stDone, b.vend, true
	}
	b.phase, b.vpos, b.depth, b.closed = 0, j, 0, false
	return 0, 0, false
}

// skipPyWS skips whitespace and line continuations (a backslash at the
// end of a line) from buf[j:]; cont says it skipped a continuation.
func skipPyWS(buf []byte, j int) (int, bool) {
	cont := false
	for {
		j = skipWS(buf, j)
		n := continuation(buf, j)
		if n == 0 {
			return j, cont
		}
		j, cont = j+n, true
	}
}

// partialContinuation: buf ends in the first bytes of a line
// continuation at j.
func partialContinuation(buf []byte, j int) bool {
	switch len(buf) - j {
	case 1:
		return buf[j] == '\\'
	case 2:
		return buf[j] == '\\' && buf[j+1] == '\r'
	}
	return false
}

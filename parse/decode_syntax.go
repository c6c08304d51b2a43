package parse

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/toolharness/toolharness/chat"
)

// decodeSyntax reads the calls of a block opened by a Syntax's marker.
// body is the block after its scanned marker, up to its closing marker
// (or the end of its last value); base is body's offset in the turn.
func (p *Parser) decodeSyntax(op *opener, body string, base int) ([]dcall, *Error) {
	if op.syn.markerless() {
		// The marker is the value's first byte.
		body, base = op.marker+body, base-len(op.marker)
		return p.decodeSyntaxBody(op.syn, trimPieces(body, op.syn.callClose), base)
	}
	calls, err := p.decodeSyntax1(op, body, base)
	if err != nil && len(calls) == 0 && err.Offset >= base+len(body) {
		// An error that stands for the whole block (it carries its
		// bytes) lies inside it: the block's end is where the next
		// block (a repeated marker) may start.
		err.Offset = base - len(op.marker)
	}
	return calls, err
}

func (p *Parser) decodeSyntax1(op *opener, body string, base int) ([]dcall, *Error) {
	s := op.syn
	open, close := s.callOpen, s.callClose
	if op.section {
		open, close = s.sectionOpen, s.sectionClose
	}
	if strings.TrimSpace(body) == "" {
		return nil, &Error{Kind: KindMissingName, Offset: base, Message: "empty call block; write the tool name and its arguments inside it"}
	}
	i := 0
	if j := skipPieces([]byte(body), 0, open[1:]); j >= 0 {
		i = j
	}
	body = trimPieces(body, close)
	if !op.section {
		return p.decodeSyntaxBody(s, body[i:], base+i)
	}
	if len(s.callOpen) == 0 {
		return p.decodeSyntaxBody(s, body[i:], base+i)
	}
	return p.decodeSection(s, body, i, base)
}

// trimPieces cuts the pieces of a closing marker before its last one
// (those the block's end did not consume) from the end of body.
func trimPieces(body string, close []string) string {
	if len(close) < 2 {
		return body
	}
	t := strings.TrimRight(body, " \t\r\n")
	for k := len(close) - 2; k >= 0; k-- {
		if !strings.HasSuffix(t, close[k]) {
			return body
		}
		t = strings.TrimRight(t[:len(t)-len(close[k])], " \t\r\n")
	}
	return t
}

// decodeSection splits a section into its calls: CallOpen body CallClose,
// repeated, whitespace between.
func (p *Parser) decodeSection(s *synSpec, body string, i, base int) ([]dcall, *Error) {
	var calls []dcall
	first, closer := s.callOpen[0], last(s.callClose)
	for {
		k := strings.Index(body[i:], first)
		if k < 0 {
			if strings.TrimSpace(body[i:]) != "" && len(calls) > 0 {
				return calls, &Error{Kind: KindUnexpectedTag, Offset: base + i, Message: fmt.Sprintf("unexpected text in the call section; write each call as %s…%s", s.CallOpen, s.CallClose)}
			}
			break
		}
		if strings.TrimSpace(body[i:i+k]) != "" && calls != nil {
			return calls, &Error{Kind: KindUnexpectedTag, Offset: base + i, Message: "unexpected text between calls"}
		}
		i += k + len(first)
		if j := skipPieces([]byte(body), i, s.callOpen[1:]); j >= 0 {
			i = j
		}
		end, next := len(body), len(body)
		if n := strings.Index(body[i:], first); n >= 0 {
			end, next = i+n, i+n
		}
		var rep repairs
		if closer != "" {
			if c := strings.Index(body[i:end], closer); c >= 0 {
				end, next = i+c, i+c+len(closer)
			} else {
				rep = rMissingCloseTag
			}
		}
		cs, err := p.decodeSyntaxBody(s, trimPieces(body[i:end], s.callClose), base+i)
		for k := range cs {
			switch {
			case rep == 0:
			case !p.opts.Strict:
				cs[k].repairs |= rep
			case cs[k].err == nil:
				// Strict takes no repair: the call carries the error.
				cs[k].err = &Error{Kind: KindUnclosedBlock, Offset: base + i, Message: "close every call with " + s.CallClose}
			}
		}
		calls = append(calls, cs...)
		if err != nil {
			return calls, err
		}
		i = next
	}
	if len(calls) == 0 {
		return nil, &Error{Kind: KindMissingName, Offset: base, Message: fmt.Sprintf("empty call section; write each call as %s…%s", s.CallOpen, s.CallClose)}
	}
	return calls, nil
}

// decodeSyntaxBody reads one call body (a list of calls for list bodies).
func (p *Parser) decodeSyntaxBody(s *synSpec, body string, base int) ([]dcall, *Error) {
	switch s.Body {
	case BodyJSON, BodyJSONList:
		if s.NameAsKey {
			return p.decodeNameKeyed(body, base, s.Body == BodyJSONList)
		}
		if s.pyLists && pythonList(body) {
			calls, err := p.decodePythonic(body, base)
			for i := range calls {
				calls[i].repairs |= rPythonicCall
			}
			return calls, err
		}
		return p.decodeJSONKeys(body, base, s.keys, s.Body == BodyJSONList)
	case BodyPython, BodyPythonList:
		if s.jsonLists && jsonCalls(body) {
			calls, err := p.decodeJSONKeys(body, base, objectKeys{name: "name", args: "arguments"}, true)
			for i := range calls {
				calls[i].repairs |= rJSONCall
			}
			return calls, err
		}
		return p.decodePythonic(body, base)
	}
	h, v := s.head([]byte(body), true)
	if v != vYes {
		return nil, &Error{Kind: KindMissingName, Offset: base, Message: fmt.Sprintf("write the tool name as %sNAME%s", s.NamePrefix, strings.TrimSpace(s.NameSuffix+s.IDPrefix+s.ArgsPrefix))}
	}
	if s.Body == BodyPairs {
		c := p.decodePairs(s, h.name, body[h.args:], base+h.args)
		return []dcall{c}, nil
	}
	hs := h.spec
	args := strings.TrimRight(body[h.args:], " \t\r\n")
	for _, suf := range reversed(hs.argsSuffix) {
		args = strings.TrimRight(strings.TrimSuffix(args, suf), " \t\r\n")
	}
	var calls []dcall
	var err *Error
	quote := hs.Quote
	if hs.gemma {
		quote = gemmaEscape
	}
	if quote != "" {
		calls = []dcall{p.decodeGemmaArgs(h.name, args, quote, base+h.args)}
	} else {
		calls, err = p.decodeArgsOnly(h.name, args, base+h.args)
	}
	if h.id != "" {
		for k := range calls {
			calls[k].id = h.id
		}
	}
	return calls, err
}

func reversed(ps []string) []string {
	out := make([]string, len(ps))
	for i, x := range ps {
		out[len(ps)-1-i] = x
	}
	return out
}

// pairMarkers are the pieces of one key/value element, trimmed, with the
// whitespace the template writes around a value (stripped once when the
// model writes it too).
type pairMarkers struct {
	keyOpen, keyClose, valueOpen, valueClose string
	lead, trail                              string
}

func (s *synSpec) pairMarkers() pairMarkers {
	m := pairMarkers{
		keyOpen: strings.TrimSpace(s.KeyOpen), keyClose: strings.TrimSpace(s.KeyClose),
		valueOpen: strings.TrimSpace(s.ValueOpen), valueClose: strings.TrimSpace(s.ValueClose),
	}
	before := s.KeyClose
	if s.ValueOpen != "" {
		before = s.ValueOpen
	}
	m.lead = before[len(strings.TrimRight(before, " \t\r\n")):]
	m.trail = s.ValueClose[:len(s.ValueClose)-len(strings.TrimLeft(s.ValueClose, " \t\r\n"))]
	return m
}

// decodePairs reads KeyOpen key KeyClose ValueOpen value ValueClose
// elements; values are read with the tool's schema.
func (p *Parser) decodePairs(s *synSpec, name, body string, base int) dcall {
	m := s.pairMarkers()
	a := p.newArgs(name, len(body))
	var rep repairs
	i := 0
	for {
		k := strings.Index(body[i:], m.keyOpen)
		if k < 0 {
			if a.err == nil && strings.TrimSpace(body[i:]) != "" {
				a.err = &Error{Kind: KindUnexpectedTag, Offset: base + i, Message: fmt.Sprintf("only %sKEY%s elements belong in a call of %s", m.keyOpen, m.keyClose, name)}
			}
			break
		}
		if a.err == nil && strings.TrimSpace(body[i:i+k]) != "" {
			a.err = &Error{Kind: KindUnexpectedTag, Offset: base + i, Message: fmt.Sprintf("unexpected text before %s", m.keyOpen)}
		}
		i += k + len(m.keyOpen)
		kend := m.keyClose
		if kend == "" {
			kend = m.valueOpen
		}
		e := strings.Index(body[i:], kend)
		next := strings.Index(body[i:], m.keyOpen)
		if e < 0 || next >= 0 && next < e {
			if a.err == nil {
				a.err = &Error{Kind: KindUnexpectedTag, Offset: base + i, Message: fmt.Sprintf("write %sKEY%s", m.keyOpen, kend)}
			}
			break
		}
		key := strings.TrimSpace(body[i : i+e])
		i += e + len(kend)
		text := true
		if s.typeAttr != "" {
			var n int
			n, text = typeAttr(body[i:], s.typeAttr, m.valueOpen)
			i += n
		}
		if m.keyClose != "" && m.valueOpen != "" {
			j := skipWS([]byte(body[i:min(len(body), i+64+len(m.valueOpen))]), 0)
			if strings.HasPrefix(body[i+j:], m.valueOpen) {
				i += j + len(m.valueOpen)
			} else if p.opts.Strict && a.err == nil {
				a.err = &Error{Kind: KindUnexpectedTag, Offset: base + i, Message: fmt.Sprintf("write %s after %s", m.valueOpen, m.keyClose)}
			}
		}
		// A CDATA section holds its text as it is (MiniCPM5 writes string
		// values with '<' or '&' in one): markers inside it are text.
		cdata, inCDATA := "", false
		if c, end, ok := cdataAt(body, i); ok {
			cdata, inCDATA, i = c, true, end
		}
		// A value ends at ValueClose or (lenient) at the next key.
		lim := len(body)
		if n := strings.Index(body[i:], m.keyOpen); n >= 0 {
			lim = i + n
		}
		stop := strings.Index(body[i:lim], m.valueClose)
		after := 0
		if stop < 0 {
			// What runs on to the next key or the call's end ends at
			// the whitespace before it.
			rep |= rMissingCloseTag
			stop = len(strings.TrimRight(body[i:lim], " \t\r\n"))
		} else {
			after = len(m.valueClose)
		}
		v := strings.TrimPrefix(body[i:i+stop], m.lead)
		v = strings.TrimSuffix(v, m.trail)
		if inCDATA {
			v = cdata + v
		}
		if text {
			a.add(key, v, base+i)
		} else {
			rep |= a.addJSON(key, v, base+i)
		}
		i += stop + after
	}
	if p.opts.Strict && rep != 0 {
		if a.err == nil {
			a.err = &Error{Kind: KindUnclosedBlock, Offset: base, Message: "close every value with " + m.valueClose}
		}
		rep = 0
	}
	return a.call(rep)
}

// cdataAt reads an XML CDATA section at body[i:] (after whitespace): its
// text and the index after its "]]>".
func cdataAt(body string, i int) (text string, end int, ok bool) {
	const open, close = "<![CDATA[", "]]>"
	j := i + len(body[i:]) - len(strings.TrimLeft(body[i:], " \t\r\n"))
	if !strings.HasPrefix(body[j:], open) {
		return "", 0, false
	}
	j += len(open)
	e := strings.Index(body[j:], close)
	if e < 0 {
		return "", 0, false
	}
	return body[j : j+e], j + e + len(close), true
}

// syntaxName finds the tool name at the start of a syntax block's body w
// (see scanName): found in a prefix, the same name is found in every
// longer one.
func (s *synSpec) syntaxName(w []byte, section bool) ([]byte, bool) {
	rest := s.callOpen
	if section {
		rest = s.sectionOpen
	}
	if s.markerless() {
		// w starts at the value, bracket included.
		rest = []string{""}
	}
	i := 0
	if len(rest) > 1 {
		if i = skipPieces(w, 0, rest[1:]); i < 0 {
			return nil, false
		}
	}
	if section && len(s.callOpen) > 0 {
		if i = skipPieces(w, i, s.callOpen); i < 0 {
			return nil, false
		}
	}
	w = w[i:]
	switch s.Body {
	case BodyJSON, BodyJSONList:
		if s.pyLists && pythonList(string(w)) {
			if v, name := callAt(w, pythonStartAt(w)); v == vYes {
				return []byte(name), true
			}
			return nil, false
		}
		return jsonNameKey(w, s.keys.name)
	case BodyPython, BodyPythonList:
		if s.jsonLists && jsonCalls(w) {
			return jsonNameKey(w, "name")
		}
		j := skipWS(w, 0)
		if j < len(w) && w[j] == '[' {
			j = skipWS(w, j+1)
		}
		if v, name := identParen(w, j); v == vYes {
			return []byte(name), true
		}
		return nil, false
	}
	h, v := s.head(w, false)
	if v != vYes {
		return nil, false
	}
	return []byte(h.name), true
}

// jsonNameKey is jsonName for a call object whose name key is key.
func jsonNameKey(w []byte, key string) ([]byte, bool) {
	var j int
	switch key {
	case "name":
		return jsonName(w)
	case "":
		// The name is the call object's key: the first string after "{".
		if j = bytes.IndexByte(w, '{'); j < 0 {
			return nil, false
		}
		j = skipWS(w, j+1)
	default:
		q := []byte(`"` + key + `"`)
		k := bytes.Index(w, q)
		if k < 0 {
			return nil, false
		}
		j = skipWS(w, k+len(q))
		if j >= len(w) || w[j] != ':' {
			return nil, false
		}
		j = skipWS(w, j+1)
	}
	if j >= len(w) || w[j] != '"' {
		return nil, false
	}
	e := bytes.IndexByte(w[j+1:], '"')
	if e <= 0 {
		return nil, false
	}
	return w[j+1 : j+1+e], true
}

// decodeNameKeyed reads calls written as {"NAME": {arguments}}, one
// object or a list of them (Syntax.NameAsKey).
func (p *Parser) decodeNameKeyed(body string, base int, list bool) ([]dcall, *Error) {
	r := relaxed{s: body, strict: p.opts.Strict}
	var vals []any
	for {
		r.ws()
		if r.i >= len(r.s) {
			break
		}
		if len(vals) > 0 && r.s[r.i] == ',' {
			r.i++
			continue
		}
		v, err := r.value()
		if err != nil {
			return p.nameKeyedCalls(vals, r.repairs, base), jsonErr(err, base, "the tool call")
		}
		if l, ok := v.([]any); ok && list {
			vals = append(vals, l...)
			continue
		}
		vals = append(vals, v)
	}
	return p.nameKeyedCalls(vals, r.repairs, base), nil
}

func (p *Parser) nameKeyedCalls(vals []any, rep repairs, base int) []dcall {
	calls := make([]dcall, 0, len(vals))
	for _, v := range vals {
		c := dcall{repairs: rep}
		obj, ok := v.(*chat.Object)
		if !ok || len(obj.Members) != 1 {
			c.err = &Error{Kind: KindBadJSON, Offset: base, Message: `a tool call must be a JSON object {"TOOL_NAME": {arguments}}`}
			calls = append(calls, c)
			continue
		}
		c.name = obj.Members[0].Key
		argsValue(&c, obj.Members[0].Value, p.opts.Strict, base)
		calls = append(calls, c)
	}
	return calls
}

// pythonList reports whether body holds Python calls, not JSON: a list
// whose first element is a call ("[get_weather(" after whitespace), a
// tuple of calls, or a call without either; the call may be quoted or
// have its name quoted (callAt).
func pythonList(body string) bool {
	v, _ := callAt([]byte(body), pythonStartAt(body))
	return v == vYes
}

// jsonCalls reports whether body holds JSON call objects, not Python
// calls: an object, or a list whose first element is one.
func jsonCalls[T text](body T) bool {
	j := skipWS(body, 0)
	if j < len(body) && body[j] == '[' {
		j = skipWS(body, j+1)
	}
	return j < len(body) && body[j] == '{'
}

// pythonStartAt is where the first call of Python calls starts in body:
// after the opening bracket of a list or a tuple, if there is one.
func pythonStartAt[T text](body T) int {
	j := skipWS(body, 0)
	if j < len(body) && (body[j] == '[' || body[j] == '(') {
		j = skipWS(body, j+1)
	}
	return j
}

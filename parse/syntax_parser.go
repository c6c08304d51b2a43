package parse

import (
	"bytes"
	"strings"
)

// This file turns a Syntax into openers for the same table, block and
// decoder machinery the named formats use: a derived syntax is one more
// opener set, with its own decoder (dSyntax, decode_syntax.go).
//
// Markers are split at whitespace: the first piece of an opening marker is
// what the prose scanner looks for, the other pieces are expected after it
// with any whitespace between them; the last piece of a closing marker is
// what ends the block, the pieces before it are stripped from the body's
// end when present. Templates differ from the models trained on them in
// exactly this whitespace ("</function>\n</tool_call>" written as
// "</function></tool_call>"), and a marker made of one piece is matched
// exactly either way.

// glm45Syntax is how GLM-4.5 and later write calls (their official
// template): <tool_call>name\n<arg_key>k</arg_key>\n<arg_value>v</arg_value>…</tool_call>.
var glm45Syntax = Syntax{Label: "glm45", CallOpen: "<tool_call>", CallClose: "</tool_call>", CallSeparator: "\n",
	Body: BodyPairs, NameSuffix: "\n", KeyOpen: "<arg_key>", KeyClose: "</arg_key>", ValueOpen: "<arg_value>", ValueClose: "</arg_value>",
	ReasoningOpen: "<think>", ReasoningClose: "</think>"}

// synSpec is a Syntax prepared for parsing.
type synSpec struct {
	Syntax
	// callOpen and sectionOpen are the opening markers in pieces;
	// callClose and sectionClose the closing ones.
	callOpen, callClose, sectionOpen, sectionClose []string
	keys                                           objectKeys
	// The head's pieces, made once: head runs on every chunk of a
	// block that is being decided.
	namePrefix, argsPrefix, argsSuffix []string
	// nameEnds are the markers that can end a name; nameSuffix, idPrefix
	// and argsStop are NameSuffix, IDPrefix and ArgsPrefix trimmed;
	// wsEnds says whitespace ends the name (NameSuffix is whitespace).
	nameEnds                       []string
	nameSuffix, idPrefix, argsStop string
	wsEnds                         bool

	// pyLists: a JSON body may also be a Python list of calls, read with
	// the repair pythonic_call (a model whose template writes JSON lists,
	// such as LFM2 under llama.cpp's template, writes Python ones). Set
	// by NewSyntax when lenient.
	pyLists bool
	// jsonLists: a Python body may also be JSON call objects, a list of
	// them or one, read with the repair json_call (LFM2's markers around
	// the JSON list llama.cpp's LFM2 template renders). Set when lenient
	// by NewSyntax for a syntax with a call marker, and for LFM2's
	// family.
	jsonLists bool

	// The knobs below are set by the named formats built on a Syntax
	// (families.go); a syntax from NewSyntax has none of them.
	//
	// alts are other heads the calls of these markers may have (DeepSeek
	// V3.1's name<｜tool▁sep｜>{…} besides R1's
	// function<｜tool▁sep｜>name\n```json…): the first whose head reads
	// decides (head).
	alts []*synSpec
	// headID: the call's ID is its whole head, name prefix, name and id
	// (Kimi K2's functions.NAME:IDX, the ID its template writes back).
	headID bool
	// tight: the name follows the opening marker with no whitespace
	// (functionary's >>>name, where ">>> " is a Python prompt).
	tight bool
	// notNames are words in the name's place that are not tools
	// (functionary's "all" content channel).
	notNames []string
	// gemma: the arguments are in FunctionGemma's notation
	// ({key:<escape>text<escape>,n:5}, decode_gemma.go).
	gemma bool
	// typeAttr names an attribute of a pair's key element that says
	// whether the value is text ("true") or JSON ("false"): DSML's
	// string="…".
	typeAttr string
}

func newSynSpec(s Syntax) *synSpec {
	sp := &synSpec{
		Syntax:       s,
		callOpen:     pieces(s.CallOpen),
		callClose:    pieces(s.CallClose),
		sectionOpen:  pieces(s.SectionOpen),
		sectionClose: pieces(s.SectionClose),
		keys:         objectKeys{name: s.NameKey, args: s.ArgsKey},
		namePrefix:   pieces(s.NamePrefix),
		argsPrefix:   pieces(s.ArgsPrefix),
		argsSuffix:   pieces(s.ArgsSuffix),
		nameSuffix:   strings.TrimSpace(s.NameSuffix),
		idPrefix:     strings.TrimSpace(s.IDPrefix),
		argsStop:     strings.TrimSpace(s.ArgsPrefix),
		wsEnds:       s.NameSuffix != "" && strings.TrimSpace(s.NameSuffix) == "",
		typeAttr:     s.TypeAttr,
	}
	for _, m := range []string{sp.nameSuffix, sp.idPrefix, sp.argsStop} {
		if m != "" {
			sp.nameEnds = append(sp.nameEnds, m)
		}
	}
	if s.Body == BodyPairs {
		sp.nameEnds = append(sp.nameEnds, strings.TrimSpace(s.KeyOpen))
	}
	if sp.keys.name == "" && !s.NameAsKey {
		sp.keys.name = "name"
	}
	if sp.keys.args == "" {
		sp.keys.args = "arguments"
	}
	return sp
}

func pieces(s string) []string { return strings.Fields(s) }

func last(ps []string) string {
	if len(ps) == 0 {
		return ""
	}
	return ps[len(ps)-1]
}

// NewSyntax returns a parser for a syntax that is not one of the named
// formats (one derived from a model's chat template). It behaves like the
// parsers of New: the same events, error kinds, repairs (off with
// Options.Strict), schema-driven values and chunk-invariance. A reasoning
// block delimited by s.ReasoningOpen and s.ReasoningClose (<think> and
// </think> when they are empty) is skipped as in every format.
func NewSyntax(s Syntax, opts Options) (*Parser, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	sp := newSynSpec(s)
	sp.pyLists = !opts.Strict && (s.Body == BodyJSON || s.Body == BodyJSONList) && !s.NameAsKey
	sp.jsonLists = !opts.Strict && (s.Body == BodyPython || s.Body == BodyPythonList) && s.CallOpen != ""
	p := newParser(s.label(), opts, compile(s.label(), sp.openers(!opts.Strict), opts))
	// The syntax's reasoning block, <think> unless it names one (and
	// not the blocks of the format its label may spell).
	think := [2]string{"<think>", "</think>"}
	if s.ReasoningOpen != "" {
		think = [2]string{s.ReasoningOpen, s.ReasoningClose}
	}
	p.setThinks([][2]string{think}, opts)
	return p, nil
}

// valueBody reports whether a call's body ends by itself (a JSON or
// Python value), so that a call needs no closing marker.
func (s *synSpec) valueBody() bool { return s.Body != BodyPairs }

// special reports whether a marker looks like a special token (<…>, […],
// <｜…｜>): those are never prose, so a block they open is a call block
// even when it turns out malformed; any other marker (">>>", "functools",
// "Action:") opens a tentative block that stays text unless it holds a
// call.
func special(m string) bool {
	return len(m) >= 3 && (m[0] == '<' || m[0] == '[') && (m[len(m)-1] == '>' || m[len(m)-1] == ']')
}

// openers builds the syntax's openers: one for the section (when there is
// one) and one for a call, which in a section is the lenient reading of a
// call whose section marker was left out.
func (s *synSpec) openers(lenient bool) []opener {
	if s.markerless() {
		return []opener{s.shapeOpener()}
	}
	var ops []opener
	if len(s.sectionOpen) > 0 {
		op := s.opener(s.sectionOpen, s.sectionClose, true, lenient)
		ops = append(ops, op)
		if len(s.callOpen) > 0 && lenient {
			c := s.opener(s.callOpen, s.callClose, false, lenient)
			c.repair |= rMissingOpenTag
			c.trailer = last(s.sectionClose)
			ops = append(ops, c)
		}
		return ops
	}
	return append(ops, s.opener(s.callOpen, s.callClose, false, lenient))
}

// markerless reports whether nothing opens a call: it is recognised by
// its shape, a JSON value or a list.
func (s *synSpec) markerless() bool { return len(s.callOpen) == 0 && len(s.sectionOpen) == 0 }

// shapeOpener opens a markerless call at its first byte: "{" for a call
// object, "[" for a list; what the template writes after the call
// (CallClose, such as Llama 4's <|eom|>) is part of the block when it
// follows at once.
func (s *synSpec) shapeOpener() opener {
	op := opener{marker: "{", kind: kValue, dec: dSyntax, syn: s, tentative: true, trailer: last(s.callClose)}
	switch s.Body {
	case BodyJSONList:
		op.marker = "["
	case BodyPythonList:
		op.marker, op.kind = "[", kBracket
	}
	return op
}

func (s *synSpec) opener(open, close []string, section, lenient bool) opener {
	// A repeat of the opening marker before the closing one ends the
	// block: a repair where there is a closing marker, the syntax itself
	// where there is none.
	op := opener{marker: open[0], dec: dSyntax, syn: s, section: section, reopen: lenient || last(close) == ""}
	op.tentative = len(open) > 1 || !special(op.marker)
	closer := last(close)
	switch {
	case closer != "":
		op.kind, op.closer = kTag, closer
	case section && len(s.callClose) > 0:
		// A section that is never closed, around calls that are: it
		// ends where the output does (or at the next section).
		op.kind = kTag
	case s.valueBody():
		op.kind = kPrefix
		op.multi = section
	default:
		op.kind = kTag
	}
	if op.kind == kPrefix && s.Body == BodyNameJSON && s.CallClose == "" {
		op.trailer = last(pieces(s.ArgsSuffix))
	}
	return op
}

// skipPieces matches ps at buf[i:], whitespace allowed before each piece.
// It returns the index after the last piece, or -1 when buf does not
// match, or -2 when buf ends before it could tell.
func skipPieces(buf []byte, i int, ps []string) int {
	for _, p := range ps {
		j := skipWS(buf, i)
		if j-i > 64 {
			// A long run of whitespace is not part of a marker;
			// bounding it keeps deciding a block O(1) per chunk.
			return -1
		}
		i = j
		rem := len(buf) - i
		if rem < len(p) {
			if string(buf[i:]) == p[:rem] {
				return -2
			}
			return -1
		}
		if string(buf[i:i+len(p)]) != p {
			return -1
		}
		i += len(p)
	}
	return i
}

// skipPiecesVerdict is skipPieces as a verdict: vYes with the index
// after the pieces, vNo, or more when body ends first.
func skipPiecesVerdict(body []byte, i int, ps []string, more verdict) (int, verdict) {
	switch j := skipPieces(body, i, ps); j {
	case -1:
		return i, vNo
	case -2:
		return i, more
	default:
		return j, vYes
	}
}

// confirmSyntax decides a tentative syntax block from its first bytes:
// the rest of the opening marker, then the start of a call body.
func (b *block) confirmSyntax(eof bool) verdict {
	s, buf := b.op.syn, b.buf
	if s.markerless() {
		return b.confirmShape()
	}
	open := s.callOpen
	if b.op.section {
		open = s.sectionOpen
	}
	rest := open[1:]
	j := skipPieces(buf, len(b.op.marker), rest)
	switch j {
	case -1:
		return vNo
	case -2:
		return vMore
	}
	b.vstart = j
	if b.op.section && len(s.callOpen) > 0 {
		j = skipPieces(buf, j, s.callOpen)
		switch j {
		case -1:
			return vNo
		case -2:
			return vMore
		}
	}
	k := skipWS(buf, j)
	if k-j > 64 {
		return vNo
	}
	if k >= len(buf) {
		return vMore
	}
	switch s.Body {
	case BodyJSON, BodyJSONList:
		list := buf[k] == '['
		if list {
			k = skipWS(buf, k+1)
			if k >= len(buf) {
				return vMore
			}
		}
		if buf[k] != '{' && list && s.pyLists {
			return b.pythonCall(buf, k, j)
		}
		if !list && buf[k] != '{' && s.pyLists && b.op.kind != kPrefix {
			// Python calls outside a list, read as pythonList reads
			// them: a tuple (f(a=1), g()), a quoted call, a bare call.
			if buf[k] == '(' {
				if k = skipWS(buf, k+1); k >= len(buf) {
					return vMore
				}
			}
			v, name := callAt(buf, k)
			if v == vYes {
				b.name = name
			}
			return v
		}
		if buf[k] != '{' {
			return vNo
		}
		if b.op.kind == kPrefix {
			b.vstart = j
		}
		return callishKey(buf, k, s.keys.name)
	case BodyPython, BodyPythonList:
		if buf[k] == '[' {
			k = skipWS(buf, k+1)
		}
		if s.jsonLists && b.op.kind != kPrefix && k < len(buf) && buf[k] == '{' {
			return callishKey(buf, k, "name")
		}
		return b.pythonCall(buf, k, j)
	}
	h, st := s.head(buf[j:], eof)
	switch st {
	case vMore, vNo:
		return st
	}
	b.name = h.name
	if b.op.kind == kPrefix {
		// The tracked value starts at the arguments.
		b.vstart = j + h.args
		b.vpos = b.vstart
		if b.vstart >= len(buf) {
			return vMore
		}
		if c := buf[b.vstart]; c != '{' && c != '"' {
			return vNo
		}
	}
	return vYes
}

// pythonCall decides a block whose call is a Python call at buf[k]; the
// value a kPrefix block tracks starts at j.
func (b *block) pythonCall(buf []byte, k, j int) verdict {
	v, name := identParen(buf, k)
	if b.op.syn.pyLists {
		// A JSON list body's Python list may quote a call or its name.
		v, name = callAt(buf, k)
	}
	if v == vYes {
		b.name = name
		if b.op.kind == kPrefix {
			b.vstart = j
		}
	}
	return v
}

// confirmShape decides a markerless syntax block: a call object that
// starts with a key a call has (the syntax's name key among them), or a
// list of them or of Python calls.
func (b *block) confirmShape() verdict {
	s, buf := b.op.syn, b.buf
	b.vstart = 0
	switch s.Body {
	case BodyJSON:
		return callishKey(buf, 0, s.keys.name)
	case BodyJSONList:
		k := skipWS(buf, 1)
		if k >= len(buf) {
			return vMore
		}
		if buf[k] != '{' {
			return vNo
		}
		return callishKey(buf, k, s.keys.name)
	}
	k := skipWS(buf, 1)
	if k-1 > 64 {
		return vNo
	}
	v, name := identParen(buf, k)
	if v == vYes {
		b.name = name
	}
	return v
}

// callishKey is callish, also accepting the syntax's own name key ("":
// the name is the key, so any key will do).
func callishKey(buf []byte, i int, key string) verdict {
	if key == "" {
		j := skipWS(buf, i+1)
		switch {
		case j-i > 64:
			return vNo
		case j >= len(buf):
			return vMore
		case buf[j] == '"':
			return vYes
		}
		return vNo
	}
	v := callish(buf, i)
	if v != vNo || key == "name" {
		return v
	}
	j := skipWS(buf, i+1)
	q := []byte(`"` + key + `"`)
	rem := len(buf) - j
	if rem < len(q) {
		if bytes.HasPrefix(q, buf[j:]) {
			return vMore
		}
		return vNo
	}
	if bytes.HasPrefix(buf[j:], q) {
		return vYes
	}
	return vNo
}

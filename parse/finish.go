package parse

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/toolharness/toolharness/chat"
)

// dcall is a call as a decoder read it, before IDs and catalog checks.
type dcall struct {
	id      string
	name    string
	args    []byte
	repairs repairs
	err     *Error
	// listed: the decoder found name in the catalog (p.tools[name] is
	// not nil), which finish then need not look up again.
	listed bool
}

// finish decodes the block buf[:end] and emits its calls or errors.
func (p *Parser) finish(end int, eof bool) {
	b := &p.b
	p.inBlock = false
	b.buf = b.buf[:end]
	raw := p.arena.str(b.buf)
	cs, ce := b.vstart, b.vend
	if ce > len(raw) || ce < cs {
		ce = len(raw)
	}
	calls, berr := p.decode(b, raw, cs, ce)

	if b.op.tentative && !b.startSent {
		commit := false
		if name, ok := b.scanName(p.tools); ok && p.acceptable(name) {
			commit = true
		}
		for _, c := range calls {
			if p.acceptable(c.name) {
				commit = true
			}
		}
		if b.markerless() && p.tools == nil {
			// Without a catalog, prose that starts with a word and a
			// parenthesis is only a call if it reads as one.
			commit = len(calls) > 0 && calls[0].err == nil && berr == nil
		}
		if !commit || p.fenced {
			p.text(raw)
			return
		}
	}
	if b.op.kind == kFence {
		p.fenced = true
	}
	// The call start a stream would have emitted early, emitted now if it
	// was not, so that every chunking gives the same events.
	if !b.startSent && b.op.dec != dMistral {
		if name, ok := b.scanName(p.tools); ok && (!b.op.tentative || p.acceptable(name)) {
			b.startSent = true
			p.event(Event{Type: EventCallStart, Call: chat.ToolCall{ID: p.callID(p.ncalls), Name: name, Offset: b.start}})
		}
	}
	if eof && !b.closed && !b.reopened && (berr != nil || len(calls) == 0 || calls[0].err != nil || calls[0].repairs&rAddedClosers != 0) {
		p.emitErr(KindTruncated, b.start, truncatedMsg(b.op), raw)
		return
	}
	if len(calls) == 0 && berr == nil {
		berr = &Error{Kind: KindMissingName, Offset: b.start, Message: "empty call block; write the tool name and its arguments inside it"}
	}
	extra := b.op.repair
	if b.reopened && b.op.closer != "" {
		extra |= rMissingCloseTag
	}
	if b.sub == dPythonic && b.op.dec != dPythonic && b.op.dec != dFence && b.op.kind != kBare {
		extra |= rPythonicCall
	}
	if b.op.kind == kBare && b.sub == dPythonic {
		extra |= rMissingBrackets
	}
	if b.trailed && b.op.kind != kTag && b.op.syn == nil {
		extra |= rMissingOpenTag
	}
	for i, c := range calls {
		id := p.callID(p.ncalls)
		if i > 0 || !b.startSent {
			p.event(Event{Type: EventCallStart, Call: chat.ToolCall{ID: id, Name: c.name, Offset: b.start}})
		}
		if c.id != "" {
			id = c.id
		}
		if c.err == nil && c.name != "" && p.tools != nil && !c.listed && p.tools[c.name] == nil {
			c.err = &Error{Kind: KindUnknownTool, Offset: b.start, Message: p.unknownMsg(c.name)}
		}
		if c.err == nil && c.name == "" {
			c.err = &Error{Kind: KindMissingName, Offset: b.start, Message: "call without a tool name; give \"name\""}
		}
		args := c.args
		if len(args) == 0 {
			args = []byte("{}")
		}
		rep := c.repairs | extra
		if rep&rTupleList != 0 {
			// The tuple's parentheses are the list's brackets.
			rep &^= rMissingBrackets
		}
		p.event(Event{Type: EventCall, Err: c.err, Call: chat.ToolCall{
			ID: id, Name: c.name, Arguments: args, Raw: raw, Offset: b.start,
			Repairs: rep.list(),
		}})
		p.ncalls++
	}
	if berr != nil {
		if len(calls) == 0 {
			berr.Raw = raw
		}
		p.event(Event{Type: EventError, Err: berr})
	}
	if len(calls) == 1 && berr == nil && !p.q.on && !p.qx.on {
		// (A block of the qwen3-coder cycle is <function=… after its
		// marker, which learnQuick does not take.)
		p.learnQuick(raw, calls[0], extra)
	}
	if len(calls) == 1 && berr == nil && !p.qx.on {
		p.learnQuickXML(raw, calls[0], extra)
	}
	if b.op.kind == kBare && b.op.dec == dNameLine && len(calls) > 0 {
		// GLM-4 writes one name line and object after another.
		p.bare = true
	}
}

func (p *Parser) emitErr(kind Kind, off int, msg, raw string) {
	p.event(Event{Type: EventError, Err: &Error{Kind: kind, Offset: off, Message: msg, Raw: raw}})
}

func truncatedMsg(op *opener) string {
	if op.closer != "" && op.kind == kTag {
		return fmt.Sprintf("output ended inside %s; finish the call and close it with %s", op.marker, op.closer)
	}
	return fmt.Sprintf("output ended inside a call opened by %q; finish it", op.marker)
}

func (p *Parser) unknownMsg(name string) string {
	names := make([]string, 0, len(p.tools))
	for n := range p.tools {
		names = append(names, n)
	}
	sort.Strings(names)
	if len(names) > 12 {
		names = append(names[:12], "…")
	}
	return fmt.Sprintf("unknown tool %q; available: %s", name, strings.Join(names, ", "))
}

// decode reads the calls of a block. raw is the whole block, content is
// raw[cs:ce].
func (p *Parser) decode(b *block, raw string, cs, ce int) ([]dcall, *Error) {
	if b.op.dec == dSyntax {
		from := len(b.op.marker)
		return p.decodeSyntax(b.op, raw[from:max(ce, from)], b.start+from)
	}
	content := raw[cs:ce]
	base := b.start + cs
	dec := b.op.dec
	switch b.op.kind {
	case kBracket, kFence, kBare:
		dec = b.sub
	}
	switch dec {
	case dXML:
		return p.decodeXML(raw, b.start)
	case dQwenCoder:
		if b.op.kind == kTag && b.op.marker == "<function=" {
			return p.decodeQwenCoder(raw, b.start)
		}
		return p.decodeQwenCoder(content, base)
	case dTags:
		return p.decodeTags(b.op.tool, content, base)
	case dPythonic:
		return p.decodePythonic(content, base)
	case dHarmony, dNameLine:
		return p.decodeArgsOnly(b.name, content, base)
	case dMistral:
		if b.name != "" {
			return p.decodeArgsOnly(b.name, content, base)
		}
		return p.decodeJSON(content, base, "arguments", true)
	case dToolCall:
		return p.decodeToolCall(content, base)
	}
	return p.decodeJSON(content, base, p.nativeArgsKey(), p.format == "mistral")
}

// nativeArgsKey is the arguments key of the format's own JSON call
// objects: Llama's "parameters" in json (and auto, which reads it), else
// "arguments".
func (p *Parser) nativeArgsKey() string {
	if p.format == "json" || p.format == "auto" {
		return "parameters"
	}
	return "arguments"
}

// decodeToolCall reads <tool_call> content by its shape (JSON, qwen3-coder
// XML or, lenient, a pythonic call). When the catalog does not know the
// tools that reading names, the other readings are tried, and the first
// whose calls all name registered tools wins.
func (p *Parser) decodeToolCall(content string, base int) ([]dcall, *Error) {
	t := strings.TrimSpace(content)
	// The readings, in this order: JSON, qwen3-coder, GLM-4.5 pairs and
	// (lenient) a pythonic call.
	readers := 4
	if p.opts.Strict {
		readers = 3
	}
	read := func(i int) ([]dcall, *Error) {
		switch i {
		case 0:
			return p.decodeJSON(content, base, "arguments", false)
		case 1:
			return p.decodeQwenCoder(content, base)
		case 2:
			return p.decodeSyntaxBody(p.glm45(), content, base)
		}
		calls, err := p.decodePythonic(content, base)
		for i := range calls {
			calls[i].repairs |= rPythonicCall
		}
		return calls, err
	}
	first := 0
	switch {
	case strings.HasPrefix(t, "<"):
		first = 1
	case t != "" && t[0] == '[' && readers == 4:
		if v, _ := callAt([]byte(t), skipWS(t, 1)); v == vYes {
			first = 3
		}
	case t != "" && (t[0] == '(' || t[0] == '\'' || t[0] == '"') && readers == 4:
		// A tuple of calls, a call quoted as a string or one whose name
		// is quoted: (f(a=1), g()), 'f(a=1)', 'f'(a=1).
		j := 0
		if t[0] == '(' {
			j = skipWS(t, 1)
		}
		if v, _ := callAt([]byte(t), j); v == vYes {
			first = 3
		}
	case t != "" && t[0] != '{' && t[0] != '[' && t[0] != '"' && t[0] != '\'':
		if _, ok := glmName([]byte(t)); ok {
			first = 2
		} else if v, _ := identParen([]byte(t), 0); v == vYes && readers == 4 {
			first = 3
		}
	}
	calls, err := read(first)
	if p.tools == nil || p.allRegistered(calls, err) {
		return calls, err
	}
	// The readings share the parser's scratch slice: keep this one.
	calls = slices.Clone(calls)
	for i := range readers {
		if i == first {
			continue
		}
		if c, e := read(i); p.allRegistered(c, e) {
			return c, e
		}
	}
	return calls, err
}

// allRegistered: the reading gave calls, without errors, all naming
// registered tools.
func (p *Parser) allRegistered(calls []dcall, err *Error) bool {
	if err != nil || len(calls) == 0 {
		return false
	}
	for _, c := range calls {
		if c.err != nil || p.tools[c.name] == nil {
			return false
		}
	}
	return true
}

// decodeArgsOnly reads a JSON arguments object for a call whose name the
// markers gave (harmony, mistral name[ARGS]).
func (p *Parser) decodeArgsOnly(name, content string, base int) ([]dcall, *Error) {
	c := dcall{name: name}
	t := strings.TrimSpace(content)
	if t == "" {
		c.args = []byte("{}")
		return []dcall{c}, nil
	}
	r := relaxed{s: t, strict: p.opts.Strict}
	v, err := r.value()
	if err == nil {
		r.ws()
		if r.i < len(r.s) {
			err = r.fail("unexpected text after the arguments")
		}
	}
	if err != nil {
		c.err = jsonErr(err, base+strings.Index(content, t), "arguments of "+name)
		return []dcall{c}, nil
	}
	c.repairs = r.repairs
	if str, ok := v.(string); ok && !p.opts.Strict {
		// Arguments double-encoded as a JSON string (what templates
		// given string arguments write).
		inner := relaxed{s: strings.TrimSpace(str)}
		if o, err := inner.value(); err == nil {
			if inner.ws(); inner.i == len(inner.s) {
				if _, ok := o.(*chat.Object); ok {
					c.args, c.repairs = encode(o), c.repairs|inner.repairs|rArgumentsString
					return []dcall{c}, nil
				}
			}
		}
	}
	if _, ok := v.(*chat.Object); !ok {
		c.err = &Error{Kind: KindBadArguments, Offset: base, Message: "arguments must be a JSON object"}
		return []dcall{c}, nil
	}
	c.args = encode(v)
	return []dcall{c}, nil
}

func jsonErr(err error, base int, what string) *Error {
	pos := 0
	msg := err.Error()
	if se, ok := err.(*syntaxError); ok {
		pos = se.pos
	}
	return &Error{Kind: KindBadJSON, Offset: base + pos, Message: fmt.Sprintf("invalid JSON in %s: %s", what, msg)}
}

package parse

import (
	"fmt"
	"strings"

	"github.com/toolharness/toolharness/chat"
)

// argBuilder writes the decoded parameters of one call straight into the
// call's JSON arguments, in the model's order.
type argBuilder struct {
	p    *Parser
	tool string
	// schema is the tool's entry in the catalog (nil if none), looked
	// up once per call rather than once per parameter.
	schema *toolSchema
	args   []byte
	err    *Error
}

// newArgs starts the arguments of a call to tool whose parameters are
// written in about size bytes.
func (p *Parser) newArgs(tool string, size int) argBuilder {
	return p.newArgsFor(tool, p.tools[tool], size)
}

// newArgsFor is newArgs for a tool already looked up in the catalog:
// schema is p.tools[tool].
func (p *Parser) newArgsFor(tool string, schema *toolSchema, size int) argBuilder {
	// The arguments are written at the end of the arena and kept there
	// by call; builders are used one after the other, never nested.
	return argBuilder{p: p, tool: tool, schema: schema, args: append(p.arena.room(size+size/8+16), '{')}
}

func (a *argBuilder) add(name, raw string, off int) {
	if len(a.args) > 1 {
		a.args = append(a.args, ',')
	}
	a.args = append(appendString(a.args, name), ':')
	pt, catalog := a.schema.types(name)
	var err *Error
	a.args, err = a.p.appendTyped(a.args, pt, a.tool, name, raw)
	if err != nil && a.err == nil {
		err.Offset = off
		a.err = err
	}
	if catalog && !pt.known && a.err == nil {
		a.err = &Error{Kind: KindUnexpectedTag, Offset: off, Message: fmt.Sprintf("%s has no parameter %q", a.tool, name)}
	}
}

func (a *argBuilder) call(rep repairs) dcall {
	return dcall{name: a.tool, args: a.p.arena.keep(append(a.args, '}')), err: a.err, repairs: rep, listed: a.schema != nil}
}

// decodeXML reads <invoke name="T"><parameter name="p">v</parameter></invoke>
// elements anywhere in s. Values are raw text, not XML-escaped.
func (p *Parser) decodeXML(s string, base int) ([]dcall, *Error) {
	var calls []dcall
	i := 0
	for {
		k := strings.Index(s[i:], "<invoke")
		if k < 0 {
			break
		}
		i += k
		name, j, ok := attr(s, i+len("<invoke"))
		if !ok {
			return calls, &Error{Kind: KindMissingName, Offset: base + i, Message: `write <invoke name="TOOL">`}
		}
		body, end, rep := untilClose(s[j:], "</invoke>")
		a := p.newArgs(name, len(body))
		b := 0
		for {
			t := strings.Index(body[b:], "<")
			if t < 0 {
				break
			}
			b += t
			if !strings.HasPrefix(body[b:], "<parameter") {
				if a.err == nil {
					a.err = &Error{Kind: KindUnexpectedTag, Offset: base + j + b, Message: fmt.Sprintf("unexpected %.20q inside <invoke>; only <parameter name=…> belongs there", body[b:])}
				}
				b++
				continue
			}
			pname, vstart, ok := attr(body, b+len("<parameter"))
			if !ok {
				if a.err == nil {
					a.err = &Error{Kind: KindUnexpectedTag, Offset: base + j + b, Message: `write <parameter name="NAME">value</parameter>`}
				}
				b++
				continue
			}
			vend := strings.Index(body[vstart:], "</parameter>")
			if vend < 0 {
				a.add(pname, body[vstart:], base+j+vstart)
				rep |= rMissingCloseTag
				break
			}
			a.add(pname, body[vstart:vstart+vend], base+j+vstart)
			b = vstart + vend + len("</parameter>")
		}
		if p.opts.Strict && rep != 0 {
			if a.err == nil {
				a.err = &Error{Kind: KindUnclosedBlock, Offset: base + i, Message: "close every <parameter> and <invoke>"}
			}
			rep = 0
		}
		calls = append(calls, a.call(rep))
		if end < 0 {
			break
		}
		i = j + end + len("</invoke>")
	}
	return calls, nil
}

// attr reads ` name="v">` from s[i:]; it returns v and the index after '>'.
func attr(s string, i int) (string, int, bool) {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n') {
		i++
	}
	if !strings.HasPrefix(s[i:], "name=") {
		return "", 0, false
	}
	i += len("name=")
	if i >= len(s) {
		return "", 0, false
	}
	// Names are short: looking only a little way keeps a block full of
	// broken attributes linear.
	const maxAttr = 256
	window := func(from int) string { return s[from:min(len(s), from+maxAttr)] }
	q := s[i]
	var v string
	if q == '"' || q == '\'' {
		e := strings.IndexByte(window(i+1), q)
		if e < 0 {
			return "", 0, false
		}
		v = s[i+1 : i+1+e]
		i += e + 2
	} else {
		e := strings.IndexAny(window(i), " >")
		if e < 0 {
			return "", 0, false
		}
		v = s[i : i+e]
		i += e
	}
	gt := strings.IndexByte(window(i), '>')
	if gt < 0 || strings.TrimSpace(s[i:i+gt]) != "" {
		return "", 0, false
	}
	return v, i + gt + 1, v != ""
}

// decodeQwenCoder reads <function=T><parameter=p>\nv\n</parameter></function>.
func (p *Parser) decodeQwenCoder(s string, base int) ([]dcall, *Error) {
	// The calls are only read until the block's events are out.
	calls := p.scratch[:0]
	defer func() { p.scratch = calls[:0] }()
	i := 0
	for {
		k := strings.Index(s[i:], "<function=")
		if k < 0 {
			break
		}
		i += k + len("<function=")
		gt := strings.IndexByte(s[i:], '>')
		if gt < 0 {
			return calls, &Error{Kind: KindMissingName, Offset: base + i, Message: "write <function=TOOL>"}
		}
		tool := trimSpace(s[i : i+gt])
		i += gt + 1
		body, end, rep := untilClose(s[i:], "</function>")
		schema := p.qx.tool // the qwen3-coder cycle's last tool, compared
		if schema == nil || schema.name != tool {
			schema = p.tools[tool]
		}
		if schema != nil {
			// The catalog's own string: a name read from the block
			// would keep the block alive.
			tool = schema.name
		}
		a := p.newArgsFor(tool, schema, len(body))
		b := 0
		t := strings.Index(body, "<parameter=")
		for {
			if t < 0 {
				if a.err == nil && strings.TrimSpace(body[b:]) != "" {
					a.err = &Error{Kind: KindUnexpectedTag, Offset: base + i + b, Message: "only <parameter=NAME> elements belong inside <function=…>"}
				}
				break
			}
			b += t + len("<parameter=")
			gt := strings.IndexByte(body[b:], '>')
			if gt < 0 {
				if a.err == nil {
					a.err = &Error{Kind: KindUnexpectedTag, Offset: base + i + b, Message: "write <parameter=NAME>"}
				}
				break
			}
			pname := trimSpace(body[b : b+gt])
			b += gt + 1
			next, vend := paramEnd(body[b:])
			stop := vend
			if vend < 0 {
				rep |= rMissingCloseTag
				stop = next
				if stop < 0 {
					stop = len(body) - b
				}
			}
			a.add(pname, trimOneNewline(body[b:b+stop]), base+i+b)
			// The next <parameter= is the one found above, which b
			// moves to at most.
			from := b
			b += stop
			if stop == vend {
				b += len("</parameter>")
			}
			t = -1
			if next >= 0 {
				t = from + next - b
			}
		}
		if p.opts.Strict && rep != 0 {
			if a.err == nil {
				a.err = &Error{Kind: KindUnclosedBlock, Offset: base + i, Message: "close every <parameter=…> and <function=…>"}
			}
			rep = 0
		}
		calls = append(calls, a.call(rep))
		if end < 0 {
			break
		}
		i += end + len("</function>")
	}
	if len(calls) == 0 {
		return nil, &Error{Kind: KindMissingName, Offset: base, Message: "write <function=TOOL> inside <tool_call>"}
	}
	return calls, nil
}

// paramEnd finds, in v (what follows a <parameter=NAME>), the next
// <parameter= and the </parameter> before it (-1 where there is none).
// The value ends at </parameter>, or (lenient) at the next <parameter=;
// looking for the closer only up to there keeps a block full of unclosed
// parameters linear.
func paramEnd(v string) (next, vend int) {
	if lt := strings.IndexByte(v, '<'); lt >= 0 && strings.HasPrefix(v[lt:], "</parameter>") {
		// The value's first '<' closes it, as values mostly are: the
		// next <parameter= is after the closer.
		from := lt + len("</parameter>")
		if next = strings.Index(v[from:], "<parameter="); next >= 0 {
			next += from
		}
		return next, lt
	}
	next = strings.Index(v, "<parameter=")
	lim := len(v)
	if next >= 0 {
		lim = next
	}
	return next, strings.Index(v[:lim], "</parameter>")
}

// trimSpace is strings.TrimSpace, without its call where s starts and
// ends with a printable ASCII byte (a name, mostly).
func trimSpace(s string) string {
	if s != "" && s[0]-0x21 < 0x5e && s[len(s)-1]-0x21 < 0x5e {
		return s
	}
	return strings.TrimSpace(s)
}

func trimOneNewline(s string) string {
	s = strings.TrimPrefix(s, "\n")
	return strings.TrimSuffix(s, "\n")
}

// decodeTags reads the children of a tool tag: <param>value</param>.
func (p *Parser) decodeTags(tool, s string, base int) ([]dcall, *Error) {
	a := p.newArgs(tool, len(s))
	var rep repairs
	i := 0
	for {
		k := strings.IndexByte(s[i:], '<')
		if k < 0 {
			break
		}
		i += k
		gt := strings.IndexByte(s[i:], '>')
		if gt < 0 {
			break
		}
		name := s[i+1 : i+gt]
		if name == "" || strings.ContainsAny(name, " /\n\t<") {
			if a.err == nil {
				a.err = &Error{Kind: KindUnexpectedTag, Offset: base + i, Message: fmt.Sprintf("unexpected %.20q inside <%s>; write <PARAM>value</PARAM>", s[i:], tool)}
			}
			i++
			continue
		}
		v := i + gt + 1
		closer := "</" + name + ">"
		e := strings.Index(s[v:], closer)
		if e < 0 {
			a.add(name, s[v:], base+v)
			rep |= rMissingCloseTag
			break
		}
		a.add(name, s[v:v+e], base+v)
		i = v + e + len(closer)
	}
	if p.opts.Strict && rep != 0 {
		if a.err == nil {
			a.err = &Error{Kind: KindUnclosedBlock, Offset: base, Message: fmt.Sprintf("close every parameter tag inside <%s>", tool)}
		}
		rep = 0
	}
	return []dcall{a.call(rep)}, nil
}

// decodePythonic reads [f(a=1, b="x"), g()] (brackets optional;
// lenient, a tuple of calls too).
func (p *Parser) decodePythonic(s string, base int) ([]dcall, *Error) {
	lenient := !p.opts.Strict
	r := relaxed{s: s, python: true, exprs: lenient}
	r.ws()
	var closer byte
	if r.i < len(s) && (s[r.i] == '[' || s[r.i] == '(' && lenient) {
		closer = ']'
		if s[r.i] == '(' {
			// (f(a=1), g(b=2)): the calls as a tuple.
			closer = ')'
			r.repairs |= rTupleList
		}
		r.i++
	}
	var calls []dcall
	for {
		p.pyWS(&r)
		if r.i >= len(s) {
			if closer != 0 {
				return calls, &Error{Kind: KindBadJSON, Offset: base + r.i, Message: fmt.Sprintf("unclosed call list; close it with '%c'", closer)}
			}
			break
		}
		if closer != 0 && s[r.i] == closer {
			r.i++
			break
		}
		if q := s[r.i]; (q == '\'' || q == '"') && lenient {
			// ['f(a=1)']: the call quoted as a string; or its name.
			c, err := p.quotedCall(&r, base)
			if err != nil {
				return calls, err
			}
			calls = append(calls, c...)
		} else {
			name, rep := pyName(&r, lenient)
			r.ws()
			if name == "" || r.i >= len(s) || s[r.i] != '(' {
				return calls, &Error{Kind: KindBadJSON, Offset: base + r.i, Message: "expected a call like tool(arg=value)"}
			}
			r.i++
			c, err := p.pyArgs(&r, name, base)
			if err != nil {
				return calls, err
			}
			c.repairs |= rep
			calls = append(calls, c)
		}
		p.pyWS(&r)
		if r.i < len(s) && (s[r.i] == ',' || s[r.i] == ';' && closer == 0) {
			r.i++
		}
	}
	p.pyWS(&r)
	if r.i < len(s) {
		return calls, &Error{Kind: KindBadJSON, Offset: base + r.i, Message: "unexpected text after the call list"}
	}
	if r.repairs != 0 {
		for i := range calls {
			calls[i].repairs |= r.repairs & (rTupleList | rLineContinuation)
		}
	}
	return calls, nil
}

// pyWS skips whitespace and, lenient, line continuations (a backslash
// at the end of a line, line_continuation).
func (p *Parser) pyWS(r *relaxed) {
	for {
		r.ws()
		n := continuation(r.s, r.i)
		if n == 0 || p.opts.Strict {
			return
		}
		r.i += n
		r.repairs |= rLineContinuation
	}
}

// continuation returns the length of a line continuation at s[i:]
// (backslash, newline), 0 if there is none.
func continuation[T text](s T, i int) int {
	switch {
	case i+1 < len(s) && s[i] == '\\' && s[i+1] == '\n':
		return 2
	case i+2 < len(s) && s[i] == '\\' && s[i+1] == '\r' && s[i+2] == '\n':
		return 3
	}
	return 0
}

// pyName reads a dotted or dashed identifier at r.i; lenient, a
// Markdown-escaped underscore ("calculate\_BMI") counts as "_", with the
// markdown_escape repair.
func pyName(r *relaxed, lenient bool) (string, repairs) {
	s, start := r.s, r.i
	escaped := false
	for r.i < len(s) {
		c := s[r.i]
		switch {
		case isIdentByte(c) || c == '.' || c == '-':
			r.i++
		case lenient && c == '\\' && r.i+1 < len(s) && s[r.i+1] == '_' && r.i > start:
			escaped = true
			r.i += 2
		default:
			return unescapeName(s[start:r.i], escaped)
		}
	}
	return unescapeName(s[start:r.i], escaped)
}

func unescapeName(n string, escaped bool) (string, repairs) {
	if !escaped {
		return n, 0
	}
	return strings.ReplaceAll(n, `\_`, "_"), rMarkdownEscape
}

// quotedCall reads a call written as a Python string ('f(a=1)'), or a
// call whose name is quoted ('f'(a=1), quoted_name).
func (p *Parser) quotedCall(r *relaxed, base int) ([]dcall, *Error) {
	at := r.i
	v, err := r.str()
	if err != nil {
		return nil, jsonErr(err, base, "the quoted call")
	}
	inner, _ := v.(string)
	after := r.i
	r.ws()
	if r.i < len(r.s) && r.s[r.i] == '(' && isDottedName(inner) {
		r.i++
		c, err := p.pyArgs(r, inner, base)
		c.repairs |= rQuotedName
		return []dcall{c}, err
	}
	r.i = after
	calls, e := p.decodePythonic(inner, base+at+1)
	if e != nil || len(calls) == 0 {
		// 'f(a=1, b='x')': quotes of the same kind inside the string,
		// which then ends too early; read as a call, and its closing
		// quote after it.
		if c, ok := p.unescapedQuotes(r, at, base); ok {
			return []dcall{c}, nil
		}
		r.i = after
	}
	if e != nil {
		return calls, e
	}
	if len(calls) == 0 {
		return nil, &Error{Kind: KindBadJSON, Offset: base + at, Message: "expected a call like tool(arg=value) in the quoted string"}
	}
	for i := range calls {
		calls[i].repairs |= rQuotedCall
	}
	return calls, nil
}

// unescapedQuotes reads the call inside the quotes that open at r.s[at]
// as Python, up to the same quote after its ')'.
func (p *Parser) unescapedQuotes(r *relaxed, at int, base int) (dcall, bool) {
	q := r.s[at]
	r.i = at + 1
	name, rep := pyName(r, true)
	r.ws()
	if name == "" || r.i >= len(r.s) || r.s[r.i] != '(' {
		return dcall{}, false
	}
	r.i++
	c, err := p.pyArgs(r, name, base)
	if err != nil || c.err != nil || r.i >= len(r.s) || r.s[r.i] != q {
		return dcall{}, false
	}
	r.i++
	c.repairs |= rep | rQuotedCall | rUnescapedQuotes
	return c, true
}

func (p *Parser) pyArgs(r *relaxed, name string, base int) (dcall, *Error) {
	c := dcall{name: name}
	var obj chat.Object
	var positional []any
	for {
		p.pyWS(r)
		if r.i >= len(r.s) {
			return c, &Error{Kind: KindBadJSON, Offset: base + r.i, Message: fmt.Sprintf("unclosed '(' in call of %s", name)}
		}
		if r.s[r.i] == ')' {
			r.i++
			break
		}
		key := ""
		save := r.i
		k, krep := pyName(r, !p.opts.Strict)
		if r.i > save && !strings.ContainsAny(k, ".-") {
			r.ws()
			if r.i < len(r.s) && r.s[r.i] == '=' && (r.i+1 >= len(r.s) || r.s[r.i+1] != '=') {
				key = k
				c.repairs |= krep
				r.i++
			} else {
				r.i = save
			}
		} else {
			r.i = save
		}
		// A bare identifier (a variable name in a Java or JavaScript
		// question) or another expression is kept as its text (relaxed's
		// exprs).
		before := r.repairs
		r.repairs = 0
		v, err := r.value()
		c.repairs |= r.repairs & (rBareIdentifier | rExpressionValue | rTupleValue)
		r.repairs |= before
		if err != nil {
			return c, jsonErr(err, base, "the arguments of "+name)
		}
		if key == "" {
			positional = append(positional, v)
		} else {
			obj.Members = append(obj.Members, chat.Member{Key: key, Value: v})
		}
		p.pyWS(r)
		if r.i < len(r.s) && r.s[r.i] == ',' {
			r.i++
		}
	}
	if len(positional) > 0 {
		order := p.paramOrder(name)
		if p.opts.Strict || len(order) < len(positional) {
			c.err = &Error{Kind: KindBadArguments, Offset: base, Message: fmt.Sprintf("call %s with keyword arguments (name=value)", name)}
		} else {
			pos := chat.Object{}
			for i, v := range positional {
				pos.Members = append(pos.Members, chat.Member{Key: order[i], Value: v})
			}
			obj.Members = append(pos.Members, obj.Members...)
			c.repairs |= rPositionalArguments
		}
	}
	c.args = encode(&obj)
	return c, nil
}

// untilClose is the element body before closer and closer's index;
// without closer, the rest of s, -1 and the missing_close_tag repair.
func untilClose(s, closer string) (body string, end int, rep repairs) {
	if end := strings.Index(s, closer); end >= 0 {
		return s[:end], end, 0
	}
	return s, -1, rMissingCloseTag
}

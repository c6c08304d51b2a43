package parse

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/toolharness/toolharness/chat"
)

// This file holds the value readers of the named formats built on a
// Syntax (families.go) that the generic syntax decoder has no notation
// for: DSML's typed parameters and FunctionGemma's argument notation.

// typeAttr reads the attributes of a pair's key element up to valueOpen
// (DSML: `<｜DSML｜parameter name="k" string="true">`, s starting after
// the key's closing quote). It returns how many bytes the attributes
// take and whether the value is text: attr="false" says it is JSON.
// Attributes it cannot read are left to the caller (n 0).
func typeAttr(s, attr, valueOpen string) (n int, text bool) {
	text = true
	i := 0
	for i < len(s) && i < 256 {
		j := skipWS([]byte(s[i:min(len(s), i+64)]), 0) + i
		if valueOpen != "" && strings.HasPrefix(s[j:], valueOpen) {
			return i, text
		}
		k := j
		for k < len(s) && isIdentByte(s[k]) {
			k++
		}
		if k == j || k+1 >= len(s) || s[k] != '=' || s[k+1] != '"' && s[k+1] != '\'' {
			return 0, true
		}
		q := s[k+1]
		e := strings.IndexByte(s[k+2:min(len(s), k+2+64)], q)
		if e < 0 {
			return 0, true
		}
		if s[j:k] == attr {
			text = s[k+2:k+2+e] != "false"
		}
		i = k + 2 + e + 1
	}
	return 0, true
}

// addJSON adds a parameter whose value the model marked as JSON (DSML's
// string="false"). A value that is not JSON is read as text (with the
// schema) when lenient, and is a bad_value strict.
func (a *argBuilder) addJSON(name, raw string, off int) repairs {
	t := strings.TrimSpace(raw)
	r := relaxed{s: t, strict: a.p.opts.Strict}
	v, err := r.value()
	if err == nil {
		if r.ws(); r.i < len(r.s) {
			err = r.fail("unexpected text after the value")
		}
	}
	if err != nil {
		a.add(name, raw, off)
		if a.p.opts.Strict && a.err == nil {
			a.err = &Error{Kind: KindBadValue, Offset: off, Message: fmt.Sprintf("parameter %q of %s is marked as JSON but is not: %v", name, a.tool, err)}
		}
		return 0
	}
	if len(a.args) > 1 {
		a.args = append(a.args, ',')
	}
	a.args = appendJSON(append(appendString(a.args, name), ':'), v)
	if pt, catalog := a.schema.types(name); catalog && !pt.known && a.err == nil {
		a.err = &Error{Kind: KindUnexpectedTag, Offset: off, Message: fmt.Sprintf("%s has no parameter %q", a.tool, name)}
	}
	return r.repairs
}

// gemmaEscape delimits strings in FunctionGemma's notation (Gemma 4's
// is <|"|>: the quote token is a parameter of the notation).
const gemmaEscape = "<escape>"

// decodeGemmaArgs reads FunctionGemma's arguments, as its chat template
// writes them: {key:value,…} with bare keys, strings between <escape>
// markers, numbers, true, false, None, nested objects and lists.
// Lenient, quoted JSON strings and keys are read too (quoted_string),
// and a bare word as a value is a string (bare_identifier), as Google's
// own parsing example casts it. quote is the token strings are written
// between.
func (p *Parser) decodeGemmaArgs(name, args, quote string, base int) dcall {
	c := dcall{name: name}
	t := strings.TrimSpace(args)
	if t == "" {
		c.args = []byte("{}")
		return c
	}
	off := base + strings.Index(args, t)
	g := gemma{s: t, strict: p.opts.Strict, quote: quote}
	g.ws()
	if g.i >= len(g.s) || g.s[g.i] != '{' {
		c.err = &Error{Kind: KindBadArguments, Offset: off, Message: fmt.Sprintf("write the arguments of %s as {key:value,…}", name)}
		return c
	}
	v, err := g.value(0)
	if err == nil {
		if g.ws(); g.i < len(g.s) {
			err = g.fail("unexpected text after the arguments")
		}
	}
	if err != nil {
		c.err = jsonErr(err, off, "arguments of "+name)
		return c
	}
	c.args, c.repairs = encode(v), g.repairs
	return c
}

// gemma reads FunctionGemma's value notation into ordered values.
type gemma struct {
	s, quote string
	i        int
	strict   bool
	repairs  repairs
}

func (g *gemma) fail(format string, args ...any) error {
	return &syntaxError{pos: g.i, msg: fmt.Sprintf(format, args...)}
}

func (g *gemma) ws() {
	for g.i < len(g.s) && isSpace(g.s[g.i]) {
		g.i++
	}
}

func (g *gemma) value(depth int) (any, error) {
	if depth > maxDepth {
		return nil, g.fail("nesting deeper than %d", maxDepth)
	}
	g.ws()
	if g.i >= len(g.s) {
		return nil, g.fail("unexpected end of the arguments")
	}
	switch c := g.s[g.i]; {
	case c == '{':
		return g.object(depth)
	case c == '[':
		return g.list(depth)
	case strings.HasPrefix(g.s[g.i:], g.quote):
		return g.escaped()
	case c == '"' && !g.strict:
		r := relaxed{s: g.s, i: g.i}
		v, err := r.str()
		g.i = r.i
		g.repairs |= rQuotedString | r.repairs
		return v, err
	}
	return g.word()
}

func (g *gemma) escaped() (string, error) {
	start := g.i + len(g.quote)
	e := strings.Index(g.s[start:], g.quote)
	if e < 0 {
		return "", g.fail("string without its closing %s", g.quote)
	}
	g.i = start + e + len(g.quote)
	return g.s[start : start+e], nil
}

// word reads a bare value: a number, true, false, None or null, or
// (lenient) a word kept as a string.
func (g *gemma) word() (any, error) {
	start := g.i
	for g.i < len(g.s) && !strings.ContainsRune(",}]", rune(g.s[g.i])) && !strings.HasPrefix(g.s[g.i:], g.quote) {
		g.i++
	}
	w := strings.TrimSpace(g.s[start:g.i])
	switch {
	case w == "true":
		return true, nil
	case w == "false":
		return false, nil
	case w == "None" || w == "null":
		return nil, nil
	case validNumber(w):
		return json.Number(w), nil
	case w == "":
		g.i = start
		return nil, g.fail("expected a value")
	case g.strict:
		g.i = start
		return nil, g.fail("bare text %q; write strings as %stext%s", w, g.quote, g.quote)
	}
	g.repairs |= rBareIdentifier
	return w, nil
}

func (g *gemma) key() (string, error) {
	g.ws()
	if strings.HasPrefix(g.s[g.i:], g.quote) {
		return g.escaped()
	}
	if g.i < len(g.s) && g.s[g.i] == '"' && !g.strict {
		r := relaxed{s: g.s, i: g.i}
		v, err := r.str()
		g.i = r.i
		if err != nil {
			return "", err
		}
		g.repairs |= rQuotedString | r.repairs
		return v.(string), nil
	}
	start := g.i
	for g.i < len(g.s) && g.s[g.i] != ':' && g.s[g.i] != ',' && g.s[g.i] != '}' && g.s[g.i] != '{' && g.i-start < 256 {
		g.i++
	}
	k := strings.TrimSpace(g.s[start:g.i])
	if k == "" || g.i >= len(g.s) || g.s[g.i] != ':' {
		return "", g.fail("expected key:value")
	}
	return k, nil
}

func (g *gemma) object(depth int) (any, error) {
	g.i++ // {
	obj := &chat.Object{}
	for {
		g.ws()
		if g.i < len(g.s) && g.s[g.i] == '}' && len(obj.Members) == 0 {
			g.i++
			return obj, nil
		}
		k, err := g.key()
		if err != nil {
			return nil, err
		}
		g.ws()
		if g.i >= len(g.s) || g.s[g.i] != ':' {
			return nil, g.fail("expected ':' after key %q", k)
		}
		g.i++
		v, err := g.value(depth + 1)
		if err != nil {
			return nil, err
		}
		obj.Members = append(obj.Members, chat.Member{Key: k, Value: v})
		if done, err := g.next('}'); err != nil || done {
			return obj, err
		}
	}
}

func (g *gemma) list(depth int) (any, error) {
	g.i++ // [
	out := []any{}
	for {
		g.ws()
		if g.i < len(g.s) && g.s[g.i] == ']' && len(out) == 0 {
			g.i++
			return out, nil
		}
		v, err := g.value(depth + 1)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
		if done, err := g.next(']'); err != nil || done {
			return out, err
		}
	}
}

// next reads ',' (done false) or closer (done true) after a member.
func (g *gemma) next(closer byte) (bool, error) {
	g.ws()
	if g.i >= len(g.s) {
		return false, g.fail("unexpected end of the arguments; close with %c", closer)
	}
	switch g.s[g.i] {
	case ',':
		g.i++
		return false, nil
	case closer:
		g.i++
		return true, nil
	}
	return false, g.fail("expected ',' or %c", closer)
}

package parse

import (
	"slices"
	"strings"

	"github.com/toolharness/toolharness/chat"
)

// argKeys are the keys models use for the arguments object, in the order
// they are looked for.
var argKeys = []string{"arguments", "parameters", "args", "input", "params"}

// decodeJSON reads one or more JSON call objects (or lists of them).
// native is the format's own arguments key; arrayNative says a list of
// calls is the format's own syntax (mistral) rather than a repair.
func (p *Parser) decodeJSON(content string, base int, native string, arrayNative bool) ([]dcall, *Error) {
	return p.decodeJSONKeys(content, base, objectKeys{name: "name", args: native}, arrayNative)
}

// objectKeys are the keys a format's call object names the tool and its
// arguments with ("name"/"arguments", "tool_name"/"parameters", …).
type objectKeys struct{ name, args string }

func (p *Parser) decodeJSONKeys(content string, base int, keys objectKeys, arrayNative bool) ([]dcall, *Error) {
	if c, ok := p.readCall(content, base, keys); ok {
		// The slice is only read until the block's events are out.
		p.scratch = append(p.scratch[:0], c)
		return p.scratch, nil
	}
	return p.decodeJSONSlow(content, base, keys, arrayNative)
}

// readCall is fastCall, with what the block's valueEnd read already
// when that was this content.
func (p *Parser) readCall(content string, base int, keys objectKeys) (dcall, bool) {
	b := &p.b
	if !b.preOK || keys != b.keys {
		return p.fastCall(content, keys)
	}
	i := skipWS(content, 0)
	f := b.pre
	if base+i != b.start+b.vpos || skipWS(content, i+f.end-b.vpos) != len(content) {
		return p.fastCall(content, keys)
	}
	d := i - b.vpos
	return dcall{name: content[f.nameFrom+d : f.nameTo+d], args: f.args}, true
}

// fastKeys are the keys of the call object the fast path reads in a
// block opened by o, if it reads one: those decode gives decodeJSON.
func (p *Parser) fastKeys(o *opener) (objectKeys, bool) {
	switch o.dec {
	case dToolCall:
		return objectKeys{name: "name", args: "arguments"}, true
	case dJSON:
		return objectKeys{name: "name", args: p.nativeArgsKey()}, true
	}
	return objectKeys{}, false
}

// decodeJSONSlow reads call objects through relaxed, with every repair.
func (p *Parser) decodeJSONSlow(content string, base int, keys objectKeys, arrayNative bool) ([]dcall, *Error) {
	strict := p.opts.Strict
	if !strict {
		if calls, ok := p.missingBraces(content, base, keys); ok {
			return calls, nil
		}
	}
	vals, rep, err := readValues(content, strict)
	if err != nil && !strict {
		// A call object a bracket or two short or too many, balanced.
		if fixed, added, ok := balanceBrackets(content); ok {
			if v, rep2, err2 := readValues(fixed, false); err2 == nil {
				vals, rep, err = v, rep2|rMissingBraces, nil
				if added {
					rep |= rAddedClosers
				}
			}
		}
	}
	calls := p.jsonCalls(vals, rep, keys, arrayNative, base)
	if err != nil {
		return calls, jsonErr(err, base, "the tool call")
	}
	return calls, nil
}

// readValues reads the JSON values of a block's content, one after the
// other (',' or ';' between them allowed), as far as they read.
func readValues(content string, strict bool) ([]any, repairs, error) {
	r := relaxed{s: content, strict: strict}
	var vals []any
	for {
		r.ws()
		if r.i >= len(r.s) {
			break
		}
		if len(vals) > 0 && (r.s[r.i] == ',' || r.s[r.i] == ';') {
			r.i++
			continue
		}
		v, err := r.value()
		if err != nil {
			return vals, r.repairs, err
		}
		vals = append(vals, v)
	}
	return vals, r.repairs, nil
}

// balanceBrackets returns content with its brackets balanced, when they
// are not and at most maxExtraClosers are missing at the end or left over
// after the value: the closers still open are added, in order, and
// closers after the value has closed (only brackets and whitespace
// follow) are dropped; added says which. A ']' met while an object
// inside the list is open gets the object's missing closers before it
// (added), and a '}' met while only lists are open is dropped. ok is
// false when content is balanced, ends inside a string, or has another
// closer that does not match its opener.
func balanceBrackets(content string) (fixed string, added, ok bool) {
	var open []byte
	// inserted holds content up to i with the closers a mismatched
	// closer showed missing; nil while none was.
	var inserted []byte
	from, n, grew := 0, 0, false
	for i := 0; i < len(content); i++ {
		switch c := content[i]; c {
		case '"', '\'':
			end, ok := skipString(content, i)
			if !ok {
				return "", false, false
			}
			i = end - 1
		case '{':
			open = append(open, '}')
		case '[':
			open = append(open, ']')
		case '}', ']':
			if len(open) == 0 {
				rest := strings.TrimLeft(content[i:], "}] \t\r\n")
				if rest != "" || strings.Count(content[i:], "}")+strings.Count(content[i:], "]") > maxExtraClosers {
					return "", false, false
				}
				return string(append(inserted, content[from:i]...)), grew, true
			}
			// A ']' where a '}' is open: the object inside the list was
			// left a brace short ([{"name": …, "arguments": {…}]), and
			// its closers go before the ']'.
			for c == ']' && n < maxExtraClosers && open[len(open)-1] == '}' && slices.Contains(open, ']') {
				inserted = append(append(inserted, strings.TrimRight(content[from:i], " \t\r\n")...), '}')
				from, n, grew = i, n+1, true
				open = open[:len(open)-1]
			}
			// A '}' where only lists are open: one too many after a
			// call object in a list ([{…}}}]), dropped.
			if c == '}' && n < maxExtraClosers && open[len(open)-1] == ']' && !slices.Contains(open, '}') {
				inserted = append(inserted, content[from:i]...)
				from, n = i+1, n+1
				continue
			}
			if open[len(open)-1] != c {
				return "", false, false
			}
			open = open[:len(open)-1]
		}
	}
	if n > 0 {
		content = string(append(inserted, content[from:]...))
	}
	if len(open) == 0 && n > 0 {
		return content, grew, true
	}
	if len(open) == 0 || len(open)+n > maxExtraClosers {
		return "", false, false
	}
	b := []byte(strings.TrimRight(content, " \t\r\n"))
	for i := len(open) - 1; i >= 0; i-- {
		b = append(b, open[i])
	}
	return string(b), true, true
}

// missingBraces reads `"name": …, "arguments": {…}` written without the
// surrounding braces.
func (p *Parser) missingBraces(content string, base int, keys objectKeys) ([]dcall, bool) {
	t := strings.TrimSpace(content)
	if !strings.HasPrefix(t, `"`) && !strings.HasPrefix(t, `'`) {
		return nil, false
	}
	r := relaxed{s: "{" + t + "}"}
	v, err := r.value()
	if err != nil {
		return nil, false
	}
	r.ws()
	if r.i < len(r.s) {
		return nil, false
	}
	calls := p.jsonCalls([]any{v}, r.repairs|rMissingBraces, keys, false, base)
	return calls, len(calls) > 0 && calls[0].name != ""
}

func (p *Parser) jsonCalls(vals []any, rep repairs, keys objectKeys, arrayNative bool, base int) []dcall {
	var calls []dcall
	for _, v := range vals {
		switch x := v.(type) {
		case []any:
			r := rep
			if !arrayNative {
				if p.opts.Strict {
					calls = append(calls, dcall{err: &Error{Kind: KindBadJSON, Offset: base, Message: "expected one call object, got a list"}})
					continue
				}
				r |= rArrayWrapped
			}
			for _, e := range x {
				calls = append(calls, p.callObject(e, r, keys, base))
			}
		default:
			calls = append(calls, p.callObject(v, rep, keys, base))
		}
	}
	return calls
}

func (p *Parser) callObject(v any, rep repairs, keys objectKeys, base int) dcall {
	strict := p.opts.Strict
	native := keys.args
	obj, ok := v.(*chat.Object)
	if !ok {
		return dcall{repairs: rep, err: &Error{Kind: KindBadJSON, Offset: base, Message: "a tool call must be a JSON object with \"name\" and \"arguments\""}}
	}
	if !strict {
		if c, ok := p.nestedCall(obj, rep, keys, base); ok {
			return c
		}
	}
	c := dcall{repairs: rep}
	nameKeyUsed := nameOf(&c, obj, keys.name, strict)
	if id, ok := get(obj, "id"); ok {
		c.id, _ = id.(string)
	}
	if c.name == "" {
		c.err = &Error{Kind: KindMissingName, Offset: base, Message: "tool call without \"name\"; give the tool name as a string"}
	}
	argKey, args := argsOf(obj, native)
	switch {
	case argKey == "":
		flatArgs(&c, obj, nameKeyUsed, native, strict, base)
		return c
	case argKey != native && !(native == "parameters" && argKey == "arguments"):
		if strict {
			c.err = orErr(c.err, &Error{Kind: KindBadArguments, Offset: base, Message: "use \"" + native + "\" for the arguments, not \"" + argKey + "\""})
			return c
		}
		c.repairs |= rArgumentsKey
	}
	argsValue(&c, args, strict, base)
	return c
}

// nestedCall reads a call wrapped in another object:
// {"type":"function","function":{…}}, {"tool_call":{…}},
// {"function_call":{…}}, or the first of {"tool_calls":[…]}. An id beside
// the wrapped call stands for the one it lacks.
func (p *Parser) nestedCall(obj *chat.Object, rep repairs, keys objectKeys, base int) (dcall, bool) {
	for _, k := range []string{"function", "tool_call", "function_call"} {
		if inner, ok := get(obj, k); ok {
			if io, ok := inner.(*chat.Object); ok {
				c := p.callObject(io, rep|rNestedCall, keys, base)
				if c.id == "" {
					if id, ok := get(obj, "id"); ok {
						c.id, _ = id.(string)
					}
				}
				return c, true
			}
		}
	}
	if tc, ok := get(obj, "tool_calls"); ok {
		if list, ok := tc.([]any); ok && len(list) > 0 {
			return p.callObject(list[0], rep|rNestedCall, keys, base), true
		}
	}
	return dcall{}, false
}

// nameOf sets c's name from key or, repaired, from the first other key
// models name the tool with whose value is a string, and returns the key
// it came from: that key is no argument when the arguments are flattened.
func nameOf(c *dcall, obj *chat.Object, key string, strict bool) string {
	if n, ok := get(obj, key); ok {
		c.name, _ = n.(string)
		return key
	}
	if strict {
		return key
	}
	for _, k := range []string{"name", "function", "tool_name", "tool"} {
		if n, ok := get(obj, k); ok {
			if s, ok := n.(string); ok {
				c.name = s
				c.repairs |= rNameKey
				return k
			}
		}
	}
	return key
}

// argsOf finds the arguments under the format's own key, else under the
// first of argKeys present; key is "" when neither holds them.
func argsOf(obj *chat.Object, native string) (key string, args any) {
	if a, ok := get(obj, native); ok {
		key, args = native, a
	}
	// A member under an empty native key leaves key "": argKeys are
	// still looked for.
	for _, k := range argKeys {
		if key != "" {
			break
		}
		if a, ok := get(obj, k); ok {
			return k, a
		}
	}
	return key, args
}

// flatArgs sets c's arguments to the members written beside the name, as
// models do that leave out the arguments object.
func flatArgs(c *dcall, obj *chat.Object, nameKey, native string, strict bool, base int) {
	rest := &chat.Object{}
	for _, m := range obj.Members {
		switch m.Key {
		case nameKey, "type", "id":
			continue
		}
		rest.Members = append(rest.Members, m)
	}
	if len(rest.Members) > 0 {
		if strict {
			c.err = orErr(c.err, &Error{Kind: KindBadArguments, Offset: base, Message: "put the arguments in an \"" + native + "\" object"})
		} else {
			c.repairs |= rFlattenedArguments
		}
	}
	c.args = encode(rest)
}

// argsValue sets c's arguments from their value, which must be an object:
// null is none, and a string is read for the object it may hold.
func argsValue(c *dcall, args any, strict bool, base int) {
	switch a := args.(type) {
	case *chat.Object:
		c.args = encode(a)
	case nil:
		c.args = []byte("{}")
	case string:
		if strict {
			c.err = orErr(c.err, &Error{Kind: KindBadArguments, Offset: base, Message: "arguments must be a JSON object, not a string"})
			return
		}
		stringArgs(c, a, base)
	default:
		c.err = orErr(c.err, &Error{Kind: KindBadArguments, Offset: base, Message: "arguments must be a JSON object"})
	}
}

// stringArgs reads arguments written as a string of JSON: empty is none,
// and anything but one object is an error.
func stringArgs(c *dcall, s string, base int) {
	t := strings.TrimSpace(s)
	if t == "" {
		c.args = []byte("{}")
		c.repairs |= rArgumentsString
		return
	}
	r := relaxed{s: t}
	v, err := r.value()
	if err == nil {
		r.ws()
	}
	if o, ok := v.(*chat.Object); err == nil && ok && r.i == len(r.s) {
		c.args = encode(o)
		c.repairs |= rArgumentsString | r.repairs
		return
	}
	c.err = orErr(c.err, &Error{Kind: KindBadArguments, Offset: base, Message: "arguments must be a JSON object; the string given does not hold one"})
}

func orErr(a, b *Error) *Error {
	if a != nil {
		return a
	}
	return b
}

func get(o *chat.Object, key string) (any, bool) { return o.Get(key) }

package parse

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/toolharness/toolharness/chat"
)

// toolSchema is a tool's parameter schema, decoded on first use.
type toolSchema struct {
	// name is the tool's name, the map key it is stored under.
	name   string
	raw    json.RawMessage
	loaded bool
	props  *chat.Object
	// params caches the value types of parameters looked up so far.
	params map[string]paramTypes
	// frozen: params holds every parameter the schema declares, and
	// nothing is written any more (freeze).
	frozen bool
}

func (t *toolSchema) properties() *chat.Object {
	if !t.loaded {
		t.loaded = true
		if v, err := chat.DecodeOrdered(t.raw); err == nil {
			if o, ok := v.(*chat.Object); ok {
				if pr, ok := o.Get("properties"); ok {
					t.props, _ = pr.(*chat.Object)
				}
			}
		}
	}
	return t.props
}

// paramOrder lists a tool's parameters in schema order (for positional
// pythonic arguments).
func (p *Parser) paramOrder(tool string) []string {
	if p.tools == nil || p.tools[tool] == nil {
		return nil
	}
	props := p.tools[tool].properties()
	if props == nil {
		return nil
	}
	out := make([]string, 0, len(props.Members))
	for _, m := range props.Members {
		out = append(out, m.Key)
	}
	return out
}

// schemaTypes collects the JSON types a schema allows, following anyOf,
// oneOf and type lists; enum of strings counts as string.
func schemaTypes(s any, into map[string]bool, depth int) {
	o, ok := s.(*chat.Object)
	if !ok || depth > 8 {
		return
	}
	if t, ok := o.Get("type"); ok {
		switch x := t.(type) {
		case string:
			into[x] = true
		case []any:
			for _, e := range x {
				if n, ok := e.(string); ok {
					into[n] = true
				}
			}
		}
	}
	for _, k := range []string{"anyOf", "oneOf", "allOf"} {
		if l, ok := o.Get(k); ok {
			if list, ok := l.([]any); ok {
				for _, e := range list {
					schemaTypes(e, into, depth+1)
				}
			}
		}
	}
	if _, ok := o.Get("nullable"); ok {
		if b, _ := o.Get("nullable"); b == true {
			into["null"] = true
		}
	}
	if len(into) == 0 {
		if e, ok := o.Get("enum"); ok {
			if list, ok := e.([]any); ok {
				for _, v := range list {
					switch v.(type) {
					case string:
						into["string"] = true
					case json.Number:
						into["number"] = true
					case bool:
						into["boolean"] = true
					case nil:
						into["null"] = true
					}
				}
			}
		}
	}
}

// JSON types a parameter's schema allows, as a bit set.
type typeSet uint8

const (
	tNull typeSet = 1 << iota
	tBoolean
	tInteger
	tNumber
	tArray
	tObject
	tString
)

var typeNames = [...]struct {
	t    typeSet
	name string
}{{tNull, "null"}, {tBoolean, "boolean"}, {tInteger, "integer"}, {tNumber, "number"}, {tArray, "array"}, {tObject, "object"}, {tString, "string"}}

// paramTypes is what a parameter's schema says of its values, worked out
// once per parameter (a call-dense output reads the same parameters over
// and over).
type paramTypes struct {
	known bool
	types typeSet
}

// types returns the value types of a parameter of this tool; catalog is
// false when the tool is not in the catalog (t is nil).
func (t *toolSchema) types(name string) (pt paramTypes, catalog bool) {
	if t == nil {
		return pt, false
	}
	if pt, ok := t.params[name]; ok || t.frozen {
		return pt, true
	}
	pt = t.paramTypes(name)
	if t.params == nil {
		t.params = map[string]paramTypes{}
	}
	if len(t.params) < maxCachedParams {
		t.params[name] = pt
	}
	return pt, true
}

// paramTypes works out what the schema says of parameter name's values.
func (t *toolSchema) paramTypes(name string) (pt paramTypes) {
	props := t.properties()
	if props != nil {
		if s, ok := props.Get(name); ok {
			set := map[string]bool{}
			schemaTypes(s, set, 0)
			pt.known = true
			for _, n := range typeNames {
				if set[n.name] {
					pt.types |= n.t
				}
			}
		}
	}
	return pt
}

// maxCachedParams bounds the parameters remembered per tool (names come
// from the model, which may invent any number).
const maxCachedParams = 256

// appendTyped appends a raw-text parameter value, decoded by its types
// (from the schema), as JSON. Without known types the text is kept as a
// string.
func (p *Parser) appendTyped(dst []byte, pt paramTypes, tool, name, raw string) ([]byte, *Error) {
	types := pt.types
	if !pt.known || types == 0 {
		return appendString(dst, raw), nil
	}
	t := strings.TrimSpace(raw)
	lenient := !p.opts.Strict
	if types&tNull != 0 && (t == "null" || lenient && t == "None") {
		return append(dst, "null"...), nil
	}
	if types&tBoolean != 0 {
		switch {
		case t == "true" || lenient && strings.EqualFold(t, "true"):
			return append(dst, "true"...), nil
		case t == "false" || lenient && strings.EqualFold(t, "false"):
			return append(dst, "false"...), nil
		}
	}
	if types&tInteger != 0 && validNumber(t) && !strings.ContainsAny(t, ".eE") {
		return append(dst, t...), nil
	}
	if types&tNumber != 0 && validNumber(t) {
		return append(dst, t...), nil
	}
	if types&(tArray|tObject) != 0 && t != "" && (t[0] == '[' && types&tArray != 0 || t[0] == '{' && types&tObject != 0) {
		// Plain JSON is copied compact; anything else goes through
		// relaxed, with its repairs.
		if out, end, ok := compactValue(dst, t, 0); ok && end == len(t) {
			return out, nil
		}
		r := relaxed{s: t, strict: p.opts.Strict}
		if v, err := r.value(); err == nil {
			r.ws()
			if r.i == len(r.s) {
				switch v.(type) {
				case []any:
					if types&tArray != 0 {
						return appendJSON(dst, v), nil
					}
				case *chat.Object:
					if types&tObject != 0 {
						return appendJSON(dst, v), nil
					}
				}
			}
		}
	}
	if types&tString != 0 {
		return appendString(dst, raw), nil
	}
	want := make([]string, 0, len(typeNames))
	for _, n := range typeNames[:6] {
		if types&n.t != 0 {
			want = append(want, n.name)
		}
	}
	shown := t
	if len(shown) > 40 {
		shown = shown[:40] + "…"
	}
	return appendString(dst, raw), &Error{Kind: KindBadValue, Message: fmt.Sprintf("parameter %q of %s must be %s, got %q", name, tool, strings.Join(want, " or "), shown)}
}

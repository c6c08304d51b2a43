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

// param returns the schema of a tool's parameter; known is false when the
// catalog has the tool but not the parameter.
func (p *Parser) param(tool, name string) (schema any, known, catalog bool) {
	if p.tools == nil {
		return nil, false, false
	}
	t := p.tools[tool]
	if t == nil {
		return nil, false, false
	}
	props := t.properties()
	if props == nil {
		return nil, false, true
	}
	s, ok := props.Get(name)
	return s, ok, true
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

// rawValue decodes a raw-text parameter value by its schema. Without a
// schema the text is kept as a string.
func (p *Parser) rawValue(tool, name, raw string) (any, *Error) {
	schema, known, _ := p.param(tool, name)
	if !known {
		return raw, nil
	}
	types := map[string]bool{}
	schemaTypes(schema, types, 0)
	if len(types) == 0 {
		return raw, nil
	}
	t := strings.TrimSpace(raw)
	lenient := !p.opts.Strict
	if types["null"] && (t == "null" || lenient && t == "None") {
		return nil, nil
	}
	if types["boolean"] {
		switch {
		case t == "true" || lenient && strings.EqualFold(t, "true"):
			return true, nil
		case t == "false" || lenient && strings.EqualFold(t, "false"):
			return false, nil
		}
	}
	if types["integer"] && validNumber(t) && !strings.ContainsAny(t, ".eE") {
		return json.Number(t), nil
	}
	if types["number"] && validNumber(t) {
		return json.Number(t), nil
	}
	if types["array"] || types["object"] {
		r := relaxed{s: t, strict: p.opts.Strict}
		if v, err := r.value(); err == nil {
			r.ws()
			if r.i == len(r.s) {
				switch v.(type) {
				case []any:
					if types["array"] {
						return v, nil
					}
				case *chat.Object:
					if types["object"] {
						return v, nil
					}
				}
			}
		}
	}
	if types["string"] {
		return raw, nil
	}
	want := make([]string, 0, len(types))
	for _, k := range []string{"null", "boolean", "integer", "number", "array", "object"} {
		if types[k] {
			want = append(want, k)
		}
	}
	shown := t
	if len(shown) > 40 {
		shown = shown[:40] + "…"
	}
	return raw, &Error{Kind: KindBadValue, Message: fmt.Sprintf("parameter %q of %s must be %s, got %q", name, tool, strings.Join(want, " or "), shown)}
}

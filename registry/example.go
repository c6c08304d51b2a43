package registry

import (
	"encoding/json"
	"fmt"
	"math/big"
	"sort"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/toolharness/toolharness/chat"
)

// exampleArgs builds the arguments of a corrected example call: the
// values the model gave that are valid are kept, missing required and
// invalid ones are replaced by a placeholder derived from the schema
// (default, const, first enum value, first example, or a typed
// placeholder), and unknown parameters are dropped. Keys follow the
// schema's order, so the example is deterministic.
func exampleArgs(e *entry, inst any) json.RawMessage {
	given, _ := inst.(map[string]any)
	root := deref(e.schema)
	required := map[string]bool{}
	if root != nil {
		for _, n := range root.Required {
			required[n] = true
		}
	}
	order := e.order
	if len(order) == 0 && root != nil {
		for n := range root.Properties {
			order = append(order, n)
		}
		sort.Strings(order)
	}
	obj := &chat.Object{}
	for _, name := range order {
		var sub *jsonschema.Schema
		if root != nil {
			sub = root.Properties[name]
		}
		v, ok := given[name]
		switch {
		case ok && sub != nil && safeValidate(sub, v) == nil:
			obj.Members = append(obj.Members, chat.Member{Key: name, Value: v})
		case ok || required[name]:
			obj.Members = append(obj.Members, chat.Member{Key: name, Value: placeholder(sub, name)})
		}
	}
	data, err := chat.EncodeOrdered(obj)
	if err != nil {
		return json.RawMessage("{}")
	}
	return data
}

// placeholder returns a value that stands for what the parameter wants.
func placeholder(s *jsonschema.Schema, name string) any {
	s = deref(s)
	if s == nil {
		return "<" + name + ">"
	}
	switch {
	case s.Default != nil:
		return *s.Default
	case s.Const != nil:
		return *s.Const
	case s.Enum != nil && len(s.Enum.Values) > 0:
		return s.Enum.Values[0]
	case len(s.Examples) > 0:
		return s.Examples[0]
	}
	if s.Types != nil && !s.Types.IsEmpty() {
		types := s.Types.ToStrings()
		for _, pref := range []string{"string", "integer", "number", "boolean", "array", "object", "null"} {
			for _, t := range types {
				if t == pref {
					return typedPlaceholder(s, t, name)
				}
			}
		}
	}
	for _, alt := range append(append([]*jsonschema.Schema(nil), s.AnyOf...), s.OneOf...) {
		if alt != nil {
			return placeholder(alt, name)
		}
	}
	return "<" + name + ">"
}

func typedPlaceholder(s *jsonschema.Schema, typ, name string) any {
	var cands []any
	switch typ {
	case "string":
		cands = []any{"<" + name + ">"}
	case "integer", "number":
		for _, r := range []*big.Rat{s.Minimum, s.ExclusiveMinimum, s.MultipleOf, s.Maximum, s.ExclusiveMaximum} {
			if r != nil {
				cands = append(cands, numberNear(r, typ == "integer")...)
			}
		}
		cands = append(cands, json.Number("0"), json.Number("1"))
	case "boolean":
		cands = []any{true}
	case "array":
		var item *jsonschema.Schema
		if it, ok := s.Items.(*jsonschema.Schema); ok {
			item = it
		}
		if s.Items2020 != nil {
			item = s.Items2020
		}
		cands = []any{[]any{}, []any{placeholder(item, name)}}
	case "object":
		obj := map[string]any{}
		for _, req := range s.Required {
			obj[req] = placeholder(s.Properties[req], req)
		}
		cands = []any{obj}
	case "null":
		return nil
	}
	// The first candidate the schema accepts; else the first one, which
	// still shows the type.
	for _, c := range cands {
		if safeValidate(s, c) == nil {
			return c
		}
	}
	if len(cands) > 0 {
		return cands[0]
	}
	return fmt.Sprintf("<%s>", name)
}

// numberNear returns candidate numbers at and just inside a bound.
func numberNear(r *big.Rat, integer bool) []any {
	var out []any
	for _, d := range []int64{0, 1, -1} {
		v := new(big.Rat).Add(r, big.NewRat(d, 1))
		if integer || v.IsInt() {
			q := new(big.Int).Quo(v.Num(), v.Denom())
			if !v.IsInt() && v.Sign() > 0 {
				q.Add(q, big.NewInt(1))
			}
			out = append(out, json.Number(q.String()))
			continue
		}
		out = append(out, json.Number(strings.TrimRight(strings.TrimRight(v.FloatString(6), "0"), ".")))
	}
	return out
}

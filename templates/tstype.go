package templates

import (
	"strings"

	"github.com/toolharness/toolharness/chat"
)

// tsType is gpt-oss's render_typescript_type macro: a JSON Schema as the
// TypeScript type the harmony developer message shows.
func tsType(spec any) string {
	o, _ := spec.(*chat.Object)
	typ := objGet(o, "type")
	nullable := truthy(objGet(o, "nullable"))
	orNull := func(s string) string {
		if nullable {
			return s + " | null"
		}
		return s
	}
	switch {
	case typ == "array":
		items, ok := objGet(o, "items").(*chat.Object)
		if !ok || len(items.Members) == 0 {
			return orNull("any[]")
		}
		switch objGet(items, "type") {
		case "string":
			return orNull("string[]")
		case "number", "integer":
			return orNull("number[]")
		case "boolean":
			return orNull("boolean[]")
		}
		inner := tsType(items)
		if inner == "object | object" || len([]rune(inner)) > 50 {
			return orNull("any[]")
		}
		return orNull(inner + "[]")
	case kind(typ) == "array" && len(typ.([]any)) > 0:
		l := typ.([]any)
		parts := make([]string, len(l))
		for i, e := range l {
			parts[i] = PyStr(e)
		}
		return strings.Join(parts, " | ")
	case truthy(objGet(o, "oneOf")):
		variants, _ := objGet(o, "oneOf").([]any)
		hasObject := false
		for _, v := range variants {
			if objGet(v, "type") == "object" {
				hasObject = true
			}
		}
		if hasObject && len(variants) > 1 {
			return "any"
		}
		var b strings.Builder
		for i, v := range variants {
			b.WriteString(tsType(v))
			if d := objGet(v, "description"); truthy(d) {
				b.WriteString("// " + PyStr(d))
			}
			if i < len(variants)-1 {
				b.WriteString(" | ")
			}
		}
		return b.String()
	case typ == "string":
		if enum, ok := objGet(o, "enum").([]any); ok && len(enum) > 0 {
			parts := make([]string, len(enum))
			for i, e := range enum {
				parts[i] = PyStr(e)
			}
			return `"` + strings.Join(parts, `" | "`) + `"`
		}
		return orNull("string")
	case typ == "number", typ == "integer":
		return "number"
	case typ == "boolean":
		return "boolean"
	case typ == "object":
		props, ok := objGet(o, "properties").(*chat.Object)
		if !ok || len(props.Members) == 0 {
			return "object"
		}
		required, _ := objGet(o, "required").([]any)
		var b strings.Builder
		b.WriteString("{\n")
		for i, m := range props.Members {
			b.WriteString(m.Key)
			if !inAny(m.Key, required) {
				b.WriteString("?")
			}
			// The official macro prints a newline and indentation here
			// (a {{ }} tag without whitespace control).
			b.WriteString(": \n                " + tsType(m.Value))
			if i < len(props.Members)-1 {
				b.WriteString(", ")
			}
		}
		b.WriteString("}")
		return b.String()
	}
	return "any"
}

func inAny(s string, l []any) bool {
	for _, e := range l {
		if e == s {
			return true
		}
	}
	return false
}

// truthy is Jinja truthiness of a JSON value.
func truthy(v any) bool {
	switch x := v.(type) {
	case nil:
		return false
	case bool:
		return x
	case string:
		return x != ""
	case []any:
		return len(x) > 0
	case *chat.Object:
		return x != nil && len(x.Members) > 0
	}
	return true // numbers: good enough, 0 is rare in schemas
}

// pyType is Hermes' json_to_python_type macro, including its oddities: an
// array's item type is looked up on the wrong value, so every array reads
// list[Union[]], and a schema without a type reads Union[].
func pyType(spec any) string {
	typ := objGet(spec, "type")
	switch typ {
	case "string":
		return "str"
	case "number":
		return "float"
	case "integer":
		return "int"
	case "boolean":
		return "bool"
	case "array":
		return "list[Union[]]"
	case "object":
		if ap, ok := chat.Lookup(spec, "additionalProperties"); ok {
			return "dict[str, " + pyType(ap) + "]"
		}
		return "dict"
	}
	switch t := typ.(type) {
	case []any:
		parts := make([]string, len(t))
		for i, e := range t {
			parts[i] = pyType(&chat.Object{Members: []chat.Member{{Key: "type", Value: e}}})
		}
		return "Union[" + strings.Join(parts, ",") + "]"
	case nil:
		return "Union[]"
	}
	return "Any"
}

// TypeScriptType is the TypeScript type gpt-oss's template shows for a
// JSON Schema (an ordered value from chat.DecodeOrdered); render uses it for
// harmony catalogs.
func TypeScriptType(schema any) string { return tsType(schema) }

package registry

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/toolharness/toolharness/chat"
)

// coerce applies the documented lossless coercions to an ordered value
// (from chat.DecodeOrdered) under schema s, recording each one. It only
// touches strings the schema does not accept as they are.
func coerce(v any, s *jsonschema.Schema, loc []string, out *[]Coercion) any {
	s = deref(s)
	if s == nil {
		return v
	}
	switch x := v.(type) {
	case *chat.Object:
		for i, m := range x.Members {
			sub, ok := s.Properties[m.Key]
			if !ok {
				sub, _ = s.AdditionalProperties.(*jsonschema.Schema)
			}
			if sub == nil {
				continue
			}
			x.Members[i].Value = coerce(m.Value, sub, with(loc, m.Key), out)
		}
		return x
	case []any:
		for i, e := range x {
			var sub *jsonschema.Schema
			switch {
			case i < len(s.PrefixItems):
				sub = s.PrefixItems[i]
			case s.Items2020 != nil:
				sub = s.Items2020
			default:
				sub, _ = s.Items.(*jsonschema.Schema)
			}
			if sub != nil {
				x[i] = coerce(e, sub, with(loc, strconv.Itoa(i)), out)
			}
		}
		return x
	case string:
		if s.Types == nil || s.Types.IsEmpty() || safeValidate(s, x) == nil {
			return v
		}
		nv, ok := coerceString(x, s.Types.ToStrings())
		if !ok {
			return v
		}
		from, _ := chat.Marshal(x)
		if c, isContainer := nv.(*chat.Object); isContainer {
			nv = coerce(c, s, loc, out)
		} else if a, isArr := nv.([]any); isArr {
			nv = coerce(a, s, loc, out)
		}
		to, err := chat.EncodeOrdered(nv)
		if err != nil {
			return v
		}
		*out = append(*out, Coercion{Path: coercionPath(loc), From: string(from), To: string(to)})
		return nv
	}
	return v
}

// coerceString converts s to the first allowed type it represents
// exactly. Numbers keep their literal text (json.Number), so nothing is
// rounded.
func coerceString(s string, types []string) (any, bool) {
	t := strings.TrimSpace(s)
	if t != s {
		// Surrounding whitespace would be lost: not lossless.
		return nil, false
	}
	for _, typ := range types {
		switch typ {
		case "integer":
			if n, err := strconv.ParseInt(s, 10, 64); err == nil && strconv.FormatInt(n, 10) == s {
				return json.Number(s), true
			}
		case "number":
			if isJSONNumber(s) {
				return json.Number(s), true
			}
		case "boolean":
			if s == "true" || s == "false" {
				return s == "true", true
			}
		case "null":
			if s == "null" {
				return nil, true
			}
		case "array", "object":
			open := byte('[')
			if typ == "object" {
				open = '{'
			}
			if len(s) == 0 || s[0] != open {
				continue
			}
			if v, err := chat.DecodeOrdered([]byte(s)); err == nil {
				return v, true
			}
		}
	}
	return nil, false
}

func isJSONNumber(s string) bool {
	if s == "" || (s[0] != '-' && (s[0] < '0' || s[0] > '9')) {
		return false
	}
	var n json.Number
	if err := json.Unmarshal([]byte(s), &n); err != nil {
		return false
	}
	return string(n) == s
}

func coercionPath(loc []string) string {
	if len(loc) == 0 {
		return "(arguments)"
	}
	var b strings.Builder
	for i, seg := range loc {
		if _, err := strconv.Atoi(seg); err == nil && i > 0 {
			b.WriteString("[" + seg + "]")
			continue
		}
		if i > 0 {
			b.WriteByte('.')
		}
		b.WriteString(seg)
	}
	return b.String()
}

// with returns loc extended by seg without sharing loc's backing array.
func with(loc []string, seg string) []string {
	return append(append(make([]string, 0, len(loc)+1), loc...), seg)
}

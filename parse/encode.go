package parse

import (
	"encoding/json"
	"unicode/utf8"

	"github.com/toolharness/toolharness/chat"
)

// encode writes an ordered value as compact JSON into one buffer sized
// up front: a call's arguments can be a whole megabyte-long block, and
// growing the buffer by append's 1.25× steps would copy it several times.
func encode(v any) []byte { return appendJSON(make([]byte, 0, jsonSizeHint(v, 0)), v) }

// jsonSizeHint is about the length of v as JSON: exact for unescaped
// strings, with room for a few escapes, so that appendJSON rarely grows.
func jsonSizeHint(v any, depth int) int {
	if depth > 64 {
		return 64
	}
	switch x := v.(type) {
	case *chat.Object:
		n := 2
		for _, m := range x.Members {
			n += len(m.Key) + len(m.Key)/8 + 2 + 1 + jsonSizeHint(m.Value, depth+1) + 1
		}
		return n
	case []any:
		n := 2
		for _, e := range x {
			n += jsonSizeHint(e, depth+1) + 1
		}
		return n
	case string:
		return len(x) + len(x)/8 + 2
	case json.Number:
		return len(x)
	}
	return 16
}

// appendJSON writes an ordered value as compact JSON without HTML
// escaping. Strings that need no escaping (nearly all) are copied as is;
// the others go through chat.Marshal.
func appendJSON(b []byte, v any) []byte {
	switch x := v.(type) {
	case *chat.Object:
		b = append(b, '{')
		for i, m := range x.Members {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, m.Key)
			b = append(b, ':')
			b = appendJSON(b, m.Value)
		}
		return append(b, '}')
	case []any:
		b = append(b, '[')
		for i, e := range x {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSON(b, e)
		}
		return append(b, ']')
	case json.Number:
		return append(b, x...)
	case string:
		return appendString(b, x)
	case bool:
		if x {
			return append(b, "true"...)
		}
		return append(b, "false"...)
	case nil:
		return append(b, "null"...)
	}
	data, err := chat.Marshal(v)
	if err != nil {
		return append(b, "null"...)
	}
	return append(b, data...)
}

// appendString writes s as a JSON string byte for byte as chat.Marshal
// (encoding/json without HTML escaping) does: \" \\ \b \f \n \r \t,
// other control bytes as \u00XX, invalid UTF-8 as U+FFFD written raw
// (what encoding/json of the Go 1.27 toolchain writes), U+2028 and
// U+2029 escaped. Writing in place, instead of marshalling and copying,
// saves two copies of a value that can be the whole block.
func appendString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '\\', '"':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, "\uFFFD"...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

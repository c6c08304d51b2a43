package templates

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/toolharness/toolharness/chat"
)

// PyJSON writes an ordered JSON value (see chat.DecodeOrdered) the way
// Python's json.dumps(x, ensure_ascii=False) does, which is what the
// official templates' tojson filter produces under transformers: ", " and
// ": " separators, no HTML escaping, raw non-ASCII, insertion order, and
// numbers as the text they arrived in. indent > 0 gives json.dumps'
// indented layout (item separator "," at line ends).
func PyJSON(v any, indent int) (string, error) {
	var b strings.Builder
	if err := writePy(&b, v, indent, 0); err != nil {
		return "", err
	}
	return b.String(), nil
}

func writePy(b *strings.Builder, v any, indent, depth int) error {
	nl := func(d int) {
		if indent > 0 {
			b.WriteByte('\n')
			b.WriteString(strings.Repeat(" ", indent*d))
		}
	}
	sep := ", "
	if indent > 0 {
		sep = ","
	}
	switch x := v.(type) {
	case *chat.Object:
		if len(x.Members) == 0 {
			b.WriteString("{}")
			return nil
		}
		b.WriteByte('{')
		for i, m := range x.Members {
			if i > 0 {
				b.WriteString(sep)
			}
			nl(depth + 1)
			writePyString(b, m.Key)
			b.WriteString(": ")
			if err := writePy(b, m.Value, indent, depth+1); err != nil {
				return err
			}
		}
		nl(depth)
		b.WriteByte('}')
	case []any:
		if len(x) == 0 {
			b.WriteString("[]")
			return nil
		}
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteString(sep)
			}
			nl(depth + 1)
			if err := writePy(b, e, indent, depth+1); err != nil {
				return err
			}
		}
		nl(depth)
		b.WriteByte(']')
	case json.Number:
		b.WriteString(string(x))
	case string:
		writePyString(b, x)
	case bool:
		if x {
			b.WriteString("true")
		} else {
			b.WriteString("false")
		}
	case nil:
		b.WriteString("null")
	case int:
		fmt.Fprintf(b, "%d", x)
	default:
		return fmt.Errorf("templates: cannot write %T as JSON", v)
	}
	return nil
}

// writePyString quotes s as json.dumps(ensure_ascii=False) does.
func writePyString(b *strings.Builder, s string) {
	b.WriteByte('"')
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			// Python strings cannot hold invalid UTF-8; keep the byte's
			// replacement visible rather than dropping it.
			b.WriteString(`\ufffd`)
			i++
			continue
		}
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		default:
			if r < 0x20 {
				fmt.Fprintf(b, `\u%04x`, r)
			} else {
				b.WriteString(s[i : i+size])
			}
		}
		i += size
	}
	b.WriteByte('"')
}

// PyStr is Python's str() of an ordered JSON value, as Jinja's |string
// filter prints it: strings as they are, True/False/None, numbers as text,
// containers in Python repr.
func PyStr(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case bool:
		if x {
			return "True"
		}
		return "False"
	case nil:
		return "None"
	case json.Number:
		return string(x)
	}
	var b strings.Builder
	writeRepr(&b, v)
	return b.String()
}

func writeRepr(b *strings.Builder, v any) {
	switch x := v.(type) {
	case *chat.Object:
		b.WriteByte('{')
		for i, m := range x.Members {
			if i > 0 {
				b.WriteString(", ")
			}
			writeRepr(b, m.Key)
			b.WriteString(": ")
			writeRepr(b, m.Value)
		}
		b.WriteByte('}')
	case []any:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteString(", ")
			}
			writeRepr(b, e)
		}
		b.WriteByte(']')
	case string:
		writeReprString(b, x)
	default:
		b.WriteString(PyStr(v))
	}
}

// writeReprString writes Python's repr() of a string: in single quotes
// unless it holds one and no double quote, and with what str.isprintable
// rejects (control characters, U+00A0 and the other non-ASCII spaces,
// format characters such as U+200B, line and paragraph separators)
// escaped as \xhh, \uhhhh or \Uhhhhhhhh.
func writeReprString(b *strings.Builder, s string) {
	q := '\''
	if strings.ContainsRune(s, '\'') && !strings.ContainsRune(s, '"') {
		q = '"'
	}
	b.WriteRune(q)
	for _, r := range s {
		switch {
		case r == q || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case unicode.IsPrint(r):
			b.WriteRune(r)
		case r < 0x100:
			fmt.Fprintf(b, `\x%02x`, r)
		case r < 0x10000:
			fmt.Fprintf(b, `\u%04x`, r)
		default:
			fmt.Fprintf(b, `\U%08x`, r)
		}
	}
	b.WriteRune(q)
}

package parse

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/toolharness/toolharness/chat"
)

// repairs is a set of repair kinds; kept as a bit set so decoders can
// collect them without allocating, and listed in a fixed order.
type repairs uint32

const (
	rCodeFence repairs = 1 << iota
	rMissingOpenTag
	rMissingCloseTag
	rWrapperTag
	rArgumentsKey
	rArgumentsString
	rArrayWrapped
	rPythonLiterals
	rSingleQuotes
	rTrailingComma
	rFlattenedArguments
	rNestedCall
	rMissingBraces
	rPythonicCall
	rPositionalArguments
	rNameKey
	rMissingBrackets
	rMarkdownEscape
	rQuotedCall
	rBareIdentifier
	rMarkerSpelling
	rQuotedString
	rTupleValue
	rExpressionValue
	rUnescapedQuotes
	rQuotedName
	rTupleList
	rLineContinuation

	// rAddedClosers marks a call whose missing_braces repair added
	// closing brackets: at the end of the output without its closing
	// tag, it was cut off rather than a brace short (finish). Not a
	// repair of its own, so not in repairNames.
	rAddedClosers repairs = 1 << 31
)

var repairNames = [...]string{
	"code_fence", "missing_open_tag", "missing_close_tag", "wrapper_tag",
	"arguments_key", "arguments_string", "array_wrapped", "python_literals",
	"single_quotes", "trailing_comma", "flattened_arguments", "nested_call",
	"missing_braces", "pythonic_call", "positional_arguments", "name_key",
	"missing_brackets", "markdown_escape", "quoted_call", "bare_identifier",
	"marker_spelling", "quoted_string", "tuple_value", "expression_value",
	"unescaped_quotes", "quoted_name", "tuple_list", "line_continuation",
}

// RepairKinds returns every repair kind a call can carry.
func RepairKinds() []string { return append([]string(nil), repairNames[:]...) }

func (r repairs) list() []string {
	if r == 0 {
		return nil
	}
	var out []string
	for i, n := range repairNames {
		if r&(1<<i) != 0 {
			out = append(out, n)
		}
	}
	return out
}

// maxDepth bounds nesting so hostile input cannot exhaust the stack.
const maxDepth = 512

// relaxed reads JSON, and in lenient mode the Python-flavoured JSON models
// write (single quotes, True/False/None, trailing commas). Values are the
// ordered ones of package chat, so key order survives.
type relaxed struct {
	s      string
	i      int
	strict bool
	// python accepts Python literals without counting them as repairs
	// (the pythonic format's own syntax).
	python bool
	// exprs reads what a Python AST decoder reads besides literals: a
	// tuple as a list (tuple_value), any other expression as its source
	// text (bare_identifier for a name, expression_value otherwise).
	exprs   bool
	repairs repairs
	depth   int
}

type syntaxError struct {
	pos int
	msg string
}

func (e *syntaxError) Error() string { return e.msg }

func (r *relaxed) fail(format string, args ...any) error {
	return &syntaxError{pos: r.i, msg: fmt.Sprintf(format, args...)}
}

func (r *relaxed) ws() {
	for r.i < len(r.s) {
		switch r.s[r.i] {
		case ' ', '\t', '\n', '\r':
			r.i++
		default:
			return
		}
	}
}

func (r *relaxed) value() (any, error) {
	r.ws()
	if r.i >= len(r.s) {
		return nil, r.fail("unexpected end of JSON")
	}
	switch c := r.s[r.i]; {
	case c == '{':
		return r.object()
	case c == '[':
		return r.array()
	case c == '"':
		return r.str()
	case c == '\'':
		if r.strict {
			return nil, r.fail("single-quoted string; use double quotes")
		}
		if !r.python {
			r.repairs |= rSingleQuotes
		}
		return r.str()
	case c == '(' && r.exprs:
		start := r.i
		if v, err := r.tuple(); err == nil {
			return v, nil
		}
		r.i = start
		return r.expression()
	case c == '-' || c == '+' || (c >= '0' && c <= '9') || c == '.':
		v, err := r.number()
		if err != nil && r.exprs {
			return r.expression()
		}
		return v, err
	default:
		v, err := r.literal()
		if err != nil && r.exprs {
			return r.expression()
		}
		return v, err
	}
}

// tuple reads a Python tuple, (1, 2) or (1,), as a list; (1) is 1.
func (r *relaxed) tuple() (any, error) {
	if err := r.enter(); err != nil {
		return nil, err
	}
	defer func() { r.depth-- }()
	r.i++ // (
	arr := []any{}
	r.ws()
	if r.i < len(r.s) && r.s[r.i] == ')' {
		r.i++
		r.repairs |= rTupleValue
		return arr, nil
	}
	for {
		v, err := r.value()
		if err != nil {
			return nil, err
		}
		arr = append(arr, v)
		r.ws()
		if r.i < len(r.s) && r.s[r.i] == ',' {
			r.i++
			r.ws()
		} else if len(arr) == 1 && r.i < len(r.s) && r.s[r.i] == ')' {
			// (x) is x in parentheses, not a tuple.
			r.i++
			return v, nil
		}
		if r.i >= len(r.s) {
			return nil, r.fail("unexpected end inside a tuple")
		}
		if r.s[r.i] == ')' {
			r.i++
			r.repairs |= rTupleValue
			return arr, nil
		}
	}
}

// expression reads a Python expression that is no literal (df['age'],
// initHandler, a + 1) up to the ',' or closing bracket that ends it, and
// gives its source text, as an AST decoder's unparse does.
func (r *relaxed) expression() (any, error) {
	start := r.i
	depth := 0
	closed := true
scan:
	for ; r.i < len(r.s); r.i++ {
		switch c := r.s[r.i]; c {
		case '"', '\'':
			var end int
			end, closed = skipString(r.s, r.i)
			r.i = end - 1
		case '(', '[', '{':
			depth++
		case ')', ']', '}':
			if depth == 0 {
				break scan
			}
			depth--
		case ',':
			if depth == 0 {
				break scan
			}
		case ':':
			// city: "Paris" is no Python argument (a lambda's
			// parameters end with one).
			if depth == 0 && !strings.HasPrefix(r.s[start:], "lambda") {
				r.i = start
				return nil, r.fail("unexpected %s", r.near())
			}
		}
	}
	text := strings.TrimSpace(r.s[start:r.i])
	if text == "" || !closed || depth != 0 {
		r.i = start
		return nil, r.fail("unexpected %s", r.near())
	}
	if isDottedName(text) {
		r.repairs |= rBareIdentifier
	} else {
		r.repairs |= rExpressionValue
	}
	return text, nil
}

// isDottedName reports whether s is a Python name, dots allowed
// (envVariables, self.config).
func isDottedName(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(isIdentByte(c) || c == '.' && i > 0) || i == 0 && c >= '0' && c <= '9' {
			return false
		}
	}
	return s != ""
}

func (r *relaxed) enter() error {
	r.depth++
	if r.depth > maxDepth {
		return r.fail("nesting deeper than %d", maxDepth)
	}
	return nil
}

func (r *relaxed) object() (any, error) {
	if err := r.enter(); err != nil {
		return nil, err
	}
	defer func() { r.depth-- }()
	r.i++ // {
	obj := &chat.Object{}
	for {
		r.ws()
		if r.i >= len(r.s) {
			return nil, r.fail("unexpected end of JSON inside an object")
		}
		if r.s[r.i] == '}' {
			if len(obj.Members) > 0 {
				if r.strict {
					return nil, r.fail("trailing comma before '}'")
				}
				r.repairs |= rTrailingComma
			}
			r.i++
			return obj, nil
		}
		var key string
		switch r.s[r.i] {
		case '"', '\'':
			if r.s[r.i] == '\'' {
				if r.strict {
					return nil, r.fail("single-quoted key; use double quotes")
				}
				if !r.python {
					r.repairs |= rSingleQuotes
				}
			}
			k, err := r.str()
			if err != nil {
				return nil, err
			}
			key = k.(string)
		default:
			return nil, r.fail("expected a quoted key, found %s", r.near())
		}
		r.ws()
		if r.i >= len(r.s) || r.s[r.i] != ':' {
			return nil, r.fail("expected ':' after key %q", key)
		}
		r.i++
		v, err := r.value()
		if err != nil {
			return nil, err
		}
		obj.Members = append(obj.Members, chat.Member{Key: key, Value: v})
		done, err := r.next('}', "an object")
		if err != nil {
			return nil, err
		}
		if done {
			return obj, nil
		}
	}
}

// next reads what follows a member of an object or list closed by
// closer: a ',' (done=false, and the next member follows), or the closer,
// also after a trailing comma (a repair), which ends it (done=true).
func (r *relaxed) next(closer byte, inside string) (done bool, err error) {
	r.ws()
	if r.i >= len(r.s) {
		return false, r.fail("unexpected end of JSON inside %s", inside)
	}
	switch r.s[r.i] {
	case ',':
		r.i++
		r.ws()
		if r.i < len(r.s) && r.s[r.i] == closer {
			if r.strict {
				return false, r.fail("trailing comma before '%c'", closer)
			}
			r.repairs |= rTrailingComma
			r.i++
			return true, nil
		}
		return false, nil
	case closer:
		r.i++
		return true, nil
	}
	return false, r.fail("expected ',' or '%c', found %s", closer, r.near())
}

func (r *relaxed) array() (any, error) {
	if err := r.enter(); err != nil {
		return nil, err
	}
	defer func() { r.depth-- }()
	r.i++ // [
	arr := []any{}
	r.ws()
	if r.i < len(r.s) && r.s[r.i] == ']' {
		r.i++
		return arr, nil
	}
	for {
		v, err := r.value()
		if err != nil {
			return nil, err
		}
		arr = append(arr, v)
		done, err := r.next(']', "a list")
		if err != nil {
			return nil, err
		}
		if done {
			return arr, nil
		}
	}
}

// str reads a string quoted with " (JSON escapes) or ' (Python escapes).
func (r *relaxed) str() (any, error) {
	q := r.s[r.i]
	start := r.i
	r.i++
	simple := true
	for r.i < len(r.s) {
		c := r.s[r.i]
		switch {
		case c == q:
			r.i++
			body := r.s[start+1 : r.i-1]
			if simple {
				return body, nil
			}
			return r.unescape(body, q, start)
		case c == '\\':
			simple = false
			r.i += 2
		case c < 0x20:
			if r.strict {
				return nil, r.fail("control character in string")
			}
			simple = false
			r.i++
		default:
			r.i++
		}
	}
	r.i = start
	return nil, r.fail("unterminated string")
}

func (r *relaxed) unescape(body string, q byte, start int) (any, error) {
	if q == '"' {
		var s string
		if err := json.Unmarshal([]byte(`"`+body+`"`), &s); err == nil {
			return s, nil
		} else if r.strict {
			r.i = start
			return nil, r.fail("bad string escape")
		}
	}
	// Python-style (or broken JSON) escapes: decode the common ones and
	// keep the rest as written.
	var b strings.Builder
	for i := 0; i < len(body); i++ {
		c := body[i]
		if c != '\\' || i+1 == len(body) {
			b.WriteByte(c)
			continue
		}
		i++
		switch body[i] {
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case 'r':
			b.WriteByte('\r')
		case '\\', '\'', '"', '/':
			b.WriteByte(body[i])
		default:
			b.WriteByte('\\')
			b.WriteByte(body[i])
		}
	}
	s := b.String()
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	return s, nil
}

func (r *relaxed) number() (any, error) {
	start := r.i
	for r.i < len(r.s) && strings.IndexByte("+-0123456789.eE", r.s[r.i]) >= 0 {
		r.i++
	}
	text := r.s[start:r.i]
	if validNumber(text) {
		return json.Number(text), nil
	}
	r.i = start
	return nil, r.fail("bad number %q", text)
}

// validNumber reports whether s is a JSON number.
func validNumber[T text](s T) bool {
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	if i == len(s) {
		return false
	}
	if s[i] == '0' {
		i++
	} else if s[i] >= '1' && s[i] <= '9' {
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
	} else {
		return false
	}
	if i < len(s) && s[i] == '.' {
		d := digits(s, i+1)
		if d == i+1 {
			return false
		}
		i = d
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		d := digits(s, i)
		if d == i {
			return false
		}
		i = d
	}
	return i == len(s)
}

// digits returns the index after the decimal digits that start at s[i:].
func digits[T text](s T, i int) int {
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return i
}

func (r *relaxed) literal() (any, error) {
	start := r.i
	for r.i < len(r.s) && isIdentByte(r.s[r.i]) {
		r.i++
	}
	word := r.s[start:r.i]
	switch word {
	case "true":
		return true, nil
	case "false":
		return false, nil
	case "null":
		return nil, nil
	case "True", "False", "None":
		if r.strict && !r.python {
			r.i = start
			return nil, r.fail("Python literal %s; use true, false or null", word)
		}
		if !r.python {
			r.repairs |= rPythonLiterals
		}
		switch word {
		case "True":
			return true, nil
		case "False":
			return false, nil
		}
		return nil, nil
	}
	r.i = start
	return nil, r.fail("unexpected %s", r.near())
}

func (r *relaxed) near() string {
	if r.i >= len(r.s) {
		return "end of text"
	}
	end := r.i + 12
	if end > len(r.s) {
		end = len(r.s)
	}
	return fmt.Sprintf("%q", r.s[r.i:end])
}

func isIdentByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

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

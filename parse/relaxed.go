package parse

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/toolharness/toolharness/chat"
)

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

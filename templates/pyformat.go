package templates

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/ardanlabs/jinja"
)

// formatFilter is Jinja2's format filter, which the engine lacks: Python's
// printf-style value % args (value % kwargs with keyword arguments), as in
// vLLM's pythonic templates' "%r" | format(argument). An unknown filter
// fails the whole rendering, so the filter is given to every template.
func formatFilter(args []jinja.Value, kwargs map[string]jinja.Value) (jinja.Value, error) {
	if len(args) == 0 {
		return jinja.Undefined(), errors.New("format: no value to format")
	}
	if len(args) > 1 && len(kwargs) > 0 {
		return jinja.Undefined(), errors.New("can't handle positional and keyword arguments at the same time")
	}
	s, err := pyPercent(pyStrValue(args[0]), args[1:], kwargs)
	if err != nil {
		return jinja.Undefined(), err
	}
	return jinja.NewString(s), nil
}

// pyPercent is Python's format % args for the conversions templates use:
// s, r and a, d i and u, f F e E g G, x X o, c and %%, with flags, width,
// precision and %(key)s keys.
func pyPercent(format string, args []jinja.Value, kwargs map[string]jinja.Value) (string, error) {
	var b strings.Builder
	next := 0
	for i := 0; i < len(format); i++ {
		if format[i] != '%' {
			b.WriteByte(format[i])
			continue
		}
		spec, n, err := parsePercentSpec(format[i+1:])
		if err != nil {
			return "", err
		}
		i += n
		if spec.conv == '%' {
			b.WriteByte('%')
			continue
		}
		var v jinja.Value
		switch {
		case spec.key != "":
			var ok bool
			if v, ok = kwargs[spec.key]; !ok {
				return "", fmt.Errorf("format requires a mapping with the key %q", spec.key)
			}
		case next < len(args):
			v = args[next]
			next++
		default:
			return "", errors.New("not enough arguments for format string")
		}
		text, err := spec.apply(v)
		if err != nil {
			return "", err
		}
		b.WriteString(text)
	}
	if next < len(args) {
		return "", errors.New("not all arguments converted during string formatting")
	}
	return b.String(), nil
}

// percentSpec is one %-conversion: %[(key)][flags][width][.precision]conv.
type percentSpec struct {
	key              string
	minus, plus      bool
	space, zero, alt bool
	width, prec      int // -1: not given
	conv             byte
}

// parsePercentSpec reads the conversion after a "%"; n is its length.
func parsePercentSpec(s string) (spec percentSpec, n int, err error) {
	spec.width, spec.prec = -1, -1
	if strings.HasPrefix(s, "(") {
		end := strings.IndexByte(s, ')')
		if end < 0 {
			return spec, 0, errors.New("incomplete format key")
		}
		spec.key, n = s[1:end], end+1
	}
	for ; n < len(s) && strings.IndexByte("-+ 0#", s[n]) >= 0; n++ {
		switch s[n] {
		case '-':
			spec.minus = true
		case '+':
			spec.plus = true
		case ' ':
			spec.space = true
		case '0':
			spec.zero = true
		case '#':
			spec.alt = true
		}
	}
	spec.width, n = readDigits(s, n)
	if n < len(s) && s[n] == '.' {
		if spec.prec, n = readDigits(s, n+1); spec.prec < 0 {
			spec.prec = 0
		}
	}
	if n < len(s) && strings.IndexByte("hlL", s[n]) >= 0 {
		n++ // length modifiers are accepted and ignored, as in Python
	}
	if n >= len(s) {
		return spec, 0, errors.New("incomplete format")
	}
	spec.conv = s[n]
	if strings.IndexByte("sradiufFeEgGxXoc%", spec.conv) < 0 {
		return spec, 0, fmt.Errorf("unsupported format character '%c'", spec.conv)
	}
	return spec, n + 1, nil
}

// readDigits reads a decimal number at s[at:]; -1 when there is none.
func readDigits(s string, at int) (int, int) {
	end := at
	for end < len(s) && s[end] >= '0' && s[end] <= '9' {
		end++
	}
	if end == at {
		return -1, at
	}
	v, err := strconv.Atoi(s[at:end])
	if err != nil {
		return -1, end
	}
	return v, end
}

// apply converts one value and pads it to the width.
func (p percentSpec) apply(v jinja.Value) (string, error) {
	var text string
	numeric := true
	switch p.conv {
	case 's', 'r', 'a':
		numeric = false
		switch {
		case p.conv == 's' && v.IsUndefined():
			text = "" // str() of Jinja2's Undefined
		case p.conv == 's':
			text = pyStrValue(v)
		default:
			text = v.String() // the engine prints values as Python's repr
		}
		if p.prec >= 0 && p.prec < len([]rune(text)) {
			text = string([]rune(text)[:p.prec])
		}
	case 'c':
		numeric = false
		switch {
		case v.IsString() && len([]rune(v.AsString())) == 1:
			text = v.AsString()
		case v.IsInt():
			text = string(rune(v.AsInt()))
		default:
			return "", errors.New("%c requires an int or a unicode character")
		}
	default:
		var err error
		if text, err = p.number(v); err != nil {
			return "", err
		}
	}
	return p.pad(text, numeric), nil
}

// number formats v for a numeric conversion, sign included.
func (p percentSpec) number(v jinja.Value) (string, error) {
	if !v.IsNumber() && !v.IsBool() {
		return "", fmt.Errorf("%%%c format: a real number is required, not %s", p.conv, pyTypeName(v))
	}
	f := toFloat(v)
	var body string
	switch p.conv {
	case 'd', 'i', 'u', 'x', 'X', 'o':
		if math.IsInf(f, 0) || math.IsNaN(f) {
			return "", errors.New("cannot convert float infinity or NaN to integer")
		}
		i := int64(f)
		if v.IsInt() {
			i = v.AsInt()
		}
		neg := i < 0
		if neg {
			i = -i
		}
		base := map[byte]int{'x': 16, 'X': 16, 'o': 8}[p.conv]
		if base == 0 {
			base = 10
		}
		body = strconv.FormatInt(i, base)
		if p.conv == 'X' {
			body = strings.ToUpper(body)
		}
		if p.alt && base != 10 {
			body = map[byte]string{'x': "0x", 'X': "0X", 'o': "0o"}[p.conv] + body
		}
		return p.sign(neg) + body, nil
	}
	prec := p.prec
	if prec < 0 {
		prec = 6
	}
	neg := math.Signbit(f) && !math.IsNaN(f)
	f = math.Abs(f)
	switch {
	case math.IsInf(f, 0):
		body = "inf"
	case math.IsNaN(f):
		body = "nan"
	case p.conv == 'g' || p.conv == 'G':
		body = pyGeneral(f, prec, p.alt)
	default:
		body = strconv.FormatFloat(f, p.conv|0x20, prec, 64) // Go writes exponents as Python does: e+07
	}
	if p.conv == 'F' || p.conv == 'E' || p.conv == 'G' {
		body = strings.ToUpper(body)
	}
	return p.sign(neg) + body, nil
}

func (p percentSpec) sign(neg bool) string {
	switch {
	case neg:
		return "-"
	case p.plus:
		return "+"
	case p.space:
		return " "
	}
	return ""
}

// pad pads text to the width: left-justified with "-", zero-filled after
// the sign for numbers with "0", else right-justified with spaces.
func (p percentSpec) pad(text string, numeric bool) string {
	n := p.width - len([]rune(text))
	if n <= 0 {
		return text
	}
	switch {
	case p.minus:
		return text + strings.Repeat(" ", n)
	case p.zero && numeric:
		sign := ""
		if text != "" && strings.IndexByte("+- ", text[0]) >= 0 {
			sign, text = text[:1], text[1:]
		}
		return sign + strings.Repeat("0", n) + text
	}
	return strings.Repeat(" ", n) + text
}

// pyGeneral is Python's %g: precision significant digits, exponent form
// outside [1e-4, 1e precision), trailing zeros dropped unless alt.
func pyGeneral(f float64, prec int, alt bool) string {
	if prec == 0 {
		prec = 1
	}
	exp := 0
	if f != 0 {
		// The exponent after rounding to prec digits.
		e := strconv.FormatFloat(f, 'e', prec-1, 64)
		exp, _ = strconv.Atoi(e[strings.IndexByte(e, 'e')+1:])
	}
	var s string
	if exp < -4 || exp >= prec {
		s = strconv.FormatFloat(f, 'e', prec-1, 64)
		if !alt {
			mant, rest, _ := strings.Cut(s, "e")
			s = trimFraction(mant) + "e" + rest
		}
		return s
	}
	s = strconv.FormatFloat(f, 'f', max(prec-1-exp, 0), 64)
	if !alt {
		s = trimFraction(s)
	}
	return s
}

func trimFraction(s string) string {
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}

func toFloat(v jinja.Value) float64 {
	switch {
	case v.IsBool():
		if v.AsBool() {
			return 1
		}
		return 0
	case v.IsInt():
		return float64(v.AsInt())
	}
	return v.AsFloat()
}

// pyTypeName names v's Python type for error messages.
func pyTypeName(v jinja.Value) string {
	switch {
	case v.IsString():
		return "str"
	case v.IsList():
		return "list"
	case v.IsDict():
		return "dict"
	case v.IsNone():
		return "NoneType"
	}
	return "object"
}

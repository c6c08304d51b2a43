package templates

import (
	"errors"
	"regexp"
	"strconv"
	"strings"

	"github.com/ardanlabs/jinja"
)

// The engine has no recursion limit: a macro that recurses without end
// (Hermes' json_to_python_type on a ["string", "null"] type union, where
// Jinja2 raises RecursionError) overflows the Go stack, which kills the
// process. guardMacros rewrites every macro to carry a depth counter and
// fail cleanly past maxMacroDepth; the rewrite adds no output, and the
// inserted tags are written {%+ … +%} like every tag normaliseSource
// leaves (a plain %} lets the engine's own trim_blocks strip the newline
// that starts the next text, past any tags between: MiniMax-M2's
// "{{- '\n' ~ toolcall_begin_token }}\n<invoke" lost its newline), so a
// rendering that stays under the limit is byte-identical.

// maxMacroDepth is far beyond any real schema nesting and far below what
// the Go stack survives.
const maxMacroDepth = 100

const (
	depthParam   = "__toolharness_depth"
	depthExceeds = "__toolharness_recursion_limit"
)

// ErrRecursion is returned (wrapped) when a template's macros nest deeper
// than Jinja2 allows (Jinja2 raises RecursionError there).
var ErrRecursion = errors.New("templates: macro recursion too deep (Jinja2 raises RecursionError)")

var macroDef = regexp.MustCompile(`^\{%[-+]?\s*macro\s+([A-Za-z_][A-Za-z0-9_]*)\s*\(`)

// guardMacros rewrites src as described above; src without macros is
// returned unchanged.
func guardMacros(src string) string {
	regions := splitRegions(src)
	names := map[string]bool{}
	for _, r := range regions {
		if m := macroDef.FindStringSubmatch(r.text); r.tag && m != nil {
			names[m[1]] = true
		}
	}
	if len(names) == 0 {
		return src
	}
	var b strings.Builder
	depth := 0 // macro bodies open around the current region
	for _, r := range regions {
		if !r.tag || strings.HasPrefix(r.text, "{#") {
			b.WriteString(r.text)
			continue
		}
		if macroDef.MatchString(r.text) {
			b.WriteString(rewriteCalls(r.text, names, depth > 0, true))
			b.WriteString("{%+ if " + depthParam + " > " + strconv.Itoa(maxMacroDepth) + " +%}{{ " + depthExceeds + "() }}{%+ endif " + closing(r.text))
			depth++
			continue
		}
		if isEndMacro(r.text) {
			depth--
		}
		b.WriteString(rewriteCalls(r.text, names, depth > 0, false))
	}
	return b.String()
}

// closing returns the tag's closing delimiter with its whitespace control.
func closing(tag string) string {
	for _, c := range []string{"-%}", "+%}"} {
		if strings.HasSuffix(tag, c) {
			return c
		}
	}
	return "%}"
}

func isEndMacro(tag string) bool {
	inner := statement(tag)
	return inner == "endmacro" || strings.HasPrefix(inner, "endmacro ")
}

// rewriteCalls appends the depth argument to every call of a known macro
// in one tag's code (depth+1 inside a macro body, 0 outside), and to a
// macro definition's parameters when def is set. String literals and
// attribute calls (x.name()) are left alone.
func rewriteCalls(code string, names map[string]bool, inMacro, def bool) string {
	arg := "0"
	if inMacro {
		arg = depthParam + "+1"
	}
	var b strings.Builder
	type paren struct {
		guarded bool
		def     bool // the macro's own parameter list: the default is 0
		openAt  int  // output length just after the "("
	}
	var parens []paren
	var quote byte
	pendingDef := def
	for i := 0; i < len(code); i++ {
		c := code[i]
		switch {
		case quote != 0:
			b.WriteByte(c)
			if c == '\\' && i+1 < len(code) {
				i++
				b.WriteByte(code[i])
			} else if c == quote {
				quote = 0
			}
		case c == '\'' || c == '"':
			quote = c
			b.WriteByte(c)
		case c == '(':
			b.WriteByte(c)
			parens = append(parens, paren{openAt: b.Len()})
		case c == ')':
			if n := len(parens); n > 0 {
				p := parens[n-1]
				parens = parens[:n-1]
				if p.guarded {
					sep := ", "
					if strings.TrimSpace(b.String()[p.openAt:]) == "" {
						sep = ""
					}
					value := arg
					if p.def {
						value = "0"
					}
					b.WriteString(sep + depthParam + "=" + value)
				}
			}
			b.WriteByte(c)
		case isIdentStart(c) && (i == 0 || (!isIdentChar(code[i-1]) && code[i-1] != '.')):
			j := i
			for j < len(code) && isIdentChar(code[j]) {
				j++
			}
			k := j
			for k < len(code) && (code[k] == ' ' || code[k] == '\t') {
				k++
			}
			b.WriteString(code[i:j])
			if names[code[i:j]] && k < len(code) && code[k] == '(' {
				b.WriteString(code[j : k+1])
				parens = append(parens, paren{guarded: true, def: pendingDef, openAt: b.Len()})
				pendingDef = false
				j = k + 1
			}
			i = j - 1
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

func isIdentStart(c byte) bool {
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
}

func isIdentChar(c byte) bool { return isIdentStart(c) || (c >= '0' && c <= '9') }

func recursionLimit([]jinja.Value, map[string]jinja.Value) (jinja.Value, error) {
	return jinja.Undefined(), ErrRecursion
}

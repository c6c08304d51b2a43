package templates

import (
	"fmt"
	"regexp"
	"strings"
	"time"
)

// Deviation is a construct of a template on which the Jinja engine is
// known to render differently from Jinja2 (measured by the conformance
// suite in testdata/conformance).
type Deviation struct {
	// Construct names the construct ("crlf", "backslash-newline", …).
	Construct string `json:"construct"`
	// Cause says what the engine does differently.
	Cause string `json:"cause"`
}

func (d Deviation) String() string { return d.Construct + ": " + d.Cause }

// knownConstructs are the constructs that still render differently after
// normaliseSource, found by the conformance suite. Each is recognised in
// the template's code (outside string literals).
var knownConstructs = []struct {
	Deviation
	pattern *regexp.Regexp
}{
	{Deviation{"markup", `Jinja2 HTML-escapes what is added with + to a "…"|safe string (a Markup); the engine has no Markup type and never escapes`},
		regexp.MustCompile(`\|\s*safe\s*\+`)},
	{Deviation{"int-dict-keys", "the engine's dict keys are strings: a dict literal with integer keys ({0: 0, 512: 128}) is sorted by dictsort as strings (\"1024\" before \"512\"), where Jinja2 sorts the integers"},
		regexp.MustCompile(`[{,]\s*-?[0-9]+\s*:`)},
	{Deviation{"generator-tojson", "Jinja2 raises TypeError when a generator (|map, |select, …) is piped into tojson; the engine renders the list"},
		regexp.MustCompile(`\|\s*(?:map|select|reject|selectattr|rejectattr)\s*\([^|]*\)\s*\|\s*tojson`)},
}

// detectDeviations finds the constructs of src that the engine renders
// differently from Jinja2 even after normaliseSource.
func detectDeviations(src string) []Deviation {
	var code strings.Builder
	for _, r := range splitRegions(src) {
		if r.tag && !strings.HasPrefix(r.text, "{#") {
			outsideStrings(r.text, func(s string) string {
				code.WriteString(s)
				code.WriteByte(' ')
				return s
			})
		}
	}
	var out []Deviation
	for _, k := range knownConstructs {
		if k.pattern.MatchString(code.String()) {
			out = append(out, k.Deviation)
		}
	}
	return out
}

// PyStrftime formats t like Python's datetime.strftime (glibc) for the
// directives chat templates use, including glibc's %-d style flags.
func PyStrftime(format string, t time.Time) string {
	var b strings.Builder
	for i := 0; i < len(format); i++ {
		c := format[i]
		if c != '%' || i+1 == len(format) {
			b.WriteByte(c)
			continue
		}
		i++
		noPad := false
		if format[i] == '-' && i+1 < len(format) {
			noPad = true
			i++
		}
		b.WriteString(strftimeDirective(format[i], noPad, t))
	}
	return b.String()
}

func strftimeDirective(d byte, noPad bool, t time.Time) string {
	num := func(n, width int) string {
		if noPad {
			return fmt.Sprint(n)
		}
		return fmt.Sprintf("%0*d", width, n)
	}
	hour12 := t.Hour() % 12
	if hour12 == 0 {
		hour12 = 12
	}
	switch d {
	case 'Y':
		return fmt.Sprint(t.Year())
	case 'y':
		return num(t.Year()%100, 2)
	case 'm':
		return num(int(t.Month()), 2)
	case 'd':
		return num(t.Day(), 2)
	case 'e':
		return fmt.Sprintf("%2d", t.Day())
	case 'j':
		return num(t.YearDay(), 3)
	case 'H':
		return num(t.Hour(), 2)
	case 'I':
		return num(hour12, 2)
	case 'M':
		return num(t.Minute(), 2)
	case 'S':
		return num(t.Second(), 2)
	case 'f':
		return fmt.Sprintf("%06d", t.Nanosecond()/1000)
	case 'p':
		return t.Format("PM")
	case 'b', 'h':
		return t.Format("Jan")
	case 'B':
		return t.Format("January")
	case 'a':
		return t.Format("Mon")
	case 'A':
		return t.Format("Monday")
	case 'w':
		return fmt.Sprint(int(t.Weekday()))
	case 'u':
		wd := int(t.Weekday())
		if wd == 0 {
			wd = 7
		}
		return fmt.Sprint(wd)
	case 'z':
		return t.Format("-0700")
	case 'Z':
		return t.Format("MST")
	case 'F':
		return t.Format("2006-01-02")
	case 'T':
		return t.Format("15:04:05")
	case 'D':
		return t.Format("01/02/06")
	case 'c':
		return t.Format("Mon Jan _2 15:04:05 2006")
	case 'x':
		return t.Format("01/02/06")
	case 'X':
		return t.Format("15:04:05")
	case '%':
		return "%"
	}
	return "%" + string(d)
}

// argumentsPath is a variable path whose last step is "arguments"
// (tool_call.arguments, tool['function']['arguments'], arguments), once
// string literals other than bare keys are blanked (maskLiterals); what
// follows it must not be a filter, an attribute, an item or a call, so
// that the path's value itself is the operand.
const argumentsPath = `(?:\b[A-Za-z_]\w*\s*(?:\.\s*[A-Za-z_]\w*\s*|\[\s*(?:'\w+'|"\w+")\s*\]\s*)*(?:\.\s*arguments|\[\s*(?:'arguments'|"arguments")\s*\])|\barguments)`

var (
	plusArguments = regexp.MustCompile(`\+\s*` + argumentsPath + `\s*(?:$|[^\s|.\[(\w])`)
	argumentsPlus = regexp.MustCompile(argumentsPath + `\s*\+`)
	// setArguments is {% set NAME = PATH %}: NAME holds the arguments.
	setArguments = regexp.MustCompile(`^\s*set\s+([A-Za-z_]\w*)\s*=\s*` + argumentsPath + `\s*$`)
)

// addsArgumentsToString reports whether a template adds call arguments
// to a string with + (directly, or through a variable set to them),
// which Jinja2 refuses for a dict (TypeError: can only concatenate str)
// where ~, {{ }} and |string print its Python str(). It reads the
// template's code, not its renders: the engine prints str() for all of
// them alike.
func addsArgumentsToString(src string) bool {
	var stmts []string
	for _, r := range splitRegions(src) {
		if r.tag && !strings.HasPrefix(r.text, "{#") && tagClosed(r.text) {
			stmts = append(stmts, maskLiterals(strings.Trim(r.text[2:len(r.text)-2], "-+")))
		}
	}
	aliases := map[string]bool{}
	for _, s := range stmts {
		if m := setArguments.FindStringSubmatch(s); m != nil && m[1] != "arguments" {
			aliases[m[1]] = true
		}
	}
	for _, s := range stmts {
		for name := range aliases {
			s = regexp.MustCompile(`\b`+name+`\b`).ReplaceAllString(s, "arguments")
		}
		if plusArguments.MatchString(s) || argumentsPlus.MatchString(s) {
			return true
		}
	}
	return false
}

// maskLiterals blanks the string literals of a tag's code (an empty literal for each),
// keeping those that are a bare key ('arguments'), so that text inside
// literals never reads as code.
func maskLiterals(code string) string {
	var b strings.Builder
	for i := 0; i < len(code); i++ {
		c := code[i]
		if c != '\'' && c != '"' {
			b.WriteByte(c)
			continue
		}
		j := i + 1
		for j < len(code) && code[j] != c {
			if code[j] == '\\' {
				j++
			}
			j++
		}
		if j >= len(code) {
			b.WriteString(code[i:])
			break
		}
		lit := code[i+1 : j]
		if keyLiteral.MatchString(lit) {
			b.WriteString(code[i : j+1])
		} else {
			b.WriteString("''")
		}
		i = j
	}
	return b.String()
}

var keyLiteral = regexp.MustCompile(`^\w+$`)

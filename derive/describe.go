package derive

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/toolharness/toolharness/parse"
)

// Field is one line of a description: a name and its value as text.
type Field struct{ Name, Value string }

// Describe lists what was derived, one field per line, leaving out what is
// empty; `templates inspect` prints it and the tests golden-check it.
func (r Result) Describe() []Field {
	var f []Field
	add := func(name, value string) {
		if value != "" {
			f = append(f, Field{name, value})
		}
	}
	add("catalog", yesNo(r.Catalog))
	add("writes calls", yesNo(r.WritesCalls))
	if r.WritesCalls {
		add("input style", r.Style)
		add("parallel calls", yesNo(r.Parallel))
		add("format", r.Format)
		if r.Format == "" {
			f = append(f, SyntaxFields(r.Syntax)...)
		}
	}
	add("reasoning", markerPair(r.Syntax.ReasoningOpen, r.Syntax.ReasoningClose))
	if r.ThinkOpen {
		add("generation prompt opens reasoning", "yes")
	}
	add("stop", quoteList(r.Stop))
	for _, n := range r.Notes {
		add("note", n)
	}
	return f
}

// SyntaxFields describes a derived syntax's non-empty fields.
func SyntaxFields(s parse.Syntax) []Field {
	var f []Field
	q := func(name, v string) {
		if v != "" {
			f = append(f, Field{name, strconv.Quote(v)})
		}
	}
	f = append(f, Field{"body", s.Body.String()})
	q("section open", s.SectionOpen)
	q("section close", s.SectionClose)
	q("call open", s.CallOpen)
	q("call close", s.CallClose)
	q("call separator", s.CallSeparator)
	q("name key", s.NameKey)
	q("arguments key", s.ArgsKey)
	q("name prefix", s.NamePrefix)
	q("name suffix", s.NameSuffix)
	q("id prefix", s.IDPrefix)
	q("arguments prefix", s.ArgsPrefix)
	q("arguments suffix", s.ArgsSuffix)
	q("key open", s.KeyOpen)
	q("key close", s.KeyClose)
	q("value open", s.ValueOpen)
	q("value close", s.ValueClose)
	return f
}

// String writes fields as "name: value" lines.
func String(fields []Field) string {
	var b strings.Builder
	for _, x := range fields {
		fmt.Fprintf(&b, "%s: %s\n", x.Name, x.Value)
	}
	return b.String()
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func markerPair(open, close string) string {
	if open == "" {
		return ""
	}
	return strconv.Quote(open) + " … " + strconv.Quote(close)
}

func quoteList(l []string) string {
	q := make([]string, len(l))
	for i, s := range l {
		q[i] = strconv.Quote(s)
	}
	return strings.Join(q, " ")
}

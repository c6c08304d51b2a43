package derive

import (
	"encoding/json"
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
		add("parses its own calls", yesNo(r.ParsesOwnCalls))
	}
	add("reasoning", markerPair(r.Syntax.ReasoningOpen, r.Syntax.ReasoningClose))
	if r.PromptTail != "" {
		add("generation prompt ends in the call syntax", strconv.Quote(r.PromptTail))
	}
	if r.ThinkOpen {
		add("generation prompt opens reasoning", "yes")
	}
	add("stop", quoteList(r.Stop))
	add("role stop", quoteList(r.RoleStops))
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
	if s.IDFirst {
		f = append(f, Field{"id before the name", "yes"})
	}
	q("name prefix", s.NamePrefix)
	q("name suffix", s.NameSuffix)
	q("id prefix", s.IDPrefix)
	q("arguments prefix", s.ArgsPrefix)
	q("arguments suffix", s.ArgsSuffix)
	q("key open", s.KeyOpen)
	q("key close", s.KeyClose)
	q("value open", s.ValueOpen)
	q("value close", s.ValueClose)
	q("type attribute", s.TypeAttr)
	q("string quote", s.Quote)
	if s.NameAsKey {
		f = append(f, Field{"name is the key", "yes"})
	}
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

// MarshalJSON writes the result with the syntax's non-empty fields under
// snake_case keys (the names Describe prints, with "_" for spaces), and no
// syntax at all when the template writes no calls.
func (r Result) MarshalJSON() ([]byte, error) {
	type plain Result // without this method
	var syntax map[string]any
	if r.WritesCalls {
		syntax = map[string]any{"label": r.Syntax.Label}
		for _, f := range SyntaxFields(r.Syntax) {
			v, err := strconv.Unquote(f.Value)
			if err != nil {
				v = f.Value // the body shape, not quoted
			}
			syntax[strings.ReplaceAll(f.Name, " ", "_")] = v
		}
		if r.Syntax.ReasoningOpen != "" {
			syntax["reasoning_open"], syntax["reasoning_close"] = r.Syntax.ReasoningOpen, r.Syntax.ReasoningClose
		}
	}
	return json.Marshal(struct {
		plain
		Syntax map[string]any `json:"syntax,omitempty"`
	}{plain(r), syntax})
}

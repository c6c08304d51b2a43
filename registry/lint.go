package registry

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/toolharness/toolharness/chat"
)

// Severity of a lint finding.
type Severity string

// The severities: an error makes `tools lint` exit non-zero.
const (
	SeverityError   Severity = "error"
	SeverityWarning Severity = "warning"
)

// Finding is one lint result.
type Finding struct {
	Severity Severity `json:"severity"`
	Tool     string   `json:"tool"`
	// Param is the parameter path ("" for the tool itself).
	Param   string `json:"param,omitempty"`
	Message string `json:"message"`
}

func (f Finding) String() string {
	where := f.Tool
	if f.Param != "" {
		where += "." + f.Param
	}
	return fmt.Sprintf("%s: %s: %s", f.Severity, where, f.Message)
}

// Lint reviews a catalog the way a model will read it: missing or
// one-word descriptions, parameters without descriptions, names that
// differ only in case or separators, enums whose values are not explained,
// schemas that do not compile. Findings are sorted by tool, then
// parameter, then message.
func Lint(tools []chat.Tool) []Finding {
	var out []Finding
	add := func(s Severity, tool, param, msg string) {
		out = append(out, Finding{Severity: s, Tool: tool, Param: param, Message: msg})
	}
	seen := map[string]string{}
	for _, t := range tools {
		if prev, ok := seen[normName(t.Name)]; ok && prev != t.Name {
			add(SeverityError, t.Name, "", fmt.Sprintf("name differs from %q only in case or separators; a model will confuse them", prev))
		} else {
			seen[normName(t.Name)] = t.Name
		}
		switch d := strings.TrimSpace(t.Description); {
		case d == "":
			add(SeverityError, t.Name, "", "no description: the model can only guess what the tool does")
		case len(strings.Fields(d)) == 1:
			add(SeverityWarning, t.Name, "", fmt.Sprintf("one-word description %q: say what the tool does and when to use it", d))
		}
		if _, err := CompileSchema(t.Parameters); err != nil {
			msg := err.Error()
			var se *SchemaError
			if errors.As(err, &se) {
				msg = "schema does not compile: " + se.Err.Error()
				if se.Keyword != "" {
					msg = fmt.Sprintf("schema does not compile at %s: %s", se.Keyword, se.Err.Error())
				}
			}
			add(SeverityError, t.Name, "", msg)
			continue
		}
		v, err := chat.DecodeOrdered(t.Parameters)
		if err != nil {
			continue
		}
		lintParams(t.Name, "", v, add)
	}
	slices.SortStableFunc(out, func(a, b Finding) int {
		return cmp.Or(strings.Compare(a.Tool, b.Tool), strings.Compare(a.Param, b.Param), strings.Compare(a.Message, b.Message))
	})
	return out
}

// lintParams walks "properties" (and array items) of an ordered schema.
func lintParams(tool, prefix string, schema any, add func(Severity, string, string, string)) {
	o, ok := schema.(*chat.Object)
	if !ok {
		return
	}
	props, _ := o.Get("properties")
	po, ok := props.(*chat.Object)
	if !ok {
		return
	}
	for _, m := range po.Members {
		path := m.Key
		if prefix != "" {
			path = prefix + "." + m.Key
		}
		p, ok := m.Value.(*chat.Object)
		if !ok {
			continue
		}
		desc, _ := p.Get("description")
		ds, _ := desc.(string)
		if strings.TrimSpace(ds) == "" {
			add(SeverityWarning, tool, path, "parameter has no description")
		}
		if enum, ok := p.Get("enum"); ok {
			if vals, ok := enum.([]any); ok && len(vals) > 1 && !describesValues(ds, vals) {
				add(SeverityWarning, tool, path, "enum values are not explained in the description")
			}
		}
		lintParams(tool, path, p, add)
		if items, ok := p.Get("items"); ok {
			lintParams(tool, path+"[]", items, add)
		}
	}
}

// describesValues reports whether a description mentions every enum value
// (the usual way to explain what each one means).
func describesValues(desc string, vals []any) bool {
	if desc == "" {
		return false
	}
	low := strings.ToLower(desc)
	for _, v := range vals {
		s, ok := v.(string)
		if !ok {
			s = fmt.Sprint(v)
		}
		if !strings.Contains(low, strings.ToLower(s)) {
			return false
		}
	}
	return true
}

package corpusgen

import (
	"fmt"
	"sort"
	"strings"

	"github.com/toolharness/toolharness/bench"
)

// Comparison is how the benchmark's lenient parse agrees with the
// original labels, per class.
type Comparison struct {
	Total   int
	Agree   int
	Classes []Class
}

// Class is one kind of agreement or disagreement with its count and up to
// three example record ids.
type Class struct {
	Origin   string
	Name     string
	Agree    bool
	Count    int
	Examples []string
}

// CompareLabels classifies each scored record against its original
// labels. corpus and scored are matched by id.
func CompareLabels(corpus []Record, scored []bench.Record) (Comparison, error) {
	byID := map[string]bench.Record{}
	for _, r := range scored {
		byID[r.ID] = r
	}
	type key struct {
		origin, name string
		agree        bool
	}
	classes := map[key]*Class{}
	var c Comparison
	for _, in := range corpus {
		s, ok := byID[in.ID]
		if !ok {
			return c, fmt.Errorf("corpusgen: record %s was not scored", in.ID)
		}
		origin := in.Labels.Origin + " (" + in.Labels.Parser + ")"
		name, agree := classify(in.Labels, s)
		c.Total++
		if agree {
			c.Agree++
		}
		k := key{origin, name, agree}
		if classes[k] == nil {
			classes[k] = &Class{Origin: origin, Name: name, Agree: agree}
		}
		cl := classes[k]
		cl.Count++
		if len(cl.Examples) < 3 {
			cl.Examples = append(cl.Examples, in.ID)
		}
	}
	for _, cl := range classes {
		c.Classes = append(c.Classes, *cl)
	}
	sort.Slice(c.Classes, func(i, j int) bool {
		a, b := c.Classes[i], c.Classes[j]
		if a.Origin != b.Origin {
			return a.Origin < b.Origin
		}
		if a.Agree != b.Agree {
			return a.Agree
		}
		if a.Count != b.Count {
			return a.Count > b.Count
		}
		return a.Name < b.Name
	})
	return c, nil
}

func cleanNames(p bench.ParseResult) []string {
	var names []string
	for _, c := range p.Calls {
		if c.Error == nil {
			names = append(names, c.Name)
		}
	}
	return names
}

func repairs(p bench.ParseResult) string {
	seen := map[string]bool{}
	var out []string
	for _, c := range p.Calls {
		for _, r := range c.Repairs {
			if !seen[r] {
				seen[r] = true
				out = append(out, r)
			}
		}
	}
	if len(out) == 0 {
		return "no repair"
	}
	sort.Strings(out)
	return strings.Join(out, "+")
}

func sameNames(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	a, b = append([]string(nil), a...), append([]string(nil), b...)
	sort.Strings(a)
	sort.Strings(b)
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// classify names the relation between the labels and our lenient parse.
func classify(l Labels, s bench.Record) (string, bool) {
	ours := cleanNames(s.Lenient)
	failed := s.Lenient.FailureKind()
	strictOK := len(cleanNames(s.Strict)) == len(ours) && !s.Strict.Failed()
	if l.Leftover {
		// The server extracted calls; raw is what it left as content.
		switch {
		case len(ours) == 0 && failed == "":
			return "the server extracted the calls; no call left in its content", true
		case failed != "":
			return "the server left a broken call fragment in content (" + failed + ")", false
		default:
			return "the server left a complete call in content, which we parse (" + repairs(s.Lenient) + ")", false
		}
	}
	theirs := l.Names
	if l.Parser == "hanxen classifier" {
		// The classifier says whether a call is there, not which.
		switch {
		case l.Called && len(ours) > 0:
			return "both see a call (" + l.DetectedFormat + ")", true
		case !l.Called && len(ours) == 0 && failed == "":
			return "both see no call", true
		case l.Called && failed != "":
			return "classifier: call (" + l.DetectedFormat + "); we: malformed (" + failed + ")", false
		case l.Called:
			return "classifier: call (" + l.DetectedFormat + "); we: no call", false
		default:
			return "classifier: no call; we: call (" + repairs(s.Lenient) + ")", false
		}
	}
	switch {
	case !l.Called && len(ours) == 0 && failed == "":
		return "both: no call", true
	case l.Called && len(ours) > 0 && sameNames(theirs, ours):
		if strictOK {
			return "both: same calls (strict parse suffices)", true
		}
		return "both: same calls (lenient repairs: " + repairs(s.Lenient) + ")", true
	case l.Called && len(ours) > 0 && len(theirs) > 0 && !sameNames(theirs, ours):
		if len(theirs) != len(ours) {
			return "both see calls, different number of calls", false
		}
		return "both see calls, different tool names", false
	case l.Called && len(ours) > 0:
		return "both see calls (label names none)", true
	case l.Called && failed != "":
		return "label: call; we: malformed call (" + failed + ")", false
	case l.Called:
		return "label: call; we: no call", false
	case failed != "":
		return "label: no call; we: malformed call (" + failed + ")", false
	default:
		return "label: no call; we: call (" + repairs(s.Lenient) + ")", false
	}
}

// Markdown writes the comparison as tables, one per origin.
func (c Comparison) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Agreement with the original labels: %d of %d records (%.1f%%).\n", c.Agree, c.Total, 100*float64(c.Agree)/float64(max(c.Total, 1)))
	origin := ""
	for _, cl := range c.Classes {
		if cl.Origin != origin {
			origin = cl.Origin
			fmt.Fprintf(&b, "\n**%s**\n\n| agree | class | records | examples |\n|---|---|---:|---|\n", origin)
		}
		mark := "no"
		if cl.Agree {
			mark = "yes"
		}
		fmt.Fprintf(&b, "| %s | %s | %d | %s |\n", mark, cl.Name, cl.Count, "`"+strings.Join(cl.Examples, "`, `")+"`")
	}
	return b.String()
}

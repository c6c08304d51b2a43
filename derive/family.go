package derive

import (
	"slices"

	"time"

	"github.com/toolharness/toolharness/parse"

	"github.com/toolharness/toolharness/templates"
)

// Family returns the templates.Family of a loaded chat template with its
// derived call syntax adopted: when the template writes calls, their
// syntax (a built-in format, or the derived one by its label) becomes the
// family's native and default format, so that render lets the template
// write catalog and calls itself; the derived markers join the control
// tokens untrusted text may not carry, and the derived stops join the
// family's. A built-in family the template was recognised as is returned
// as Lookup has it, with the result for information.
func Family(t *templates.Jinja, now time.Time) (templates.Family, Result, error) {
	fam, err := templates.FamilyOf(t)
	if err != nil {
		return templates.Family{}, Result{}, err
	}
	res, err := Template(t, now, nil)
	if err != nil {
		return templates.Family{}, Result{}, err
	}
	return Adopt(fam, res), res, nil
}

// Own gives a family made of a loaded template the call syntax derived
// from it, so that the template itself writes catalog and calls (as
// transformers would render them) and the parser reads what it writes.
// A family with no template, or whose native format is one a named parser
// reads (the built-in families), is returned as it is, as is one whose
// template writes no calls; res is then nil. A built-in family recognised
// in a loaded template (templates.Family.Loaded) takes the built-in
// format the template's calls are in when it is not the family's own
// (Granite 4.0 writes <tool_call> JSON under granite3's fingerprints).
func Own(fam templates.Family) (_ templates.Family, res *Result, err error) {
	j := fam.Jinja()
	builtin := slices.Contains(parse.Formats(), fam.NativeFormat)
	if j == nil || builtin && !fam.Loaded() {
		return fam, nil, nil
	}
	r, err := Template(j, time.Time{}, nil)
	if err != nil {
		return fam, nil, err
	}
	if !r.WritesCalls {
		return fam, nil, nil
	}
	if builtin {
		if r.Format == "" || r.Format == fam.NativeFormat {
			return fam, nil, nil
		}
		fam.NativeFormat, fam.DefaultFormat = r.Format, r.Format
		return fam, &r, nil
	}
	return Adopt(fam, r), &r, nil
}

// Adopt returns fam with the derived call syntax as its native and default
// format when the template writes calls and fam has no native format yet
// (a built-in family keeps its own); see Family.
func Adopt(fam templates.Family, res Result) templates.Family {
	if fam.NativeFormat != "" || !res.WritesCalls {
		return fam
	}
	fam.NativeFormat, fam.DefaultFormat = res.FormatName(), res.FormatName()
	// The markers the template writes calls in are control tokens whichever
	// parser reads them: render knows the markers of its prompted formats
	// only, not those of a named format such as minimax-m2's
	// <minimax:tool_call>, which no special-token pattern of the template
	// catches either.
	s := res.Syntax
	fam.ControlTokens = appendNew(fam.ControlTokens, s.SectionOpen, s.SectionClose, s.CallOpen, s.CallClose)
	// The role stops too: a model that runs past its turn stops at the
	// next turn's marker instead of inventing it.
	fam.Stop = appendNew(fam.Stop, res.StopStrings()...)
	return fam
}

func appendNew(list []string, more ...string) []string {
	for _, m := range more {
		if m != "" && !slices.Contains(list, m) {
			list = append(list, m)
		}
	}
	return list
}

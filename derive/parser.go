package derive

import (
	"errors"
	"fmt"
	"slices"

	"github.com/toolharness/toolharness/parse"
)

// ErrNoCalls is returned (wrapped) by NewParser for a template that writes
// no tool calls: there is no syntax to parse.
var ErrNoCalls = errors.New("derive: the template writes no tool calls")

// NewParser returns a parser for the calls the template writes: the
// built-in format's parser when the syntax is one and that parser reads
// the template's own calls as the derived syntax does (its repairs know
// the models of that family), else one for the derived syntax. Either
// ends the turn at the template's own role markers (RoleStops) as well as
// at the common ones, for a model the server did not stop there.
func (r Result) NewParser(opts parse.Options) (*parse.Parser, error) {
	if !r.WritesCalls {
		return nil, fmt.Errorf("%w (%s)", ErrNoCalls, r.noCallsReason())
	}
	opts.TurnMarkers = append(slices.Clip(opts.TurnMarkers), r.RoleStops...)
	if r.Format != "" {
		return parse.New(r.Format, opts)
	}
	return parse.NewSyntax(r.Syntax, opts)
}

// FormatName is the name parsers report: the built-in format, or the
// derived syntax's label.
func (r Result) FormatName() string {
	if r.Format != "" {
		return r.Format
	}
	return r.Syntax.Label
}

func (r Result) noCallsReason() string {
	if len(r.Notes) > 0 {
		return r.Notes[len(r.Notes)-1]
	}
	return "no probe call was rendered"
}

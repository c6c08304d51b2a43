package derive

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/toolharness/toolharness/chat"
	"github.com/toolharness/toolharness/parse"
)

// ownCalls says whether a parser reads the probe calls back out of the
// template's own renders of them: the call turn of c.one (and of c.two
// when the template renders parallel calls), from the end of the user's
// text on. It returns "" when it does, else why not.
func ownCalls(c *callRenders, res Result, newParser func(parse.Options) (*parse.Parser, error)) string {
	// Pair values are read with the tools' schemas, as a session reads
	// them with its catalog.
	tools, err := chat.ParseTools([]byte(probeTools))
	if err != nil {
		return oneLine(err)
	}
	renders := []string{c.one}
	if c.parallel {
		renders = append(renders, c.two)
	}
	for n, render := range renders {
		turn := render[strings.LastIndex(render, sentinelUser)+len(sentinelUser):]
		open, close := res.Syntax.ReasoningOpen, res.Syntax.ReasoningClose
		thinkOpen := res.ThinkOpen && close != "" && strings.Contains(turn, close) && !strings.Contains(turn, open)
		p, err := newParser(parse.Options{Tools: tools, ThinkOpen: thinkOpen})
		if err != nil {
			return oneLine(err)
		}
		var calls []chat.ToolCall
		var problem error
		emit := func(ev parse.Event) {
			switch {
			case ev.Type == parse.EventCall:
				calls = append(calls, ev.Call)
				if ev.Err != nil && problem == nil {
					problem = ev.Err
				}
			case ev.Type == parse.EventError && problem == nil:
				problem = ev.Err
			}
		}
		p.Feed(turn, emit)
		p.Close(emit)
		if problem != nil {
			return oneLine(problem)
		}
		want := probeCalls(n + 1)
		if len(calls) != len(want) {
			return fmt.Sprintf("%d calls read from the template's render of %d", len(calls), len(want))
		}
		for i, got := range calls {
			if got.Name != want[i].Name || !reflect.DeepEqual(decodeJSON(string(got.Arguments)), decodeJSON(string(want[i].Arguments))) {
				return fmt.Sprintf("call %d read as %s %s, rendered as %s %s", i+1, got.Name, got.Arguments, want[i].Name, want[i].Arguments)
			}
		}
	}
	return ""
}

// checkParsers keeps the built-in format only where it reads the
// template's own calls as the derived syntax does (the mapping is a speed
// choice, never a different reading), and records whether the parser
// NewParser gives reads them.
func (res *Result) checkParsers(c *callRenders) {
	derived := ownCalls(c, *res, func(o parse.Options) (*parse.Parser, error) { return parse.NewSyntax(res.Syntax, o) })
	if f := res.Format; f != "" {
		builtin := ownCalls(c, *res, func(o parse.Options) (*parse.Parser, error) { return parse.New(f, o) })
		switch {
		case builtin != "" && derived == "":
			res.Notes = append(res.Notes, fmt.Sprintf("the %s format's parser does not read the template's own calls (%s): the derived syntax is used", f, builtin))
			res.Format = ""
		case builtin == "" && derived != "":
			res.Notes = append(res.Notes, fmt.Sprintf("the derived syntax does not read the template's own calls (%s): the %s format's parser is used", derived, f))
		}
		if res.Format != "" {
			res.ParsesOwnCalls = builtin == ""
			return
		}
	}
	res.ParsesOwnCalls = derived == ""
	if derived != "" {
		res.Notes = append(res.Notes, "the derived syntax does not read the template's own calls: "+derived)
	}
}

package agent

import (
	"strings"

	"github.com/toolharness/toolharness/parse"
)

// parseStream adapts a parse.Parser to the loop's StreamParser.
type parseStream struct {
	p interface {
		Feed(string, func(parse.Event))
		Close(func(parse.Event))
	}
	out []Event
}

// NewParser returns a streaming parser of format over tools.
func NewParser(format string, opts parse.Options) (StreamParser, error) {
	p, err := parse.New(format, opts)
	if err != nil {
		return nil, err
	}
	return &parseStream{p: p}, nil
}

func (s *parseStream) emit(ev parse.Event) {
	out := Event{}
	switch ev.Type {
	case parse.EventText:
		out.Kind, out.Text, out.Part = EventText, ev.Text, ev.Part
	case parse.EventCallStart:
		c := ev.Call
		out.Kind, out.Call = EventCallStart, &c
	case parse.EventCall:
		c := ev.Call
		out.Kind, out.Call = EventCall, &c
	case parse.EventError:
		out.Kind = EventError
	case parse.EventEndTurn:
		out.Kind = EventEndTurn
	default:
		return
	}
	if ev.Err != nil {
		out.Err = &ParseError{Kind: string(ev.Err.Kind), Offset: ev.Err.Offset, Message: ev.Err.Message, attached: ev.Type == parse.EventCall}
	}
	s.out = append(s.out, out)
}

func (s *parseStream) Feed(chunk string) []Event {
	s.out = nil
	s.p.Feed(chunk, s.emit)
	return s.out
}

func (s *parseStream) Close() []Event {
	s.out = nil
	s.p.Close(s.emit)
	return s.out
}

// Answer returns the answer of a generation's events: the text of its
// content parts, without reasoning (a leading <think> block, harmony's
// analysis channel) or the markup that frames the parts. It is what a
// front end shows as the model's reply; the history keeps the raw output.
func Answer(evs []Event) string { return partText(evs, parse.PartContent) }

// Reasoning returns the reasoning text of a generation's events.
func Reasoning(evs []Event) string { return partText(evs, parse.PartReasoning) }

func partText(evs []Event, part parse.Part) string {
	var b strings.Builder
	for _, e := range evs {
		if e.Kind == EventText && e.Part == part {
			b.WriteString(e.Text)
		}
	}
	return b.String()
}

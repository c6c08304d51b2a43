package parse

import (
	"fmt"

	"github.com/toolharness/toolharness/chat"
)

// EventType says what an Event carries.
type EventType uint8

// The event types, see the package documentation.
const (
	EventText EventType = iota + 1
	EventCallStart
	EventCall
	EventError
	// EventEndTurn says the turn ended at a marker of another turn
	// (turn.go); Err says where and which (kind overran_turn).
	EventEndTurn
)

// String returns the name used on the command line ("text", "call_start",
// "call", "error", "end_turn").
func (t EventType) String() string {
	switch t {
	case EventText:
		return "text"
	case EventCallStart:
		return "call_start"
	case EventCall:
		return "call"
	case EventError:
		return "error"
	case EventEndTurn:
		return "end_turn"
	}
	return fmt.Sprintf("event(%d)", uint8(t))
}

// Event is one thing the parser found in the stream.
type Event struct {
	Type EventType
	// Part says what part of the reply the Text of an EventText is: the
	// answer (PartContent, the zero value), reasoning or framing markup.
	Part Part
	// Text is the text of an EventText, every byte of the model's
	// output outside calls, whatever its part.
	Text string
	// Call is set on EventCallStart (ID, Name, Offset) and EventCall.
	Call chat.ToolCall
	// Err is set on EventError, and on an EventCall whose tool is unknown
	// or whose arguments could not be read.
	Err *Error
}

// Kind is the kind of a parse error; the list is closed, see the package
// documentation.
type Kind string

// The error kinds.
const (
	KindUnclosedBlock Kind = "unclosed_block"
	KindBadJSON       Kind = "bad_json"
	KindBadArguments  Kind = "bad_arguments"
	KindUnknownTool   Kind = "unknown_tool"
	KindMissingName   Kind = "missing_name"
	KindBadValue      Kind = "bad_value"
	KindTruncated     Kind = "truncated"
	KindUnexpectedTag Kind = "unexpected_tag"
	KindInput         Kind = "input"
	// KindOverranTurn is the error of an EventEndTurn: the model went
	// on writing another turn.
	KindOverranTurn Kind = "overran_turn"
)

// Kinds returns every error kind, in documentation order.
func Kinds() []Kind {
	return []Kind{KindUnclosedBlock, KindBadJSON, KindBadArguments, KindUnknownTool,
		KindMissingName, KindBadValue, KindTruncated, KindUnexpectedTag, KindInput, KindOverranTurn}
}

// Error is a problem with the model's output.
type Error struct {
	Kind Kind
	// Offset is the byte offset in the turn's text where the problem is.
	Offset int
	// Message is short and written for the model to act on.
	Message string
	// Raw is the text concerned (for errors not attached to a call), so
	// that nothing the model wrote is lost.
	Raw string
}

func (e *Error) Error() string {
	return fmt.Sprintf("parse: %s at offset %d", e.Message, e.Offset)
}

// Options configure a Parser.
type Options struct {
	// Tools is the catalog: it names the registered tools and gives the
	// JSON Schemas for value decoding. Empty means any name is accepted.
	Tools []chat.Tool
	// Catalog, when set, is Tools read once (NewCatalog(Tools)), shared
	// by the parsers of a session instead of each decoding the schemas.
	Catalog *Catalog
	// Strict disables every repair.
	Strict bool
	// TurnMarkers are markers of other turns besides TurnMarkers() (a
	// template's own role headers): the turn ends at one (turn.go).
	TurnMarkers []string
	// ThinkOpen says the prompt already opened a reasoning block (the
	// generation prompt ends with <think>, as in Qwen3 "Thinking-2507" and
	// DeepSeek-R1 templates): the output starts inside it, and everything
	// up to the first </think> (</seed:think> in seed-oss) is reasoning,
	// emitted as text and never scanned for calls. Without it, only a
	// block at the start of the output is reasoning (<think>…</think>, and
	// the format's own markers: see reasoning.go).
	ThinkOpen bool
}

// Call is a call of a Result, with its error if it has one.
type Call struct {
	chat.ToolCall
	Err *Error
}

// Result is the outcome of a one-shot parse.
type Result struct {
	// Content is all text outside calls, concatenated, whatever its
	// part; Answer is only the content parts (Answer of the events) and
	// Reasoning the reasoning parts.
	Content, Answer, Reasoning string
	Calls                      []Call
	// Errors are the problems not attached to a call.
	Errors []*Error
	// EndTurn is set when the turn ended at a marker of another turn.
	EndTurn *Error
}

// String parses a whole text at once, for the benchmark and batch tools.
func String(format, text string, opts Options) (Result, error) {
	p, err := New(format, opts)
	if err != nil {
		return Result{}, err
	}
	return p.parseAll(text), nil
}

func (p *Parser) parseAll(text string) Result {
	var r Result
	var content, answer, reasoning []byte
	emit := func(e Event) {
		switch e.Type {
		case EventText:
			content = append(content, e.Text...)
			switch e.Part {
			case PartContent:
				answer = append(answer, e.Text...)
			case PartReasoning:
				reasoning = append(reasoning, e.Text...)
			}
		case EventCall:
			r.Calls = append(r.Calls, Call{ToolCall: e.Call, Err: e.Err})
		case EventError:
			r.Errors = append(r.Errors, e.Err)
		case EventEndTurn:
			r.EndTurn = e.Err
		}
	}
	p.Feed(text, emit)
	p.Close(emit)
	r.Content, r.Answer, r.Reasoning = string(content), string(answer), string(reasoning)
	return r
}

package parse

import (
	"errors"
	"fmt"
	"strings"
)

// Syntax describes a tool-call syntax that is not one of the named formats:
// typically one learned from a model's own chat template by rendering probe
// conversations (the package that derives it knows templates; this one only
// reads the description). A parser for it is made with NewSyntax and behaves
// like the built-in ones: the same events, repairs, error kinds and
// chunk-invariance.
//
// A call as the model writes it is, in order:
//
//	[SectionOpen]                      once, before the first call of a turn
//	  CallOpen Body CallClose          per call, CallSeparator between calls
//	[SectionClose]                     once, after the last call
//
// where Body is one of the BodyKind shapes below. Literal fields are matched
// piece by piece: a marker is split at whitespace, each piece must appear as
// written, and the whitespace between pieces (and around JSON values,
// between pairs, between calls) may differ from the template's, since
// models trained on a template drop or add newlines there. A field that is
// only whitespace (NameSuffix "\n") ends what precedes it at any
// whitespace. Pair values keep their text, minus one copy of the
// whitespace the template writes around them (KeyClose ">\n" and
// ValueClose "\n</parameter>": one leading and one trailing newline).
//
// Examples (what the official templates write):
//
//	GLM-4.5     CallOpen "<tool_call>" Body BodyPairs NameSuffix "\n"
//	            KeyOpen "<arg_key>" KeyClose "</arg_key>" ValueOpen "<arg_value>"
//	            ValueClose "</arg_value>" CallClose "</tool_call>"
//	Kimi K2     SectionOpen "<|tool_calls_section_begin|>" CallOpen "<|tool_call_begin|>"
//	            Body BodyNameJSON NamePrefix "functions." IDPrefix ":"
//	            ArgsPrefix "<|tool_call_argument_begin|>" CallClose "<|tool_call_end|>"
//	            SectionClose "<|tool_calls_section_end|>"
//	DeepSeek R1 SectionOpen "<｜tool▁calls▁begin｜>" CallOpen "<｜tool▁call▁begin｜>"
//	            Body BodyNameJSON NamePrefix "function<｜tool▁sep｜>" NameSuffix "\n"
//	            ArgsPrefix "```json\n" ArgsSuffix "\n```" CallClose "<｜tool▁call▁end｜>"
//	            SectionClose "<｜tool▁calls▁end｜>"
//	LFM2        CallOpen "<|tool_call_start|>" Body BodyPythonList CallClose "<|tool_call_end|>"
//	Command R7B CallOpen "<|START_ACTION|>" Body BodyJSONList NameKey "tool_name"
//	            ArgsKey "parameters" CallClose "<|END_ACTION|>"
//	Functionary CallOpen ">>>" Body BodyNameJSON NameSuffix "\n"   (no CallClose: the next
//	v3.2        CallOpen or the end of the output ends a call)
type Syntax struct {
	// Label names the syntax in messages and in Parser.Format, for example
	// "derived:glm-4.5"; "" is reported as "syntax".
	Label string

	// SectionOpen and SectionClose wrap all the calls of one turn; both ""
	// when there is no section.
	SectionOpen, SectionClose string
	// CallOpen opens one call; it is required unless Body is JSON (objects
	// back to back, or a list) or a Python list. With neither CallOpen nor
	// SectionOpen, a call is recognised by its shape, as the json and
	// pythonic formats recognise theirs: a JSON object holding NameKey, or
	// a list of such objects or of Python calls (Llama 3.1's bare
	// {"name": …, "parameters": …}, Llama 4's [get_weather(city="Paris")]);
	// with a catalog, a call must name one of its tools.
	CallOpen string
	// CallClose closes one call; "" when a call ends at the next CallOpen,
	// at SectionClose, or at the end of the output.
	CallClose string
	// CallSeparator is what the template writes between two calls (often
	// "\n" or ""); informative for parsing, where whitespace between calls
	// is always accepted.
	CallSeparator string

	// Body says how the name and arguments are written between CallOpen and
	// CallClose.
	Body BodyKind

	// NameKey and ArgsKey are the keys of the call object for BodyJSON and
	// BodyJSONList ("name"/"arguments", "name"/"parameters",
	// "tool_name"/"parameters", …). ArgsKey's value is a JSON object, or a
	// string holding one (double-encoded arguments, accepted as a repair).
	NameKey, ArgsKey string
	// NameAsKey, for BodyJSON and BodyJSONList, says that a call object
	// has one key, the tool name, whose value is the arguments:
	// [{"get_weather": {"city": "Paris"}}] (Apertus). NameKey and ArgsKey
	// are then unused.
	NameAsKey bool

	// NamePrefix and NameSuffix surround the tool name for BodyNameJSON and
	// BodyPairs ("<function=" ">", "" "\n", "functions." ""). The name runs
	// from after NamePrefix to the first NameSuffix, IDPrefix or ArgsPrefix
	// (whichever the syntax has), so it must not contain them.
	NamePrefix, NameSuffix string
	// IDPrefix, when set, follows the name (after NameSuffix) and introduces
	// a call id that runs up to ArgsPrefix: Kimi K2 ":0", Mistral Small 3.2
	// "[CALL_ID]abc123XYZ". The id becomes the call's ID.
	IDPrefix string
	// IDFirst, for BodyNameJSON and BodyPairs, says the call's id comes
	// first, right after CallOpen, and runs up to NamePrefix (which must
	// be set): Solar Open's <|tool_call:begin|>ID<|tool_call:name|>NAME.
	// The id is one word and becomes the call's ID.
	IDFirst bool
	// Quote, for BodyNameJSON, says the arguments are written in an object
	// notation with bare keys whose strings sit between Quote tokens
	// instead of JSON's quotes; numbers, true, false and nested objects
	// and lists are as in JSON: FunctionGemma's {city:<escape>Paris<escape>}
	// (Quote "<escape>"), Gemma 4's {city:<|"|>Paris<|"|>} (Quote
	// `<|"|>`). The name then ends at the object's "{".
	Quote string
	// ArgsPrefix and ArgsSuffix surround the arguments' JSON object for
	// BodyNameJSON ("<|tool_call_argument_begin|>", "```json\n" "\n```",
	// "[ARGS]").
	ArgsPrefix, ArgsSuffix string

	// KeyOpen, KeyClose, ValueOpen and ValueClose write one argument of
	// BodyPairs: KeyOpen key KeyClose ValueOpen value ValueClose. A value
	// is read with the tool's schema (a string parameter's text is the
	// string; other types are JSON), as in the qwen3-coder format. For
	// "<parameter=k>\nv\n</parameter>", KeyOpen is "<parameter=", KeyClose
	// ">\n", ValueOpen "" and ValueClose "\n</parameter>".
	KeyOpen, KeyClose, ValueOpen, ValueClose string
	// TypeAttr, for BodyPairs, names an attribute written between KeyClose
	// and ValueOpen that says whether the value is text ("true") or JSON
	// ("false"): DeepSeek V3.2's DSML writes
	// <｜DSML｜parameter name="k" string="false">5</｜DSML｜parameter>, with
	// KeyClose `"`, TypeAttr "string" and ValueOpen ">".
	TypeAttr string

	// ReasoningOpen and ReasoningClose delimit a reasoning block the
	// parser must not scan for calls ("<think>", "</think>"); "" when the
	// template has none. ThinkOpen in Options says the prompt opened it.
	ReasoningOpen, ReasoningClose string

	// Stop holds the end-of-turn strings of the template; informative for
	// the parser (a backend passes them to the server).
	Stop []string
}

// BodyKind is the shape of a call's body in a Syntax.
type BodyKind uint8

// The body shapes.
const (
	// BodyJSON: one JSON object {NameKey: "t", ArgsKey: {…}}.
	BodyJSON BodyKind = iota + 1
	// BodyJSONList: a JSON list of such objects, one or more calls.
	BodyJSONList
	// BodyNameJSON: NamePrefix name NameSuffix [IDPrefix id] ArgsPrefix
	// {…} ArgsSuffix.
	BodyNameJSON
	// BodyPairs: NamePrefix name NameSuffix, then key/value elements.
	BodyPairs
	// BodyPythonList: [t(a=1, b="x"), u()] — Python call syntax in a list.
	BodyPythonList
	// BodyPython: t(a=1, b="x") — one Python call, no list brackets.
	BodyPython
)

var bodyNames = [...]string{
	BodyJSON:       "json-object",
	BodyJSONList:   "json-list",
	BodyNameJSON:   "name-then-json",
	BodyPairs:      "key-value-pairs",
	BodyPythonList: "python-list",
	BodyPython:     "python-call",
}

// String returns the body shape's name, as `templates inspect` prints it.
func (k BodyKind) String() string {
	if int(k) < len(bodyNames) && bodyNames[k] != "" {
		return bodyNames[k]
	}
	return fmt.Sprintf("body(%d)", uint8(k))
}

// MarshalText writes the body shape's name (for --json output).
func (k BodyKind) MarshalText() ([]byte, error) { return []byte(k.String()), nil }

// ErrBadSyntax is returned (wrapped) by Syntax.Validate and NewSyntax for a
// description no parser can be built from.
var ErrBadSyntax = errors.New("parse: bad syntax")

// Validate reports whether s describes a syntax a parser can read.
func (s Syntax) Validate() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w %q: %s", ErrBadSyntax, s.label(), fmt.Sprintf(format, args...))
	}
	switch s.Body {
	case BodyJSON, BodyJSONList:
		if !s.NameAsKey && (s.NameKey == "" || s.ArgsKey == "") {
			return bad("a JSON body needs NameKey and ArgsKey")
		}
	case BodyNameJSON:
		if s.NameSuffix == "" && s.IDPrefix == "" && s.ArgsPrefix == "" && s.Quote == "" {
			return bad("nothing ends the tool name (set NameSuffix, IDPrefix or ArgsPrefix)")
		}
	case BodyPairs:
		if s.KeyOpen == "" || (s.KeyClose == "" && s.ValueOpen == "") || s.ValueClose == "" {
			return bad("pairs need KeyOpen, KeyClose or ValueOpen, and ValueClose")
		}
		if s.NameSuffix == "" && s.KeyOpen == "" {
			return bad("nothing ends the tool name")
		}
	case BodyPythonList, BodyPython:
	default:
		return bad("unknown body shape %d", uint8(s.Body))
	}
	if s.Quote != "" && (s.Body != BodyNameJSON || strings.TrimSpace(s.Quote) != s.Quote) {
		return bad("Quote is a token for name-then-object bodies")
	}
	if s.IDFirst && (s.Body != BodyNameJSON && s.Body != BodyPairs || strings.TrimSpace(s.NamePrefix) == "") {
		return bad("IDFirst needs a name-then-object or pairs body and a NamePrefix after the id")
	}
	if s.NameAsKey && s.Body != BodyJSON && s.Body != BodyJSONList {
		return bad("NameAsKey is for JSON bodies")
	}
	if s.NameAsKey && s.CallOpen == "" && s.SectionOpen == "" {
		// Any object of one key would be a call.
		return bad("calls keyed by their name need CallOpen or SectionOpen")
	}
	if s.CallOpen == "" && s.Body != BodyJSONList && s.Body != BodyPythonList && s.Body != BodyJSON {
		return bad("CallOpen is required unless the body is JSON or a Python list")
	}
	if (s.SectionOpen == "") != (s.SectionClose == "") && s.SectionClose != "" {
		return bad("SectionClose without SectionOpen")
	}
	for _, m := range []struct{ field, v string }{{"CallOpen", s.CallOpen}, {"SectionOpen", s.SectionOpen}, {"KeyOpen", s.KeyOpen}, {"ValueClose", s.ValueClose}, {"ReasoningOpen", s.ReasoningOpen}, {"ReasoningClose", s.ReasoningClose}} {
		if m.v != "" && strings.TrimSpace(m.v) == "" {
			return bad("%s is only whitespace", m.field)
		}
	}
	if s.Body == BodyPairs && strings.TrimSpace(s.KeyClose) == "" && strings.TrimSpace(s.ValueOpen) == "" {
		return bad("nothing ends a key (KeyClose and ValueOpen are whitespace)")
	}
	if (s.ReasoningOpen == "") != (s.ReasoningClose == "") {
		return bad("ReasoningOpen and ReasoningClose go together")
	}
	return nil
}

func (s Syntax) label() string {
	if s.Label == "" {
		return "syntax"
	}
	return s.Label
}

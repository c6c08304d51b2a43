package derive

import (
	"strings"

	"github.com/toolharness/toolharness/parse"
)

// builtinFormat names the built-in parse format whose grammar the derived
// syntax is, or "". The comparison is on the syntax's shape and markers
// (what each format's parser reads, see parse's doc), never on which
// template it came from; a built-in format is preferred because its parser
// also knows the repairs real models of that family need.
func builtinFormat(s parse.Syntax) string {
	nameArgs := s.NameKey == "name" && (s.ArgsKey == "arguments" || s.ArgsKey == "parameters")
	switch s.Body {
	case parse.BodyJSON:
		switch {
		case s.CallOpen == "<tool_call>" && s.CallClose == "</tool_call>" && s.SectionOpen == "" && nameArgs:
			return "hermes"
		case (s.CallOpen == "" || s.CallOpen == "<|python_tag|>") && s.CallClose == "" && nameArgs:
			return "json"
		}
	case parse.BodyJSONList:
		if s.CallOpen == "[TOOL_CALLS]" && nameArgs {
			return "mistral"
		}
	case parse.BodyNameJSON:
		switch {
		case s.CallOpen == "[TOOL_CALLS]" && s.ArgsPrefix == "[ARGS]" && (s.IDPrefix == "" || s.IDPrefix == "[CALL_ID]"):
			return "mistral"
		case harmonyHeader(s.CallOpen+s.NamePrefix) && strings.Contains(s.ArgsPrefix, "<|message|>") && s.CallClose == "<|call|>":
			return "harmony"
		}
	case parse.BodyPairs:
		switch {
		case s.CallOpen == "<tool_call>" && s.NamePrefix == "<function=" && s.KeyOpen == "<parameter=" &&
			strings.TrimSpace(s.ValueClose) == "</parameter>":
			return "qwen3-coder"
		case s.CallOpen == "<function_calls>" && s.NamePrefix == `<invoke name="` && s.KeyOpen == `<parameter name="`:
			return "xml"
		}
	case parse.BodyPythonList:
		if s.CallOpen == "" {
			return "pythonic"
		}
	}
	return ""
}

// harmonyHeader reports whether a call's head is the harmony parser's:
// the channel, then the recipient (<|channel|>commentary to=functions.).
// gpt-oss's template writes the recipient first (" to=functions.T<|channel|>"),
// which that parser does not read, so such a syntax stays derived.
func harmonyHeader(head string) bool {
	c := strings.Index(head, "<|channel|>")
	return c >= 0 && strings.Index(head, "to=functions.") > c
}

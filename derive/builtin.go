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
		case strings.Contains(s.CallOpen+s.NamePrefix, "to=functions.") && strings.Contains(s.ArgsPrefix, "<|message|>") &&
			s.CallClose == "<|call|>":
			// The harmony parser reads the recipient before or after the
			// channel, as gpt-oss's template and models write it.
			return "harmony"
		case s.Quote == "<escape>" && s.CallOpen == "<start_function_call>" && s.NamePrefix == "call:" && s.CallClose == "<end_function_call>":
			return "functiongemma"
		case s.Quote != "":
			// No other built-in format reads quote tokens.
		case s.CallOpen == "" && s.SectionOpen == "" && s.NamePrefix == "" && s.NameSuffix == "\n" && s.ArgsPrefix == "" && s.CallClose == "":
			return "glm4"
		case s.SectionOpen == "<|tool_calls_section_begin|>" && s.SectionClose == "<|tool_calls_section_end|>" &&
			s.CallOpen == "<|tool_call_begin|>" && s.CallClose == "<|tool_call_end|>" && s.NamePrefix == "functions." &&
			s.IDPrefix == ":" && s.ArgsPrefix == "<|tool_call_argument_begin|>":
			// Kimi K2: its parser takes the id the model writes as the
			// call's id, as the template writes it back.
			return "kimi-k2"
		case deepseekMarkers(s) && (s.NamePrefix == "function<｜tool▁sep｜>" && s.NameSuffix == "\n" && s.ArgsPrefix == "```json\n" && s.ArgsSuffix == "\n```" ||
			s.NamePrefix == "" && s.NameSuffix == "" && s.ArgsPrefix == "<｜tool▁sep｜>" && s.ArgsSuffix == "") && s.IDPrefix == "":
			// V3 and R1 (function<｜tool▁sep｜>NAME, fenced JSON) and
			// V3.1 (NAME<｜tool▁sep｜>JSON): the deepseek parser reads
			// both, and the spellings DeepSeek models also write.
			return "deepseek"
		}
	case parse.BodyPairs:
		switch {
		case s.CallOpen == "<tool_call>" && s.NamePrefix == "<function=" && s.KeyOpen == "<parameter=" &&
			strings.TrimSpace(s.ValueClose) == "</parameter>":
			return "qwen3-coder"
		case s.CallOpen == "<function_calls>" && s.NamePrefix == `<invoke name="` && s.KeyOpen == `<parameter name="`,
			s.SectionOpen == "<function_calls>" && invokeCalls(s):
			return "xml"
		case s.SectionOpen == "<minimax:tool_call>" && s.SectionClose == "</minimax:tool_call>" && invokeCalls(s):
			return "minimax-m2"
		case s.SectionOpen == "<｜DSML｜function_calls>" && s.CallOpen == `<｜DSML｜invoke name="` && s.KeyOpen == `<｜DSML｜parameter name="`:
			// DeepSeek V3.2's DSML: the text after a key says whether the
			// value is a string (string="true|false"), which only the
			// deepseek parser reads.
			return "deepseek"
		case s.KeyOpen == "<parameter=" && (s.SectionOpen == "<seed:tool_call>" && s.CallOpen == "<function=" ||
			s.SectionOpen == "" && s.CallOpen == "<seed:tool_call>" && s.NamePrefix == "<function="):
			// Seed-OSS, whose template wraps each call in its own section.
			return "seed-oss"
		case s.CallOpen == "<tool_call>" && s.CallClose == "</tool_call>" && s.NamePrefix == "" && strings.TrimSpace(s.NameSuffix) == "" &&
			s.KeyOpen == "<arg_key>" && s.KeyClose == "</arg_key>" && s.ValueOpen == "<arg_value>" && s.ValueClose == "</arg_value>":
			return "glm45"
		}
	case parse.BodyPythonList:
		if s.CallOpen == "" {
			return "pythonic"
		}
	}
	return ""
}

// invokeCalls: Anthropic-style <invoke name="…"> calls of <parameter
// name="…"> pairs.
func invokeCalls(s parse.Syntax) bool {
	return s.CallOpen == `<invoke name="` && s.KeyOpen == `<parameter name="` && s.CallClose == "</invoke>"
}

// deepseekMarkers: the section and call markers of DeepSeek V3, V3.1 and R1.
func deepseekMarkers(s parse.Syntax) bool {
	return s.SectionOpen == "<｜tool▁calls▁begin｜>" && s.SectionClose == "<｜tool▁calls▁end｜>" &&
		s.CallOpen == "<｜tool▁call▁begin｜>" && s.CallClose == "<｜tool▁call▁end｜>"
}

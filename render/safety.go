package render

import (
	"sort"
	"strings"

	"github.com/toolharness/toolharness/chat"
	"github.com/toolharness/toolharness/templates"
)

// Breaker is inserted after the first character of every control token and
// framing marker found in untrusted text. U+2060 WORD JOINER is invisible,
// is no part of any tokenizer's special tokens, and no parser marker
// contains it, so the marker reads the same but is no longer one.
const Breaker = "\u2060"

// reminderMarkers are never allowed in untrusted text: a user or a tool
// must not be able to forge a system reminder.
var reminderMarkers = []string{"<system-reminder>", "</system-reminder>"}

// CallMarkers returns the strings that frame calls (and the catalog) in
// format; for tags, one opening and closing tag per tool.
func CallMarkers(format string, tools []chat.Tool) []string {
	switch format {
	case FormatXML:
		return []string{"<function_calls>", "</function_calls>", "<invoke", "</invoke>", "<parameter", "</parameter>",
			"<functions>", "</functions>", "<function>", "</function>"}
	case FormatHermes:
		return []string{"<tool_call>", "</tool_call>", "<tools>", "</tools>"}
	case FormatJSON:
		return []string{"<|python_tag|>"}
	case FormatMistral:
		return []string{"[TOOL_CALLS]", "[AVAILABLE_TOOLS]", "[/AVAILABLE_TOOLS]", "[CALL_ID]", "[ARGS]"}
	case FormatQwen3Coder:
		return []string{"<tool_call>", "</tool_call>", "<function=", "</function>", "<parameter=", "</parameter>"}
	case FormatHarmony:
		return []string{"<|start|>", "<|end|>", "<|message|>", "<|channel|>", "<|constrain|>", "<|call|>", "<|return|>"}
	case FormatTags:
		var m []string
		for _, t := range tools {
			m = append(m, "<"+t.Name+">", "</"+t.Name+">")
		}
		return m
	}
	return nil
}

// ResultMarkers returns the strings that frame tool results in format.
func ResultMarkers(format string) []string {
	switch format {
	case FormatXML:
		return []string{"<function_results>", "</function_results>", "<result>", "</result>", "<stdout>", "</stdout>",
			"<error>", "</error>", "<tool_name>", "</tool_name>"}
	case FormatHermes, FormatQwen3Coder:
		return []string{"<tool_response>", "</tool_response>"}
	case FormatMistral:
		return []string{"[TOOL_RESULTS]", "[/TOOL_RESULTS]", "[INST]", "[/INST]"}
	case FormatHarmony:
		return []string{"<|start|>", "<|end|>", "<|message|>", "<|channel|>"}
	}
	return []string{"<tool_result", "</tool_result>"}
}

// FormatMarkers returns every framing marker of format: calls and results.
func FormatMarkers(format string, tools []chat.Tool) []string {
	return append(CallMarkers(format, tools), ResultMarkers(format)...)
}

// Markers returns every string user text may not carry for a family and
// format: the family's control tokens, the format's call and result
// markers and the system-reminder tags, longest first.
func Markers(fam templates.Family, format string, tools []chat.Tool) []string {
	return markerSet(fam.ControlTokens, FormatMarkers(format, tools), reminderMarkers)
}

// ResultTextMarkers returns what tool-result text may not carry: control
// tokens, result markers and the system-reminder tags. Call markers stay:
// inside a result block that cannot be closed they are data, and the
// corrected example of a model-facing error must reach the model intact.
func ResultTextMarkers(fam templates.Family, format string) []string {
	return markerSet(fam.ControlTokens, ResultMarkers(format), reminderMarkers)
}

func markerSet(lists ...[]string) []string {
	seen := map[string]bool{}
	var out []string
	for _, list := range lists {
		for _, s := range list {
			if s != "" && !seen[s] {
				seen[s] = true
				out = append(out, s)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if len(out[i]) != len(out[j]) {
			return len(out[i]) > len(out[j])
		}
		return out[i] < out[j]
	})
	return out
}

// Neutralize makes untrusted text inert for a family and format: every
// occurrence of a marker (see Markers) gets Breaker after its first
// character. Text without markers is returned unchanged.
func Neutralize(fam templates.Family, format, text string, tools []chat.Tool) string {
	return neutralize(text, Markers(fam, format, tools))
}

func neutralize(text string, markers []string) string {
	hit := false
	for _, m := range markers {
		if strings.Contains(text, m) {
			hit = true
			break
		}
	}
	if !hit {
		return text
	}
	var b strings.Builder
	b.Grow(len(text) + 16)
	for i := 0; i < len(text); i++ {
		b.WriteByte(text[i])
		for _, m := range markers {
			if strings.HasPrefix(text[i:], m) {
				// Finish the first character (markers may start with a
				// multi-byte one, e.g. DeepSeek's "<｜"), then break.
				n := firstRuneLen(m)
				b.WriteString(text[i+1 : i+n])
				i += n - 1
				b.WriteString(Breaker)
				break
			}
		}
	}
	return b.String()
}

func firstRuneLen(s string) int {
	for i := range s {
		if i > 0 {
			return i
		}
	}
	return len(s)
}

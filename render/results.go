package render

import (
	"fmt"
	"strings"

	"github.com/toolharness/toolharness/chat"
)

// MatchResults orders results as their calls: by CallID where given, by
// position otherwise. A result that names no call of the turn is an error.
func MatchResults(calls []chat.ToolCall, results []chat.ToolResult) ([]chat.ToolResult, error) {
	out := make([]chat.ToolResult, 0, len(results))
	used := make([]bool, len(results))
	for ci, c := range calls {
		for ri, r := range results {
			if used[ri] {
				continue
			}
			if (r.CallID != "" && r.CallID == c.ID) || (r.CallID == "" && ri == ci) {
				if r.Name == "" {
					r.Name = c.Name
				}
				out = append(out, r)
				used[ri] = true
				break
			}
		}
	}
	for ri, r := range results {
		if !used[ri] {
			return nil, fmt.Errorf("render: result %d (call id %q, %s) matches no call of the turn", ri, r.CallID, r.Name)
		}
	}
	return out, nil
}

// Results writes the results of one turn in format, matched to calls by id
// and in call order. Result text is framing-safe unless verbatim: result
// markers of the format and the system-reminder tags in it are broken (see
// ResultTextMarkers; Prompt also breaks the family's control tokens).
func Results(format string, calls []chat.ToolCall, results []chat.ToolResult, verbatim bool) (string, error) {
	if err := checkFormat(format); err != nil {
		return "", err
	}
	ordered, err := MatchResults(calls, results)
	if err != nil {
		return "", err
	}
	return formatResults(format, ordered, func(s string) string {
		if verbatim {
			return s
		}
		return neutralize(s, markerSet(ResultMarkers(format), reminderMarkers))
	})
}

func formatResults(format string, results []chat.ToolResult, safe func(string) string) (string, error) {
	var b strings.Builder
	switch format {
	case FormatXML:
		b.WriteString("<function_results>\n")
		for _, r := range results {
			tag := "stdout"
			if r.IsError {
				tag = "error"
			}
			fmt.Fprintf(&b, "<result>\n<tool_name>%s</tool_name>\n<%s>\n%s\n</%s>\n</result>\n", r.Name, tag, safe(r.Content), tag)
		}
		b.WriteString("</function_results>")
	case FormatHermes, FormatQwen3Coder:
		for i, r := range results {
			if i > 0 {
				b.WriteString("\n")
			}
			fmt.Fprintf(&b, "<tool_response>\n%s%s\n</tool_response>", errPrefix(r), safe(r.Content))
		}
	case FormatMistral:
		for _, r := range results {
			c := quote(errPrefix(r) + safe(r.Content))
			fmt.Fprintf(&b, "[TOOL_RESULTS]{\"call_id\": %s, \"content\": %s}[/TOOL_RESULTS]", quote(r.CallID), c)
		}
	case FormatHarmony:
		for _, r := range results {
			fmt.Fprintf(&b, "<|start|>functions.%s to=assistant<|channel|>commentary<|message|>%s<|end|>", r.Name, quote(errPrefix(r)+safe(r.Content)))
		}
	default: // json, pythonic, tags
		for i, r := range results {
			if i > 0 {
				b.WriteString("\n")
			}
			status := ""
			if r.IsError {
				status = ` error="true"`
			}
			fmt.Fprintf(&b, "<tool_result name=%s id=%s%s>\n%s\n</tool_result>", quote(r.Name), quote(r.CallID), status, safe(r.Content))
		}
	}
	return b.String(), nil
}

func errPrefix(r chat.ToolResult) string {
	if r.IsError {
		return "Error: "
	}
	return ""
}

// ErrorResult is the model-facing result for a call that could not run:
// what was wrong and, when example is given, the call written correctly in
// the session's format.
func ErrorResult(format string, call chat.ToolCall, problem string, example *chat.ToolCall) chat.ToolResult {
	var b strings.Builder
	fmt.Fprintf(&b, "The call to %s was not run: %s", call.Name, strings.TrimSpace(problem))
	if example != nil {
		if ex, err := FormatCall(format, *example); err == nil {
			b.WriteString("\nCall it like this:\n" + ex)
		}
	}
	return chat.ToolResult{CallID: call.ID, Name: call.Name, Content: b.String(), IsError: true}
}

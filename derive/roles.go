package derive

import (
	"slices"
	"strings"
	"unicode"
)

// roleStops reads the marker that opens a user turn from the render of an
// answer followed by a second user turn: what lies between the answer's
// end-of-turn marker and the user's text, cut after the role's name when
// it has one ("<|im_start|>user", "<|start_header_id|>user",
// "<start_of_turn>user", "[INST]"). A model that keeps writing past its
// turn writes it before the turn it invents, so it is a stop string too.
// stops are the end-of-turn markers already derived.
func roleStops(render string, stops []string) []string {
	i := strings.LastIndex(render, sentinelAnswer)
	j := strings.LastIndex(render, sentinelUser2)
	if i < 0 || j < i {
		return nil
	}
	header := render[i+len(sentinelAnswer) : j]
	for trimmed := true; trimmed; {
		trimmed = false
		header = strings.TrimLeftFunc(header, unicode.IsSpace)
		for _, s := range stops {
			if s != "" && strings.HasPrefix(header, s) {
				header, trimmed = header[len(s):], true
			}
		}
	}
	trimmed := strings.TrimSpace(header)
	if trimmed == "" || len(trimmed) > 64 || strings.ContainsAny(trimmed, "\n") {
		// No marker, or more than a marker (a system text repeated).
		return nil
	}
	// A plain-text header starts a line: the newline before it keeps
	// "\nUser:" from stopping a sentence that mentions a user.
	at := j - len(strings.TrimLeftFunc(header, unicode.IsSpace))
	lineStart := strings.HasSuffix(strings.TrimRight(render[:at], " \t"), "\n")
	m := roleMarker(trimmed, lineStart)
	if m == "" || slices.Contains(stops, m) {
		return nil
	}
	return []string{m}
}

// roleMarker picks the marker out of a user turn's header: the special
// token that names the role (<|user|>, <｜User｜>), or the one before the
// role's name with the name ("<|im_start|>user"), or a header of special
// tokens that names no role ("[INST]"); plain text only at a line's start,
// with its newline ("\nUser:", "\n### Instruction:").
func roleMarker(header string, lineStart bool) string {
	b := tokenBounds(header)
	special := func(k int) bool { return specialLen(header[b[k]:]) == b[k+1]-b[k] }
	anySpecial := false
	for k := 0; k+1 < len(b); k++ {
		tok := header[b[k]:b[k+1]]
		anySpecial = anySpecial || special(k)
		switch {
		case special(k) && strings.Contains(strings.ToLower(tok), "user"):
			return tok
		case strings.EqualFold(tok, "user") && k > 0 && special(k-1):
			return header[b[k-1]:b[k+1]]
		}
	}
	switch {
	case anySpecial && specialLen(header) > 0:
		return header
	case lineStart:
		return "\n" + strings.TrimRightFunc(header, unicode.IsSpace)
	}
	return ""
}

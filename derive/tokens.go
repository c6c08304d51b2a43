package derive

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Renders are compared token by token, not byte by byte: a byte diff of
// "<|im_end|>" against "<tool_call>" would keep the common "<" out of the
// call, and a marker cut in half is no marker. A token here is a special
// token ("<…>" or "[UPPER]" without spaces), a word, or one other rune.

// tokenBounds returns the byte offsets where tokens of s start, and len(s).
func tokenBounds(s string) []int {
	var b []int
	for i := 0; i < len(s); {
		b = append(b, i)
		i += tokenLen(s[i:])
	}
	return append(b, len(s))
}

// tokenLen is the length of the token s starts with (s is not empty).
func tokenLen(s string) int {
	if n := specialLen(s); n > 0 {
		return n
	}
	r, size := utf8.DecodeRuneInString(s)
	if isWordRune(r) {
		n := size
		for n < len(s) {
			r, size := utf8.DecodeRuneInString(s[n:])
			if !isWordRune(r) {
				break
			}
			n += size
		}
		return n
	}
	return size
}

func isWordRune(r rune) bool { return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) }

// specialLen is the length of the special token s starts with, 0 if none:
// "<" … ">" or "[" … "]" with no whitespace or nested bracket inside, at
// most 64 bytes, and for "[" only upper-case letters and "_" (so that a
// JSON or Python list is never a token).
func specialLen(s string) int {
	if len(s) < 3 || (s[0] != '<' && s[0] != '[') {
		return 0
	}
	closer := byte('>')
	if s[0] == '[' {
		closer = ']'
	}
	for i := 1; i < len(s) && i < 64; i++ {
		c := s[i]
		switch {
		case c == closer:
			if i == 1 {
				return 0
			}
			return i + 1
		case c == '<' || c == '[' || c == ' ' || c == '\n' || c == '\t' || c == '\r':
			return 0
		case s[0] == '[' && !(c == '_' || (c >= 'A' && c <= 'Z') || (c == '/' && i == 1)):
			return 0
		}
	}
	return 0
}

func contains(bounds []int, at int) bool {
	for _, b := range bounds {
		if b == at {
			return true
		}
		if b > at {
			return false
		}
	}
	return false
}

// commonPrefix returns the length of the longest common prefix of a and b
// that ends on a token boundary of both.
func commonPrefix(a, b string) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	ba, bb := tokenBounds(a), tokenBounds(b)
	for ; n > 0; n-- {
		if contains(ba, n) && contains(bb, n) {
			break
		}
	}
	return n
}

// commonSuffix returns the length of the longest common suffix of a and b
// that starts on a token boundary of both.
func commonSuffix(a, b string) int {
	n := 0
	for n < len(a) && n < len(b) && a[len(a)-1-n] == b[len(b)-1-n] {
		n++
	}
	ba, bb := tokenBounds(a), tokenBounds(b)
	for ; n > 0; n-- {
		if contains(ba, len(a)-n) && contains(bb, len(b)-n) {
			break
		}
	}
	return n
}

// region is the span of text where render a differs from reference ref:
// [start, end) in a, after the common prefix and before the common suffix.
func region(a, ref string) (start, end int) {
	start = commonPrefix(a, ref)
	suffix := commonSuffix(a[start:], ref[min(start, len(ref)):])
	return start, len(a) - suffix
}

// lastPiece is the marker that ends s: its last special token when its
// last line ends with one, else its last line; whitespace trimmed.
// "…<|END_THINKING|><|START_ACTION|>" gives "<|START_ACTION|>",
// "\nAction:\n```json\n" gives "```json".
func lastPiece(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = strings.TrimSpace(s[i+1:])
	}
	if strings.HasSuffix(s, ">") || strings.HasSuffix(s, "]") {
		b := tokenBounds(s)
		last := b[len(b)-2]
		if specialLen(s[last:]) == len(s)-last {
			return s[last:]
		}
	}
	return s
}

// firstPiece is the marker that starts s: its first special token when
// it starts with one, else its first line; whitespace trimmed.
func firstPiece(s string) string {
	s = strings.TrimSpace(s)
	if n := specialLen(s); n > 0 {
		return s[:n]
	}
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = strings.TrimSpace(s[:i])
	}
	return s
}

// splitLeadingToken splits s into its first special token and the rest
// (leading whitespace of the rest dropped); ("", s) when s does not start
// with a special token.
func splitLeadingToken(s string) (token, rest string) {
	s = strings.TrimSpace(s)
	if n := specialLen(s); n > 0 {
		return s[:n], strings.TrimLeftFunc(s[n:], unicode.IsSpace)
	}
	return "", s
}

// splitTrailingToken splits s into what comes before its last special
// token and that token; (s, "") when s does not end with one.
func splitTrailingToken(s string) (rest, token string) {
	t := strings.TrimRightFunc(s, unicode.IsSpace)
	b := tokenBounds(t)
	if len(b) < 2 {
		return s, ""
	}
	last := b[len(b)-2]
	if specialLen(t[last:]) == len(t)-last {
		return t[:last], t[last:]
	}
	return s, ""
}

// isSpace reports whether s is whitespace only (or empty).
func isSpace(s string) bool { return strings.TrimSpace(s) == "" }

// Tail returns what a render adds after where it and an earlier one part,
// cut on a token boundary: the assistant turn of a conversation render,
// given the render of the conversation before it.
func Tail(earlier, render string) string { return render[commonPrefix(render, earlier):] }

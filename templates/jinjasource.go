package templates

import (
	"regexp"
	"strings"
	"unicode"
)

// normaliseSource rewrites template text the engine mishandles into text
// it renders as Jinja2 renders the original. Each rewrite is exact:
//
//   - line ends: Jinja2's lexer turns every \r\n and \r into \n, in text
//     and string literals alike;
//   - a final newline: keep_trailing_newline=False drops it;
//   - whitespace control (see applyWhitespaceControl): Jinja2 strips only
//     the text adjacent to a tag, the engine the nearest text past other
//     tags, so the stripping is done here and the engine told to do none;
//   - backslash-newline in a string literal: Python's unicode-escape, which
//     Jinja2 decodes literals with, drops it (a line continuation); the
//     engine kept it;
//   - "x is iterable" on a path: Jinja2's Undefined is iterable (empty),
//     the engine's is not, so the test becomes "(x is iterable or x is
//     undefined)".
func normaliseSource(src string) string {
	if strings.Contains(src, "\r") {
		src = strings.ReplaceAll(src, "\r\n", "\n")
		src = strings.ReplaceAll(src, "\r", "\n")
	}
	// keep_trailing_newline=False: Jinja2 drops one final newline.
	src = strings.TrimSuffix(src, "\n")
	regions := splitRegions(src)
	for i := range regions {
		r := &regions[i]
		if !r.tag || strings.HasPrefix(r.text, "{#") {
			continue
		}
		r.text = iterableUndefined(dropLineContinuations(r.text))
	}
	applyWhitespaceControl(regions)
	keepBracesApart(regions)
	var b strings.Builder
	for _, r := range regions {
		b.WriteString(r.text)
	}
	return b.String()
}

// keepBracesApart: once the whitespace between them is stripped (or the
// comment removed), a text ending in "{" touches the next tag
// ("parameters:{\n{%- if" becomes "parameters:{{%+ if"), and the engine
// reads "{{" as an expression opener where Jinja2's lexer, which saw the
// tag before stripping, read a literal brace. Such a brace is written as
// the expression {{ '{' }}, which prints exactly it.
func keepBracesApart(regions []jinjaRegion) {
	prev := -1 // the last region with text
	for i := range regions {
		if regions[i].text == "" {
			continue
		}
		if prev >= 0 && !regions[prev].tag && strings.HasSuffix(regions[prev].text, "{") && strings.ContainsRune("{%#", rune(regions[i].text[0])) {
			p := &regions[prev]
			p.text = p.text[:len(p.text)-1] + "{{ '{' }}"
		}
		prev = i
	}
}

// applyWhitespaceControl strips the text around tags exactly as Jinja2's
// lexer does under trim_blocks and lstrip_blocks, then rewrites every tag
// so the engine strips nothing more: markers are dropped, block tags get
// "+" on both sides (the engine's own trim_blocks and lstrip_blocks reach
// past neighbouring tags to the nearest text, which Jinja2 never does),
// and comments, which render nothing, are removed.
func applyWhitespaceControl(regions []jinjaRegion) {
	lineStarting := true // Jinja2: the last match ended with "\n" (or this is the start)
	for i := range regions {
		r := &regions[i]
		if r.tag {
			continue
		}
		text := r.text
		if i > 0 && regions[i-1].tag {
			prev := regions[i-1].text
			consumed := ""
			switch {
			case tagRight(prev) == '-':
				rest := strings.TrimLeftFunc(text, isPySpace)
				consumed = text[:len(text)-len(rest)]
				text = rest
			case tagRight(prev) == 0 && !strings.HasPrefix(prev, "{{") && strings.HasPrefix(text, "\n"):
				consumed, text = "\n", text[1:] // trim_blocks
			}
			lineStarting = strings.HasSuffix(consumed, "\n")
		}
		if i+1 < len(regions) && regions[i+1].tag {
			next := regions[i+1].text
			switch left := tagLeft(next); {
			case left == '-':
				text = strings.TrimRightFunc(text, isPySpace)
			case left == 0 && !strings.HasPrefix(next, "{{"): // lstrip_blocks
				lpos := strings.LastIndexByte(text, '\n') + 1
				if tail := text[lpos:]; (lpos > 0 || lineStarting) && tail != "" && strings.TrimLeftFunc(tail, isPySpace) == "" {
					text = text[:lpos]
				}
			}
		}
		r.text = text
		lineStarting = false
	}
	for i := range regions {
		if r := &regions[i]; r.tag {
			r.text = plainTag(r.text)
		}
	}
}

// tagLeft and tagRight return a tag's whitespace-control marker ('-',
// '+' or 0) on each side.
func tagLeft(tag string) byte {
	if len(tag) > 2 && (tag[2] == '-' || tag[2] == '+') {
		return tag[2]
	}
	return 0
}

func tagRight(tag string) byte {
	if n := len(tag); n >= 5 && tagClosed(tag) && (tag[n-3] == '-' || tag[n-3] == '+') {
		return tag[n-3]
	}
	return 0
}

func tagClosed(tag string) bool {
	return len(tag) >= 4 && strings.HasSuffix(tag, map[byte]string{'{': "}}", '%': "%}", '#': "#}"}[tag[1]])
}

// plainTag rewrites one tag for the engine after applyWhitespaceControl.
func plainTag(tag string) string {
	if !tagClosed(tag) {
		return tag // the engine reports it
	}
	inner := tag[2 : len(tag)-2]
	if tagLeft(tag) != 0 {
		inner = inner[1:]
	}
	if tagRight(tag) != 0 && len(inner) > 0 {
		inner = inner[:len(inner)-1]
	}
	switch tag[1] {
	case '#':
		return ""
	case '%':
		return "{%+" + inner + "+%}"
	}
	return "{{" + inner + "}}"
}

// isPySpace is Python's str.isspace for one character.
func isPySpace(r rune) bool { return unicode.IsSpace(r) || (r >= 0x1c && r <= 0x1f) }

// dropLineContinuations removes backslash-newline pairs inside the string
// literals of one tag.
func dropLineContinuations(tag string) string {
	if !strings.Contains(tag, "\\\n") {
		return tag
	}
	var b strings.Builder
	var quote byte
	for i := 0; i < len(tag); i++ {
		c := tag[i]
		switch {
		case quote != 0 && c == '\\' && i+1 < len(tag):
			if tag[i+1] != '\n' {
				b.WriteByte(c)
				b.WriteByte(tag[i+1])
			}
			i++
			continue
		case quote != 0 && c == quote:
			quote = 0
		case quote == 0 && (c == '\'' || c == '"'):
			quote = c
		}
		b.WriteByte(c)
	}
	return b.String()
}

var iterableTest = regexp.MustCompile(`(^|[\s(,{\[=])([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*|\[(?:'[^'\]]*'|"[^"\]]*"|[0-9]+)\])*)\s+is\s+(not\s+)?iterable\b`)

// iterableUndefined rewrites "PATH is [not] iterable" as Jinja2 evaluates
// it for an undefined PATH (iterable). Only plain variable paths are
// rewritten (evaluating them twice has no effect); string literals are
// left alone.
func iterableUndefined(tag string) string {
	if !strings.Contains(tag, "iterable") {
		return tag
	}
	return outsideStrings(tag, func(code string) string {
		return iterableTest.ReplaceAllStringFunc(code, func(m string) string {
			g := iterableTest.FindStringSubmatch(m)
			if g[3] != "" {
				return g[1] + "(" + g[2] + " is not iterable and " + g[2] + " is defined)"
			}
			return g[1] + "(" + g[2] + " is iterable or " + g[2] + " is undefined)"
		})
	})
}

// outsideStrings applies f to the stretches of code outside string
// literals.
func outsideStrings(code string, f func(string) string) string {
	var b strings.Builder
	start := 0
	var quote byte
	for i := 0; i < len(code); i++ {
		c := code[i]
		switch {
		case quote != 0 && c == '\\':
			i++
		case quote != 0 && c == quote:
			quote = 0
			b.WriteString(code[start : i+1])
			start = i + 1
		case quote == 0 && (c == '\'' || c == '"'):
			b.WriteString(f(code[start:i]))
			start = i
			quote = c
		}
	}
	if quote != 0 {
		b.WriteString(code[start:])
	} else {
		b.WriteString(f(code[start:]))
	}
	return b.String()
}

// jinjaRegion is one stretch of template source: literal text, or one
// tag ({{ … }}, {% … %}, {# … #}) with its delimiters.
type jinjaRegion struct {
	text string
	tag  bool
}

// splitRegions cuts src into text and tags, honouring string literals
// inside tags and leaving {% raw %} bodies as text.
func splitRegions(src string) []jinjaRegion {
	var out []jinjaRegion
	for len(src) > 0 {
		i := indexTagStart(src)
		if i < 0 {
			out = append(out, jinjaRegion{text: src})
			break
		}
		if i > 0 {
			out = append(out, jinjaRegion{text: src[:i]})
		}
		end := tagEnd(src[i:])
		tag := src[i : i+end]
		out = append(out, jinjaRegion{text: tag, tag: true})
		src = src[i+end:]
		if isRawTag(tag) {
			if j := strings.Index(src, "endraw"); j >= 0 {
				k := strings.LastIndex(src[:j], "{%")
				if k < 0 {
					k = j
				}
				out = append(out, jinjaRegion{text: src[:k]})
				src = src[k:]
			}
		}
	}
	return out
}

func indexTagStart(s string) int {
	for i := 0; i+1 < len(s); i++ {
		if s[i] == '{' && (s[i+1] == '{' || s[i+1] == '%' || s[i+1] == '#') {
			return i
		}
	}
	return -1
}

// tagEnd returns the length of the tag at the start of s (all of s when
// it is unclosed; the engine reports that).
func tagEnd(s string) int {
	closer := map[byte]string{'{': "}}", '%': "%}", '#': "#}"}[s[1]]
	if s[1] == '#' {
		if j := strings.Index(s[2:], closer); j >= 0 {
			return 2 + j + 2
		}
		return len(s)
	}
	var quote byte
	for i := 2; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0 && c == '\\':
			i++
		case quote != 0 && c == quote:
			quote = 0
		case quote != 0:
		case c == '\'' || c == '"':
			quote = c
		case strings.HasPrefix(s[i:], closer):
			return i + 2
		}
	}
	return len(s)
}

func isRawTag(tag string) bool {
	return strings.HasPrefix(tag, "{%") && statement(tag) == "raw"
}

// statement is a closed block tag's text without delimiters, markers and
// surrounding space ("" for anything else).
func statement(tag string) string {
	if !tagClosed(tag) || tag[1] != '%' {
		return ""
	}
	return strings.Trim(tag[2:len(tag)-2], "-+ \t\n")
}

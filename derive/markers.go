package derive

import (
	"fmt"
	"strings"
	"unicode"

	"github.com/toolharness/toolharness/parse"
)

// callRenders are the renders of one input style that wrote the probe
// calls: one call, and two when the template renders parallel calls.
type callRenders struct {
	one, two string
	// oneRegion and twoRegion delimit what differs from the empty turn.
	oneStart, oneEnd, twoStart, twoEnd int
	// site1 is call 1 in one; site2a and site2b are calls 1 and 2 in two.
	site1, site2a, site2b callSite
	parallel              bool
}

// learnSyntax names the markers around and inside the calls.
func learnSyntax(c *callRenders) (parse.Syntax, []string) {
	s := parse.Syntax{Body: c.site1.body, NameKey: c.site1.nameKey, ArgsKey: c.site1.argsKey,
		NameAsKey: (c.site1.body == parse.BodyJSON || c.site1.body == parse.BodyJSONList) && c.site1.nameKey == ""}
	var notes []string
	one := c.one
	if s.Body == parse.BodyJSONList || s.Body == parse.BodyPythonList {
		// One list holds every call: the list is the block.
		s.CallOpen = lastPiece(one[c.oneStart:c.site1.start])
		s.CallClose = firstPiece(one[c.site1.end:c.oneEnd])
		return s, notes
	}
	// head is CallOpen and what precedes the name (or the JSON object);
	// tail is what follows the core up to CallClose's end.
	var head, tail string
	idFirst := "" // the name prefix after an id that comes first
	if c.parallel {
		two := c.two
		p1 := one[c.oneStart:c.site1.start]
		mid := two[c.site2a.end:c.site2b.start]
		s2 := two[c.site2b.end:c.twoEnd]
		// Each call's own id right before what precedes its name (Solar
		// Open's <|tool_call:begin|>ID<|tool_call:name|>NAME): the id
		// comes first and the rest is the name prefix.
		if pre, ok := idBeforeName(p1, mid); ok && (s.Body == parse.BodyNameJSON || s.Body == parse.BodyPairs) {
			idFirst = pre
			p1, mid = p1[:len(p1)-len(pre)-len(sentinelID1)], mid[:len(mid)-len(pre)-len(sentinelID2)]
		}
		h := commonSuffix(p1, mid)
		t := commonPrefix(mid, s2)
		if t+h > len(mid) {
			t = len(mid) - h
		}
		head, tail = mid[len(mid)-h:], mid[:t]
		s.SectionOpen = lastPiece(p1[:len(p1)-h])
		s.CallSeparator = mid[t : len(mid)-h]
		s.SectionClose = firstPiece(s2[t:])
		if s.SectionOpen == "" {
			s.SectionClose = ""
		}
	} else {
		head = lastLine(one[c.oneStart:c.site1.start])
		tail = firstLine(one[c.site1.end:c.oneEnd])
	}
	switch s.Body {
	case parse.BodyJSON:
		s.CallOpen, s.CallClose = strings.TrimSpace(head), strings.TrimSpace(tail)
	case parse.BodyNameJSON:
		s.CallOpen, s.NamePrefix = splitHead(head)
		setIDFirst(&s, idFirst)
		s.Quote = c.site1.quote
		learnNameJSON(c, &s)
		if open := s.CallOpen + s.NamePrefix; open != "" && strings.Contains(one[c.site1.argsAt:c.site1.argsEnd], open) {
			// Apertus' [{"NAME": {…}}]: the call opener {" recurs in the
			// arguments, where a parser takes it for the next call.
			notes = append(notes, fmt.Sprintf("the call opener %q also occurs inside the arguments: calls keyed by their name ({\"NAME\": {…}}) have no parse.Syntax body", open))
		}
		s.ArgsSuffix, s.CallClose = splitTrailingToken(tail)
		if s.CallClose == "" {
			s.ArgsSuffix, s.CallClose = "", strings.TrimSpace(tail)
		}
	case parse.BodyPairs:
		s.CallOpen, s.NamePrefix = splitHead(head)
		setIDFirst(&s, idFirst)
		learnPairs(one, c.site1, &s)
		if k := c.site1.keys; len(k) > 1 {
			v := c.site1.values
			if a, b := one[k[0][1]:v[0][0]], one[k[1][1]:v[1][0]]; a != b {
				if !learnTypeAttr(a, b, &s) {
					notes = append(notes, fmt.Sprintf("the text between a key and its value differs from one argument to the next (%q, %q): the derived syntax reads only the first", a, b))
				}
			}
		}
		s.CallClose = strings.TrimSpace(strings.TrimPrefix(tail, s.ValueClose))
	case parse.BodyPython:
		s.CallOpen, s.CallClose = strings.TrimSpace(head), strings.TrimSpace(tail)
	}
	return s, notes
}

// idBeforeName: the probe ids end p1 (before call 1's name) and mid
// (before call 2's) but for the same text after them, which it returns.
func idBeforeName(p1, mid string) (string, bool) {
	i, j := strings.LastIndex(p1, sentinelID1), strings.LastIndex(mid, sentinelID2)
	if i < 0 || j < 0 || p1[i+len(sentinelID1):] != mid[j+len(sentinelID2):] || strings.TrimSpace(p1[i+len(sentinelID1):]) == "" {
		return "", false
	}
	return p1[i+len(sentinelID1):], true
}

// setIDFirst makes the name prefix found after a leading id the syntax's.
func setIDFirst(s *parse.Syntax, namePrefix string) {
	if namePrefix == "" {
		return
	}
	if s.NamePrefix == "" {
		s.IDFirst, s.NamePrefix = true, namePrefix
	}
}

// splitHead splits what precedes the tool name into CallOpen (its first
// special token, or all of it) and NamePrefix.
func splitHead(head string) (callOpen, namePrefix string) {
	tok, rest := splitLeadingToken(head)
	if tok == "" {
		return strings.TrimSpace(head), ""
	}
	return tok, rest
}

// learnNameJSON reads what sits between the name and the arguments: a
// name suffix, an id (the probe's own id, or a per-call index), and an
// arguments prefix.
func learnNameJSON(c *callRenders, s *parse.Syntax) {
	gap := c.one[c.site1.nameEnd:c.site1.argsAt]
	if i := strings.Index(gap, sentinelID1); i >= 0 {
		s.IDPrefix, s.ArgsPrefix = gap[:i], gap[i+len(sentinelID1):]
		return
	}
	if c.parallel {
		gap2 := c.two[c.site2b.nameEnd:c.site2b.argsAt]
		if pre, post, ok := indexDiffers(gap, gap2); ok {
			s.IDPrefix, s.ArgsPrefix = pre, post
			return
		}
	}
	ws := len(gap) - len(strings.TrimLeftFunc(gap, unicode.IsSpace))
	s.NameSuffix, s.ArgsPrefix = gap[:ws], gap[ws:]
}

// indexDiffers reports whether a and b differ only in one run of digits
// (a per-call index such as ":0" and ":1"), and returns what surrounds it.
func indexDiffers(a, b string) (pre, post string, ok bool) {
	p := 0
	for p < len(a) && p < len(b) && a[p] == b[p] {
		p++
	}
	for p > 0 && isDigit(a[p-1]) {
		p--
	}
	ea, eb := p, p
	for ea < len(a) && isDigit(a[ea]) {
		ea++
	}
	for eb < len(b) && isDigit(b[eb]) {
		eb++
	}
	if ea == p || eb == p || a[ea:] != b[eb:] || a == b {
		return "", "", false
	}
	return a[:p], a[ea:], true
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// learnPairs reads the key and value framing from the first two
// arguments (or the first one and the call's end).
func learnPairs(one string, site callSite, s *parse.Syntax) {
	g0 := one[site.nameEnd:site.keys[0][0]]
	kv := one[site.keys[0][1]:site.values[0][0]]
	if len(site.keys) > 1 {
		g1 := one[site.values[0][1]:site.keys[1][0]]
		n := commonSuffix(g0, g1)
		s.KeyOpen = strings.TrimSpace(g0[len(g0)-n:])
		s.NameSuffix = g0[:len(g0)-n]
		s.ValueClose = g1[:len(g1)-n]
	} else {
		s.KeyOpen = lastPiece(g0)
		s.NameSuffix = strings.TrimSuffix(strings.TrimRightFunc(g0, unicode.IsSpace), s.KeyOpen)
		s.ValueClose = firstPiece(one[site.values[0][1]:])
	}
	if isSpace(s.NameSuffix) && s.NameSuffix != "" && s.KeyOpen != "" {
		s.NameSuffix = ""
	}
	// The key's closing and the value's opening: up to the first ">" (or
	// "]") is the key's; whitespace alone stays with it.
	cut := strings.IndexAny(kv, ">]")
	if cut < 0 {
		s.KeyClose = kv
		return
	}
	s.KeyClose, s.ValueOpen = kv[:cut+1], strings.TrimLeftFunc(kv[cut+1:], unicode.IsSpace)
	if s.ValueOpen == "" {
		s.KeyClose = kv
	}
}

// learnTypeAttr reads an attribute that says whether a pair's value is
// text: the text between key and value of the probe's first argument (a
// string) and of its second (an integer) differ only in an attribute's
// value, "true" for the string and "false" for the other (DeepSeek
// V3.2's ` string="true">` and ` string="false">`). KeyClose becomes what
// precedes the attribute and ValueOpen what follows it.
func learnTypeAttr(str, other string, s *parse.Syntax) bool {
	p := commonPrefixBytes(str, other)
	if p < 2 || !strings.HasPrefix(str[p:], "true") || !strings.HasPrefix(other[p:], "false") || len(str) < p+5 || str[p+4:] != other[p+5:] {
		return false
	}
	quote := str[p-1]
	if (quote != '"' && quote != '\'') || str[p-2] != '=' || str[p+4] != quote {
		return false
	}
	name := p - 2
	for name > 0 && isIdent(str[name-1]) {
		name--
	}
	before := strings.TrimRightFunc(str[:name], unicode.IsSpace)
	if name == p-2 || len(before) == name {
		return false // no attribute name, or nothing before it
	}
	s.KeyClose, s.TypeAttr, s.ValueOpen = before, str[name:p-2], strings.TrimSpace(str[p+5:])
	return s.ValueOpen != ""
}

func isIdent(c byte) bool {
	return c == '_' || c == '-' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

func commonPrefixBytes(a, b string) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

func lastLine(s string) string {
	s = strings.TrimRightFunc(s, unicode.IsSpace)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}

func firstLine(s string) string {
	s = strings.TrimLeftFunc(s, unicode.IsSpace)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

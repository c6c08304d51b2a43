package parse

import (
	"bytes"
	"slices"
	"strings"
)

// A derived syntax's call head: the name, and the ID where the syntax
// writes one, read from the start of a block's body before its arguments.

// head is where the parts of a call's head lie in its body.
type head struct {
	name, id string
	// spec is the syntax (or alternative) the head was read in.
	spec *synSpec
	// args is the index where the arguments start (after ArgsPrefix, at
	// the first non-space byte), or the pairs for BodyPairs.
	args int
}

// maxHead bounds the bytes a call's head may take before its arguments.
const maxHead = 256

// head reads NamePrefix name NameSuffix [IDPrefix id] ArgsPrefix from the
// start of body (BodyNameJSON and BodyPairs), in the syntax or else in
// the first of its alternatives that reads it; h.spec says which. With
// !eof, vMore says body ends before the head could be read; the answer is
// the same for every longer body (an alternative is only tried once the
// ones before it said vNo, which they say of every longer body too).
func (s *synSpec) head(body []byte, eof bool) (head, verdict) {
	h, v := s.head1(body, eof)
	h.spec = s
	for _, a := range s.alts {
		if v != vNo {
			break
		}
		h, v = a.head1(body, eof)
		h.spec = a
	}
	return h, v
}

func (s *synSpec) head1(body []byte, eof bool) (head, verdict) {
	more := vMore
	if eof {
		more = vNo
	}
	i := skipWS(body, 0)
	if i > 64 || s.tight && i > 0 {
		return head{}, vNo
	}
	from := i
	var v verdict
	var firstID string
	if s.IDFirst {
		if firstID, i, v = s.idFirstAt(body, i, eof, more); v != vYes {
			return head{}, v
		}
	}
	if i, v = skipPiecesVerdict(body, i, s.namePrefix, more); v != vYes {
		return head{}, v
	}
	if j := skipWS(body, i); j-i <= 64 {
		i = j
	} else {
		return head{}, vNo
	}
	// The name ends at the first of the markers that can follow it.
	ends, wsEnds := s.nameEnds, s.wsEnds
	end, which, whichAt := -1, "", 0
	lim := min(len(body), i+maxHead)
	for k := i; k < lim; k++ {
		c := body[k]
		if wsEnds && isSpace(c) || c == '{' && s.Body == BodyNameJSON {
			end = k
			break
		}
		for _, m := range ends {
			if hasPrefix(body[k:], m) {
				end, which, whichAt = k, m, k
				break
			}
		}
		if end >= 0 {
			break
		}
		if isSpace(c) && len(ends) > 0 {
			// Whitespace the template does not write may come before
			// the marker that ends the name (a newline before <arg_key>).
			j := skipWS(body, k)
			if j >= len(body) && !eof && j-k <= 64 {
				return head{}, vMore
			}
			if m := prefixAny(body[j:], ends); m != "" {
				end, which, whichAt = k, m, j
				break
			}
			if !eof && j-k <= 64 && partialAny(body[j:], ends) {
				return head{}, vMore
			}
		}
		if !isNameByte(c) {
			if !eof && partialAny(body[k:], ends) {
				return head{}, vMore
			}
			return head{}, vNo
		}
	}
	if end < 0 {
		if lim-i >= maxHead || eof {
			return head{}, vNo
		}
		// A marker may be starting at the end of body.
		return head{}, vMore
	}
	h := head{name: string(body[i:end])}
	if h.name == "" || slices.Contains(s.notNames, h.name) {
		return head{}, vNo
	}
	k := end
	switch {
	case which != "" && which == s.nameSuffix:
		k = whichAt + len(which)
	case wsEnds:
		k = skipWS(body, k)
	}
	if s.idPrefix != "" {
		var v verdict
		if h.id, k, v = s.callIDAt(body, k, eof, more); v != vYes {
			return head{}, v
		}
		if s.headID && h.id != "" {
			h.id = strings.TrimSpace(string(body[from:k]))
		}
	}
	if s.IDFirst {
		h.id = firstID
	}
	if s.Body == BodyPairs {
		h.args = k
		return h, vYes
	}
	if k, v = skipPiecesVerdict(body, k, s.argsPrefix, more); v != vYes {
		return head{}, v
	}
	j := skipWS(body, k)
	if j-k > 64 {
		return head{}, vNo
	}
	if j >= len(body) && !eof {
		return head{}, vMore
	}
	h.args = j
	return h, vYes
}

// idFirstAt reads the id that IDFirst puts before NamePrefix at body[i:]:
// one word (possibly empty), then the name prefix, which is left for the
// caller to skip.
func (s *synSpec) idFirstAt(body []byte, i int, eof bool, more verdict) (string, int, verdict) {
	w := body[i:min(len(body), i+maxHead)]
	e := indexString(w, s.namePrefix[0])
	if e < 0 {
		if len(body)-i >= maxHead || eof {
			return "", i, vNo
		}
		return "", i, more
	}
	id := strings.TrimSpace(string(w[:e]))
	if strings.ContainsAny(id, " \t\r\n") {
		return "", i, vNo
	}
	return id, i + e, vYes
}

// callIDAt reads [IDPrefix id] at body[k:], the id running up to
// ArgsPrefix (or the arguments' '{'); without IDPrefix there it is no id.
func (s *synSpec) callIDAt(body []byte, k int, eof bool, more verdict) (string, int, verdict) {
	id := s.idPrefix
	j := skipWS(body, k)
	if len(body)-j < len(id) && strings.HasPrefix(id, string(body[j:])) {
		return "", k, more
	}
	if !hasPrefix(body[j:], id) {
		return "", k, vYes
	}
	j += len(id)
	w := body[j:min(len(body), j+maxHead)]
	e := bytes.IndexByte(w, '{')
	if s.argsStop != "" {
		e = indexString(w, s.argsStop)
	}
	if e < 0 {
		if len(body)-j >= maxHead || eof {
			return "", k, vNo
		}
		return "", k, more
	}
	return strings.TrimSpace(string(body[j : j+e])), j + e, vYes
}

// isNameByte: a byte a tool name may hold (identifiers, dotted and
// dashed names, non-ASCII).
func isNameByte(c byte) bool {
	return isIdentByte(c) || c == '.' || c == '-' || c == ':' || c == '/' || c >= 0x80
}

// prefixAny returns the first of ms that b starts with, or "".
func prefixAny(b []byte, ms []string) string {
	for _, m := range ms {
		if hasPrefix(b, m) {
			return m
		}
	}
	return ""
}

// partialAny reports whether b is a proper prefix of one of ms.
func partialAny(b []byte, ms []string) bool {
	for _, m := range ms {
		if len(b) < len(m) && strings.HasPrefix(m, string(b)) {
			return true
		}
	}
	return false
}

// hasPrefix and indexString look for a string in bytes without
// converting it (the compiler does not allocate for these conversions).
func hasPrefix(b []byte, m string) bool { return len(b) >= len(m) && string(b[:len(m)]) == m }

func indexString(b []byte, m string) int {
	for i := 0; i+len(m) <= len(b); i++ {
		if b[i] == m[0] && string(b[i:i+len(m)]) == m {
			return i
		}
	}
	return -1
}

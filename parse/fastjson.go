package parse

import "unicode/utf8"

// The per-call fast path. Nearly every call a model writes in a JSON
// format is plain JSON: {"name": "t", "arguments": {…}} with no repair
// to make. For those, the arguments are validated and compacted straight
// into their output bytes, without building a value tree and encoding it
// again (what relaxed + appendJSON do, at a dozen allocations a call).
// Anything the fast path does not handle exactly as the slow path would
// (escapes that decoding changes, invalid UTF-8, U+2028, Python literals,
// trailing commas, other keys) makes it give up, and the slow path reads
// the call: the output is the same bytes either way (TestFastCallMatches).

// maxFastDepth bounds the nesting the fast path follows.
const maxFastDepth = 64

// compactValue appends the JSON value at s[i:] to dst, compact, as
// appendJSON would write the decoded value; it returns the index after
// the value. ok is false when the value is not plain JSON. depth is the
// nesting the value is at; values nest at most maxFastDepth deep.
//
// It is one loop, with the open containers kept as a bit stack (bit 0:
// the innermost is an object), rather than a call per value: for the
// small objects calls carry, the calls and their results cost as much as
// the bytes.
func compactValue(dst []byte, s string, i, depth int) (_ []byte, _ int, ok bool) {
	var objects uint64
	open := 0
	for {
		// A value starts at s[i].
		if i >= len(s) || depth+open > maxFastDepth {
			return dst, i, false
		}
		switch c := s[i]; {
		case c == '{' || c == '[':
			if open == 63 {
				return dst, i, false
			}
			closer := byte(']')
			objects <<= 1
			if c == '{' {
				objects |= 1
				closer = '}'
			}
			open++
			dst = append(dst, c)
			i = skipWSs(s, i+1)
			if i < len(s) && s[i] == closer {
				dst = append(dst, closer)
				i++
				objects >>= 1
				open--
				break
			}
			if c == '{' {
				if dst, i, ok = compactKey(dst, s, i); !ok {
					return dst, i, false
				}
			}
			continue
		case c == '"':
			if dst, i, ok = compactString(dst, s, i); !ok {
				return dst, i, false
			}
		case c == '-' || c >= '0' && c <= '9':
			j := i
			for j < len(s) && (s[j] >= '0' && s[j] <= '9' || s[j] == '-' || s[j] == '+' || s[j] == '.' || s[j] == 'e' || s[j] == 'E') {
				j++
			}
			if !validNumber(s[i:j]) {
				return dst, i, false
			}
			dst, i = append(dst, s[i:j]...), j
		default:
			n := literalLen(s[i:])
			if n == 0 {
				return dst, i, false
			}
			dst, i = append(dst, s[i:i+n]...), i+n
		}
		// After a value: close what ends here, or go on to the next
		// member.
		for {
			if open == 0 {
				return dst, i, true
			}
			i = skipWSs(s, i)
			if i >= len(s) {
				return dst, i, false
			}
			closer := byte(']')
			if objects&1 != 0 {
				closer = '}'
			}
			if c := s[i]; c == ',' {
				dst = append(dst, ',')
				i = skipWSs(s, i+1)
				if objects&1 != 0 {
					if dst, i, ok = compactKey(dst, s, i); !ok {
						return dst, i, false
					}
				}
				break
			} else if c != closer {
				return dst, i, false
			}
			dst = append(dst, closer)
			i++
			objects >>= 1
			open--
		}
	}
}

// compactObject is compactValue for a value that must be an object.
func compactObject(dst []byte, s string, i, depth int) (_ []byte, _ int, ok bool) {
	if i >= len(s) || s[i] != '{' {
		return dst, i, false
	}
	return compactValue(dst, s, i, depth)
}

// compactKey appends an object's key at s[i:] and its colon, and skips
// to the value.
func compactKey(dst []byte, s string, i int) (_ []byte, _ int, ok bool) {
	if i >= len(s) || s[i] != '"' {
		return dst, i, false
	}
	if dst, i, ok = compactString(dst, s, i); !ok {
		return dst, i, false
	}
	i = skipWSs(s, i)
	if i >= len(s) || s[i] != ':' {
		return dst, i, false
	}
	return append(dst, ':'), skipWSs(s, i+1), true
}

// literalLen is the length of the JSON literal s starts with, or 0.
func literalLen(s string) int {
	for _, lit := range [...]string{"true", "false", "null"} {
		if len(s) >= len(lit) && s[:len(lit)] == lit {
			return len(lit)
		}
	}
	return 0
}

// compactString copies the JSON string at s[i:] when decoding and
// re-encoding it gives back the same bytes: escapes only of the kinds
// appendString writes (\" \\ \n \r \t \b \f), valid UTF-8 without
// U+2028 or U+2029, no raw control bytes.
func compactString(dst []byte, s string, i int) ([]byte, int, bool) {
	j := i + 1
	ascii := true
	for j < len(s) {
		// Most bytes of a string need no look: skip them a table
		// lookup each.
		for j < len(s) && plainByte[s[j]] {
			j++
		}
		if j >= len(s) {
			break
		}
		c := s[j]
		switch {
		case c == '"':
			if !ascii && !plainUTF8(s[i+1:j]) {
				return dst, i, false
			}
			return append(dst, s[i:j+1]...), j + 1, true
		case c == '\\':
			if j+1 >= len(s) {
				return dst, i, false
			}
			switch s[j+1] {
			case '"', '\\', 'n', 'r', 't', 'b', 'f':
				j += 2
			default:
				return dst, i, false
			}
		case c < 0x20:
			return dst, i, false
		default:
			if c >= utf8.RuneSelf {
				ascii = false
			}
			j++
		}
	}
	return dst, i, false
}

// plainByte marks the bytes of a JSON string that compactString copies
// without a second look: printable ASCII other than '"' and '\\'.
var plainByte = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// plainUTF8: valid UTF-8 that appendString copies unchanged.
func plainUTF8(s string) bool {
	for _, r := range s {
		if r == utf8.RuneError || r == '\u2028' || r == '\u2029' {
			return false
		}
	}
	return true
}

func skipWSs(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r') {
		i++
	}
	return i
}

// plainKey reads a JSON string without escapes at s[i:] (a key or a tool
// name) and returns its content and the index after it.
func plainKey(s string, i int) (string, int, bool) {
	if i >= len(s) || s[i] != '"' {
		return "", i, false
	}
	for j := i + 1; j < len(s); j++ {
		switch c := s[j]; {
		case c == '"':
			return s[i+1 : j], j + 1, true
		case c == '\\' || c < 0x20:
			return "", i, false
		}
	}
	return "", i, false
}

// fastCall reads content that is exactly one plain call object with the
// name and arguments keys of keys (and nothing else), in either order.
func (p *Parser) fastCall(content string, keys objectKeys) (dcall, bool) {
	i := skipWSs(content, 0)
	if i >= len(content) || content[i] != '{' {
		return dcall{}, false
	}
	i = skipWSs(content, i+1)
	var c dcall
	haveName, haveArgs := false, false
	for {
		k, j, ok := plainKey(content, i)
		if !ok {
			return dcall{}, false
		}
		j = skipWSs(content, j)
		if j >= len(content) || content[j] != ':' {
			return dcall{}, false
		}
		j = skipWSs(content, j+1)
		switch {
		case k == keys.name && !haveName:
			if c.name, j, ok = plainKey(content, j); !ok || c.name == "" {
				return dcall{}, false
			}
			haveName = true
		case k == keys.args && !haveArgs:
			if j >= len(content) || content[j] != '{' {
				return dcall{}, false
			}
			// The compact form is never longer than the source
			// (the object and what follows it in the block).
			if c.args, j, ok = compactObject(p.arena.room(len(content)-j), content, j, 0); !ok {
				return dcall{}, false
			}
			c.args = p.arena.keep(c.args)
			haveArgs = true
		default:
			return dcall{}, false
		}
		j = skipWSs(content, j)
		if j >= len(content) {
			return dcall{}, false
		}
		switch content[j] {
		case ',':
			i = skipWSs(content, j+1)
			continue
		case '}':
			if !haveName || !haveArgs || skipWSs(content, j+1) != len(content) {
				return dcall{}, false
			}
			return c, true
		}
		return dcall{}, false
	}
}

package parse

// compactFlat is compactValue for the arguments calls carry most: an
// object whose values are strings, numbers, literals or lists of those.
// With no stack of containers to carry, its loop keeps what it needs in
// registers. It reports flat false for any other value (a nested object,
// a list of lists), which compactValue reads instead; ok is as
// compactValue's.
func compactFlat[T text](dst []byte, s T, i int) (_ []byte, _ int, ok, flat bool) {
	if i >= len(s) || s[i] != '{' {
		return dst, i, false, false
	}
	from := i // s[from:i] is compact and not yet in dst
	i++
	dst, from, i = skipSpace(dst, s, from, i)
	if i < len(s) && s[i] == '}' {
		return append(dst, s[from:i+1]...), i + 1, true, true
	}
	for {
		// A member: its key, a colon and its value.
		if i >= len(s) || s[i] != '"' {
			return dst, i, false, true
		}
		j := i + 1
		for j < len(s) && plainByte[s[j]] {
			j++
		}
		if j < len(s) && s[j] == '"' {
			i = j + 1
		} else if i, ok = stringEnd(s, i); !ok {
			return dst, i, false, true
		}
		dst, from, i = skipSpace(dst, s, from, i)
		if i >= len(s) || s[i] != ':' {
			return dst, i, false, true
		}
		i++
		dst, from, i = skipSpace(dst, s, from, i)
		if i < len(s) && s[i] == '[' {
			// A list of scalars.
			i++
			dst, from, i = skipSpace(dst, s, from, i)
			if i < len(s) && s[i] != ']' {
				for {
					if i, ok = scalarEnd(s, i); !ok {
						return dst, i, false, i >= len(s) || s[i] != '{' && s[i] != '['
					}
					dst, from, i = skipSpace(dst, s, from, i)
					if i >= len(s) || s[i] != ',' {
						break
					}
					i++
					dst, from, i = skipSpace(dst, s, from, i)
				}
			}
			if i >= len(s) || s[i] != ']' {
				return dst, i, false, true
			}
			i++
		} else if i, ok = scalarEnd(s, i); !ok {
			return dst, i, false, i >= len(s) || s[i] != '{'
		}
		dst, from, i = skipSpace(dst, s, from, i)
		if i >= len(s) {
			return dst, i, false, true
		}
		switch s[i] {
		case ',':
			i++
			dst, from, i = skipSpace(dst, s, from, i)
		case '}':
			return append(dst, s[from:i+1]...), i + 1, true, true
		default:
			return dst, i, false, true
		}
	}
}

// scalarEnd returns the index after the string, number or literal at
// s[i:], as compactValue reads them; ok is false for anything else.
func scalarEnd[T text](s T, i int) (int, bool) {
	if i >= len(s) {
		return i, false
	}
	switch c := s[i]; {
	case c == '"':
		j := plainRun(s, i+1)
		if j < len(s) && s[j] == '"' {
			return j + 1, true
		}
		return stringEnd(s, i)
	case c == '-' || c >= '0' && c <= '9':
		j := i + 1
		for j < len(s) && numberByte[s[j]] {
			j++
		}
		if !validNumber(s[i:j]) {
			return i, false
		}
		return j, true
	}
	if n := literalLen(s, i); n > 0 {
		return i + n, true
	}
	return i, false
}

// skipSpace skips the whitespace at s[i:], if any, first appending the
// compact run s[from:i] before it to dst.
func skipSpace[T text](dst []byte, s T, from, i int) ([]byte, int, int) {
	if i < len(s) && wsByte[s[i]] {
		j := skipWS(s, i)
		return append(dst, s[from:i]...), j, j
	}
	return dst, from, i
}

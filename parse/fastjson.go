package parse

import (
	"math/bits"
	"unicode/utf8"
)

// The per-call fast path. Nearly every call a model writes in a JSON
// format is plain JSON: {"name": "t", "arguments": {…}} with no repair
// to make. For those, the arguments are validated and compacted straight
// into their output bytes, without building a value tree and encoding it
// again (what relaxed + appendJSON do, at a dozen allocations a call).
// Anything the fast path does not handle exactly as the slow path would
// (escapes that decoding changes, invalid UTF-8, U+2028, Python literals,
// trailing commas, other keys) makes it give up, and the slow path reads
// the call: the output is the same bytes either way (FuzzFastCall).
//
// The functions read either the block's bytes as they stream in or the
// finished block's text, hence the type parameter.

// text is what the fast path reads.
type text interface{ ~string | ~[]byte }

// maxFastDepth bounds the nesting the fast path follows.
const maxFastDepth = 64

// compactValue appends the JSON value at s[i:] to dst, compact, as
// appendJSON would write the decoded value; it returns the index after
// the value. ok is false when the value is not plain JSON, or not all
// there; what is in the returned slice then is not to be used. Values
// nest at most maxFastDepth-1 deep.
//
// It is one loop, with the open containers kept as a bit stack (bit 0:
// the innermost is an object, above the highest a sentinel bit), rather
// than a call per value, and as few variables as the loop can carry in
// registers; and it
// copies runs of the source between whitespace rather than token by
// token: for the small objects calls carry, calls and appends per token
// cost more than the bytes.
func compactValue[T text](dst []byte, s T, i int) (_ []byte, _ int, ok bool) {
	out, end, ok, flat := compactFlat(dst, s, i)
	if flat {
		return out, end, ok
	}
	return compactNested(out, s, i) // out: dst as given, perhaps grown
}

// compactNested is compactValue for the values compactFlat does not read.
func compactNested[T text](dst []byte, s T, i int) (_ []byte, _ int, ok bool) {
	stack := uint64(1)
	from := i // s[from:i] is compact and not yet in dst
	key := false
	for {
		if key {
			// A member starts at s[i]: its key, a colon, and the
			// value after them.
			if i >= len(s) || s[i] != '"' {
				return dst, i, false
			}
			j := i + 1
			for j < len(s) && plainByte[s[j]] {
				j++
			}
			if j < len(s) && s[j] == '"' {
				i = j + 1
			} else if i, ok = stringEnd(s, i); !ok {
				return dst, i, false
			}
			dst, from, i = skipSpace(dst, s, from, i)
			if i >= len(s) || s[i] != ':' {
				return dst, i, false
			}
			i++
			dst, from, i = skipSpace(dst, s, from, i)
			key = false
		}
		// A value starts at s[i].
		if i >= len(s) {
			return dst, i, false
		}
		switch c := s[i]; {
		case c == '"':
			// Most strings are plain ASCII to their quote: read
			// here, stringEnd only for the others.
			j := plainRun(s, i+1)
			if j < len(s) && s[j] == '"' {
				i = j + 1
				break
			}
			if i, ok = stringEnd(s, i); !ok {
				return dst, i, false
			}
		case c == '{' || c == '[':
			if stack>>(maxFastDepth-1) != 0 {
				return dst, i, false
			}
			closer := byte(']')
			stack <<= 1
			if c == '{' {
				stack |= 1
				closer = '}'
			}
			i++
			dst, from, i = skipSpace(dst, s, from, i)
			if i < len(s) && s[i] == closer {
				i++
				stack >>= 1
				break
			}
			key = c == '{'
			continue
		case c == '-' || c >= '0' && c <= '9':
			j := i + 1
			for j < len(s) && numberByte[s[j]] {
				j++
			}
			if !validNumber(s[i:j]) {
				return dst, i, false
			}
			i = j
		default:
			n := literalLen(s, i)
			if n == 0 {
				return dst, i, false
			}
			i += n
		}
		// After a value: close what ends here, or go on to the next
		// member.
		for {
			if stack == 1 {
				return append(dst, s[from:i]...), i, true
			}
			dst, from, i = skipSpace(dst, s, from, i)
			if i >= len(s) {
				return dst, i, false
			}
			closer := byte(']')
			if stack&1 != 0 {
				closer = '}'
			}
			if c := s[i]; c == ',' {
				i++
				dst, from, i = skipSpace(dst, s, from, i)
				key = stack&1 != 0
				break
			} else if c != closer {
				return dst, i, false
			}
			i++
			stack >>= 1
		}
	}
}

// numberByte marks the bytes a JSON number is made of.
var numberByte = func() (t [256]bool) {
	for _, c := range []byte("0123456789-+.eE") {
		t[c] = true
	}
	return t
}()

// literalLen is the length of the JSON literal at s[i:], or 0.
func literalLen[T text](s T, i int) int {
	for _, lit := range [...]string{"true", "false", "null"} {
		if len(s)-i >= len(lit) && string(s[i:i+len(lit)]) == lit {
			return len(lit)
		}
	}
	return 0
}

// stringEnd returns the index after the JSON string at s[i:] when
// decoding and re-encoding it gives back the same bytes: escapes only of
// the kinds appendString writes (\" \\ \n \r \t \b \f), valid UTF-8
// without U+2028 or U+2029, no raw control bytes.
func stringEnd[T text](s T, i int) (int, bool) {
	j := i + 1
	ascii := true
	for j < len(s) {
		// Most bytes of a string need no look: skip them eight a
		// step.
		if j = plainRun(s, j); j >= len(s) {
			break
		}
		c := s[j]
		switch {
		case c == '"':
			if !ascii && !plainUTF8(s[i+1:j]) {
				return i, false
			}
			return j + 1, true
		case c == '\\':
			if j+1 >= len(s) {
				return i, false
			}
			switch s[j+1] {
			case '"', '\\', 'n', 'r', 't', 'b', 'f':
				j += 2
			default:
				return i, false
			}
		case c < 0x20:
			return i, false
		default:
			ascii = false
			j++
		}
	}
	return i, false
}

// plainRun returns the index of the first byte from s[j:] on that
// plainByte does not mark (or len(s)), eight bytes a step where eight are
// there: most strings of a call are plain to their closing quote.
func plainRun[T text](s T, j int) int {
	const lo, hi = 0x0101010101010101, 0x8080808080808080
	sp := dataOf(s)
	for ; len(s)-j >= 8; j += 8 {
		w := loadWord(sp, j)
		// The lowest byte that is '"', '\\', below 0x20 or above
		// 0x7f: each term's lowest set bit is exact (borrows only
		// run upwards), so the OR's is the first such byte.
		q, b := w^(lo*'"'), w^(lo*'\\')
		if m := ((q-lo)&^q | (b-lo)&^b | (w - lo*0x20) | w) & hi; m != 0 {
			return j + bits.TrailingZeros64(m)>>3
		}
	}
	for j < len(s) && plainByte[s[j]] {
		j++
	}
	return j
}

// plainByte marks the bytes of a JSON string that stringEnd skips without
// a second look: printable ASCII other than '"' and '\\'.
var plainByte = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// plainUTF8: valid UTF-8 that appendString copies unchanged.
func plainUTF8[T text](s T) bool {
	for k := 0; k < len(s); {
		if s[k] < utf8.RuneSelf {
			k++
			continue
		}
		var rb [utf8.UTFMax]byte
		r, n := utf8.DecodeRune(rb[:copy(rb[:], s[k:])])
		if r == utf8.RuneError || r == '\u2028' || r == '\u2029' {
			return false
		}
		k += n
	}
	return true
}

func skipWS[T text](s T, i int) int {
	for i < len(s) && wsByte[s[i]] {
		i++
	}
	return i
}

// wsByte marks JSON whitespace: a table lookup is cheaper than four
// comparisons, and most looks find none.
var wsByte = [256]bool{' ': true, '\t': true, '\n': true, '\r': true}

// plainKey reads a JSON string without escapes at s[i:] (a key or a tool
// name) and returns where its content starts and ends, and the index
// after it.
func plainKey[T text](s T, i int) (from, to, next int, ok bool) {
	if i >= len(s) || s[i] != '"' {
		return 0, 0, i, false
	}
	for j := i + 1; j < len(s); j++ {
		switch c := s[j]; {
		case c == '"':
			return i + 1, j, j + 1, true
		case c == '\\' || c < 0x20:
			return 0, 0, i, false
		}
	}
	return 0, 0, i, false
}

// fastObject is a call object read by readFastObject: where its name
// is in the text read, its arguments (compact, in the arena), and the
// index after it.
type fastObject struct {
	nameFrom, nameTo int
	args             []byte
	end              int
}

// readFastObject reads the plain call object at s[i:] whose keys are
// exactly the name and arguments keys of keys, in either order.
func readFastObject[T text](a *arena, s T, i int, keys objectKeys) (fastObject, bool) {
	var f fastObject
	if i >= len(s) || s[i] != '{' {
		return f, false
	}
	i = skipWS(s, i+1)
	haveName, haveArgs := false, false
	for {
		kf, kt, j, ok := plainKey(s, i)
		if !ok {
			return f, false
		}
		j = skipWS(s, j)
		if j >= len(s) || s[j] != ':' {
			return f, false
		}
		j = skipWS(s, j+1)
		switch k := s[kf:kt]; {
		case string(k) == keys.name && !haveName:
			if f.nameFrom, f.nameTo, j, ok = plainKey(s, j); !ok || f.nameTo == f.nameFrom {
				return f, false
			}
			haveName = true
		case string(k) == keys.args && !haveArgs:
			if j >= len(s) || s[j] != '{' {
				return f, false
			}
			// The compact form is never longer than the source
			// (the object and what follows it in the block).
			if f.args, j, ok = compactValue(a.room(len(s)-j), s, j); !ok {
				return f, false
			}
			f.args = a.keep(f.args)
			haveArgs = true
		default:
			return f, false
		}
		j = skipWS(s, j)
		if j >= len(s) {
			return f, false
		}
		switch s[j] {
		case ',':
			i = skipWS(s, j+1)
			continue
		case '}':
			if !haveName || !haveArgs {
				return f, false
			}
			f.end = j + 1
			return f, true
		}
		return f, false
	}
}

// fastCall reads content that is exactly one plain call object with the
// name and arguments keys of keys (and nothing else), in either order.
func (p *Parser) fastCall(content string, keys objectKeys) (dcall, bool) {
	f, ok := readFastObject(&p.arena, content, skipWS(content, 0), keys)
	if !ok || skipWS(content, f.end) != len(content) {
		return dcall{}, false
	}
	return dcall{name: content[f.nameFrom:f.nameTo], args: f.args}, true
}

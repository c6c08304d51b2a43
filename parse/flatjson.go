package parse

import (
	"encoding/binary"
	"math/bits"
	"slices"
	"unsafe"
)

// compactFlat is compactValue for the arguments calls carry most: an
// object whose values are strings, numbers, literals or lists of those.
// With no stack of containers to carry, its loop keeps what it needs in
// registers. It reports flat false for any other value (a nested object,
// a list of lists), which compactValue reads instead; ok and the index
// are as compactValue's. When ok is false it returns dst as given but
// for its capacity.
//
// The compact form is never longer than s[i:], so dst is grown once to
// hold all of it, and bytes are stored, not appended: a word of s is
// stored whole (the bytes past the token are written over later) where
// appends cost a call each. The loop makes no call for what calls carry
// (plain strings, short numbers, literals): in Go a call spills every
// register the loop holds.
func compactFlat[T text](dst []byte, s T, i int) (_ []byte, _ int, ok, flat bool) {
	const lo, hi = 0x0101010101010101, 0x8080808080808080
	if i >= len(s) || s[i] != '{' {
		return dst, i, false, false
	}
	if cap(dst)-len(dst) < len(s)-i {
		dst = slices.Grow(dst, len(s)-i)
	}
	// out[o:] has room for the compact form of s[i:]: o-len(dst) is
	// never more than i less where the object starts, and a word is
	// stored at out[o:] only where s[i:] has eight bytes.
	out, o := dst[:cap(dst)], len(dst)
	base := o
	// The string loop stores its words through outp, without the bounds
	// check of out[k:k+8]: the room above covers every one (a word
	// goes to out[j+o-i:] with j at most len(s)-8, and o-i at most
	// base-i0 for the object's start i0, so it ends at or before
	// base+len(s)-i0 <= cap(dst)).
	outp := unsafe.Pointer(unsafe.SliceData(out))
	// Words of s are read through sp, where eight bytes are checked to
	// be left: s[j:j+8] would check again.
	sp := dataOf(s)
	out[o] = '{'
	o++
	// As after a ':' or ',' below: one space is skipped here, more by
	// skipWS (a call, which spills the loop's registers).
	if i++; i < len(s) && wsByte[s[i]] {
		i = skipWS(s, i+1)
	}
	if i < len(s) && s[i] == '}' {
		out[o] = '}'
		return out[:o+1], i + 1, true, true
	}
	// What s[i] starts: a key, a member's value, the first item of a
	// list or one after it. Whitespace before it is skipped where it is
	// found rather than looked for at every step: calls have it before
	// half their tokens at most.
	const inKey, inValue, inList0, inList = 0, 1, 2, 3
	in := inKey
	for {
		if i >= len(s) {
			return out[:base], i, false, true
		}
	token:
		switch c := s[i]; {
		case c == '"':
			// Most strings are plain ASCII to their quote: copied
			// and looked at eight bytes a step (as plainRun does)
			// here, by stringEnd only for the others.
			out[o] = '"'
			d := o - i // s[j] goes to out[j+d]
			j := i + 1
			for ; len(s)-j >= 8; j += 8 {
				w := loadWord(sp, j)
				*(*[8]byte)(unsafe.Add(outp, j+d)) = *(*[8]byte)(unsafe.Add(sp, j))
				// As plainRun's test, without its &^q and &^b: a
				// byte they would clear is above 0x7f, in w.
				q, b := w^(lo*'"'), w^(lo*'\\')
				if m := ((q - lo) | (b - lo) | (w - lo*0x20) | w) & hi; m != 0 {
					// The word stored above put the quote at
					// out[j+d] already.
					if j += bits.TrailingZeros64(m) >> 3; s[j] == '"' {
						i, o = j+1, j+1+d
						break token
					}
					break
				}
			}
			for j < len(s) && plainByte[s[j]] {
				out[j+d] = s[j]
				j++
			}
			if j < len(s) && s[j] == '"' {
				out[j+d] = '"'
				i, o = j+1, j+1+d
				break
			}
			e, ok := stringEnd(s, i)
			if !ok {
				return out[:base], i, false, true
			}
			o += copy(out[o:], s[i:e])
			i = e
		case wsByte[c]:
			i = skipWS(s, i+1)
			continue
		case in == inKey:
			return out[:base], i, false, true
		case c == '[' && in == inValue:
			out[o] = '['
			o++
			i++
			in = inList0
			continue
		case c == ']' && in == inList0:
			out[o] = ']'
			o++
			i++
			in = inValue
		case c == '-' || c-'0' <= 9:
			// Most numbers of a call are integers, read here;
			// numberEnd reads the others.
			j := i + 1
			if c != '0' {
				for j < len(s) && s[j]-'0' <= 9 {
					j++
				}
			}
			if c == '-' || c == '0' || j < len(s) && numberByte[s[j]] {
				if j = numberEnd(s, i); j == i {
					return out[:base], i, false, true
				}
			}
			n := j - i
			if len(s)-i >= 8 && n <= 8 {
				binary.LittleEndian.PutUint64(out[o:o+8], loadWord(sp, i))
			} else {
				copy(out[o:], s[i:i+n])
			}
			i, o = i+n, o+n
		case len(s)-i >= 8:
			// A literal, or nothing compactValue reads.
			w := loadWord(sp, i)
			n := 0
			switch {
			case uint32(w) == 't'|'r'<<8|'u'<<16|'e'<<24 || uint32(w) == 'n'|'u'<<8|'l'<<16|'l'<<24:
				n = 4
			case w&(1<<40-1) == 'f'|'a'<<8|'l'<<16|'s'<<24|'e'<<32:
				n = 5
			default:
				return out[:base], i, false, c != '{' && (c != '[' || in == inValue)
			}
			binary.LittleEndian.PutUint64(out[o:o+8], w)
			i, o = i+n, o+n
		default:
			n := literalLen(s, i)
			if n == 0 {
				return out[:base], i, false, c != '{' && (c != '[' || in == inValue)
			}
			copy(out[o:], s[i:i+n])
			i, o = i+n, o+n
		}
		if in == inKey {
			if i >= len(s) || s[i] != ':' {
				if i < len(s) && wsByte[s[i]] {
					i = skipWS(s, i+1)
				}
				if i >= len(s) || s[i] != ':' {
					return out[:base], i, false, true
				}
			}
			out[o] = ':'
			o++
			// Calls are written with ": " and ", " as often as
			// without: the one space is skipped here, where the
			// loop's whitespace case would go round once more and
			// call skipWS.
			if i++; i < len(s) && s[i] == ' ' {
				i++
			}
			in = inValue
			continue
		}
		if in == inList0 {
			in = inList
		}
		// After a value: the next item or member, or the end of the
		// list or object.
		for {
			if i >= len(s) {
				return out[:base], i, false, true
			}
			c := s[i]
			if c == ',' {
				out[o] = ','
				o++
				if i++; i < len(s) && s[i] == ' ' {
					i++
				}
				if in == inValue {
					in = inKey
				}
				break
			}
			if c == '}' && in == inValue {
				out[o] = '}'
				return out[:o+1], i + 1, true, true
			}
			if c == ']' && in == inList {
				out[o] = ']'
				o++
				i++
				in = inValue
				continue
			}
			if !wsByte[c] {
				return out[:base], i, false, true
			}
			i = skipWS(s, i+1)
		}
	}
}

// numberEnd returns the index after the JSON number at s[i:], i < len(s),
// or i when there is none or a byte of numberByte follows it: where
// compactValue takes the run of those bytes for the number and checks it
// with validNumber, this reads it once.
func numberEnd[T text](s T, i int) int {
	j := i
	if s[j] == '-' {
		if j++; j >= len(s) {
			return i
		}
	}
	switch c := s[j]; {
	case c == '0':
		j++
	case c-'1' < 9:
		j = digits(s, j+1)
	default:
		return i
	}
	if j < len(s) && s[j] == '.' {
		k := digits(s, j+1)
		if k == j+1 {
			return i
		}
		j = k
	}
	if j < len(s) && s[j]|0x20 == 'e' {
		if j++; j < len(s) && (s[j] == '+' || s[j] == '-') {
			j++
		}
		k := digits(s, j)
		if k == j {
			return i
		}
		j = k
	}
	if j < len(s) && numberByte[s[j]] {
		return i
	}
	return j
}

// dataOf returns the address of s's first byte: a string's header and a
// slice's both start with it.
func dataOf[T text](s T) unsafe.Pointer {
	return *(*unsafe.Pointer)(unsafe.Pointer(&s))
}

// loadWord reads the eight bytes at p+j, which the caller has checked are
// there, as a little-endian word (one load where the platform allows
// unaligned ones).
func loadWord(p unsafe.Pointer, j int) uint64 {
	t := (*[8]byte)(unsafe.Add(p, j))
	return uint64(t[0]) | uint64(t[1])<<8 | uint64(t[2])<<16 | uint64(t[3])<<24 |
		uint64(t[4])<<32 | uint64(t[5])<<40 | uint64(t[6])<<48 | uint64(t[7])<<56
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

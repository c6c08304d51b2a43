package parse

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// compactSeeds are arguments objects as calls carry them, and the
// near misses compactValue must refuse or hand to its general loop.
var compactSeeds = []string{
	`{"path": "src/pkg12/file_1234.go", "limit": 55, "follow": true, "tags": ["a", "b3"]}`,
	`{}`, `{ }`, `{"a":[]}`, `{"a": [ ]}`, `{"a": [1]}`, `[]`, `"x"`, `5`,
	`{"s": "é\n\"q\"\\", "t": "\t\r\b\f", "u": "\u00e9", "v": "a` + "\u2028" + `b", "w": "\/"}`,
	`{"long": "abcdefghijklmnopqrstuvwxyz0123456789", "e7": "abcdefg\n", "e8": "abcdefgh\"", "e9": "abcdefghi\\"}`,
	`{"u7": "abcdefgé", "u8": "abcdefghé", "u9": "abcdefghi日本語", "k": "#a#b#c#d#e#f#g#h"}`,
	`{"n": -0, "m": 1.5e+10, "k": 2E-3, "z": 0.0, "b": 12345678901234567890, "c": -1.23456789e-100}`,
	`{"n": 01}`, `{"n": 1.}`, `{"n": -}`, `{"n": 1e}`, `{"n": 1-2}`, `{"n": .5}`, `{"n": +1}`, `{"n": 1.2.3}`,
	`{"n": 1e+}`, `{"n": -a}`, `{"n": 1E5e}`, `{"l": [1, 2,3 ,4 , -5.5e-5]}`, `{"l": [0, 00]}`,
	`{"l": [true, false, null, "x", 1, -2.5]}`, `{"t": tru}`, `{"t": nul}`, `{"t": True}`, `{"t": nulll}`,
	`{"o": {"p": 1}}`, `{"l": [[1]]}`, `{"l": [{"a": 1}]}`, `{"a": 1, "o": {"p": [1, {"q": null}]}, "z": [2]}`,
	"{\"a\": \"\xff\"}", "{\"a\": \"x\ty\"}", "{\"a\": \"x\x01y\"}", `{"a": "\u0041"}`, `{"a": "\x"}`,
	`{"a":1,}`, `{"a" 1}`, `{"a":1 "b":2}`, `{,}`, `{"a":1}}`, `{"a":[1,]}`, `{"a":[,1]}`, `{"a":[1 2]}`,
	`{"k\"ey": 1, "ké": 2, "k\\": [3]}`, `{a: 1}`, `{"a": 'x'}`, `{"a": [true false]}`, `{"a": "b" }`,
}

// spaced returns s with ws before and after each byte of structure
// outside strings.
func spaced(s, ws string) string {
	var b strings.Builder
	in, esc := false, false
	for k := 0; k < len(s); k++ {
		c := s[k]
		switch {
		case in:
			in = esc || c != '"'
			esc = !esc && c == '\\'
			b.WriteByte(c)
		case c == '"':
			in = true
			b.WriteByte(c)
		case strings.IndexByte("{}[]:,", c) >= 0:
			b.WriteString(ws)
			b.WriteByte(c)
			b.WriteString(ws)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// compactVariants: s, without whitespace, and with whitespace of every
// kind around its structure.
func compactVariants(s string) []string {
	out := []string{s, spaced(strings.ReplaceAll(s, ", ", ","), "")}
	for _, ws := range []string{" ", "\n", "\t\r\n ", "        ", "\r"} {
		out = append(out, spaced(s, ws))
	}
	return out
}

// checkCompact compares compactValue and compactFlat at s[i:] with the
// implementations they replaced (below), for both kinds of text and for
// a dst with room (as the arena gives), without room, and nil. It
// returns whether compactFlat read the value itself.
func checkCompact(t *testing.T, s string, i int) (flat bool) {
	t.Helper()
	check := func(kind string, got, want []byte, gotEnd, wantEnd int, gotOK, wantOK bool) {
		t.Helper()
		if gotEnd != wantEnd || gotOK != wantOK || gotOK && !bytes.Equal(got, want) {
			t.Fatalf("%s at %d of %q: got %q %d %v, want %q %d %v", kind, i, s, got, gotEnd, gotOK, want, wantEnd, wantOK)
		}
	}
	for _, dst := range [][]byte{nil, append(make([]byte, 0, 2+len(s)-i), "ab"...), []byte("ab")} {
		want, wantEnd, wantOK := oldCompactValue(bytes.Clone(dst), s, i)
		got, gotEnd, gotOK := compactValue(bytes.Clone(dst), s, i)
		check("compactValue(string)", got, want, gotEnd, wantEnd, gotOK, wantOK)
		got, gotEnd, gotOK = compactValue(bytes.Clone(dst), []byte(s), i)
		check("compactValue([]byte)", got, want, gotEnd, wantEnd, gotOK, wantOK)
		if wantOK {
			var c bytes.Buffer
			if err := json.Compact(&c, []byte(s[i:wantEnd])); err != nil || !bytes.Equal(c.Bytes(), want[len(dst):]) {
				t.Fatalf("compactValue at %d of %q: %q, encoding/json: %q %v", i, s, want[len(dst):], c.Bytes(), err)
			}
		}
		want, wantEnd, wantOK, wantFlat := oldCompactFlat(bytes.Clone(dst), s, i)
		got, gotEnd, gotOK, gotFlat := compactFlat(bytes.Clone(dst), s, i)
		if flat = gotFlat; flat != wantFlat {
			t.Fatalf("compactFlat at %d of %q: flat %v, want %v", i, s, flat, wantFlat)
		}
		check("compactFlat", got, want, gotEnd, wantEnd, gotOK, wantOK)
	}
	return flat
}

// TestCompactMatchesOld checks compactValue against the implementation it
// replaced, on the seeds with every kind of whitespace, cut at every
// byte, and on every object and list of the corpus, cut at every byte
// to their end.
func TestCompactMatchesOld(t *testing.T) {
	for _, seed := range compactSeeds {
		for _, s := range compactVariants(seed) {
			for _, pre := range []string{"", `{"arguments": `} {
				for n := len(pre); n <= len(pre)+len(s); n++ {
					checkCompact(t, (pre + s + "} ")[:n], len(pre))
				}
			}
		}
	}
	for _, r := range loadCorpus(t) {
		for i := 0; i < len(r.Raw); i++ {
			if c := r.Raw[i]; c != '{' && c != '[' {
				continue
			}
			checkCompact(t, r.Raw, i)
			_, end, ok := compactValue(nil, r.Raw, i)
			if !ok {
				continue
			}
			for n := i; n < end+2 && n <= len(r.Raw); n++ {
				checkCompact(t, r.Raw[:n], i)
			}
		}
	}
}

// TestCompactFlatTaken: arguments as calls carry them are read by
// compactFlat, not handed to the general loop.
func TestCompactFlatTaken(t *testing.T) {
	for _, s := range compactVariants(compactSeeds[0]) {
		i := skipWS(s, 0)
		if !checkCompact(t, s, i) {
			t.Errorf("compactFlat gave %q to the general loop", s)
		}
		if _, _, ok := compactValue(nil, s, i); !ok {
			t.Errorf("compactValue refused %q", s)
		}
	}
}

// FuzzCompactValue compares compactValue with the implementation it
// replaced at any offset of any text.
func FuzzCompactValue(f *testing.F) {
	for _, seed := range compactSeeds {
		for _, s := range compactVariants(seed) {
			f.Add(s, uint8(0))
		}
	}
	f.Fuzz(func(t *testing.T, s string, at uint8) {
		i := int(at) % (len(s) + 1)
		for n := i; n <= len(s); n++ {
			checkCompact(t, s[:n], i)
		}
	})
}

// The implementations compactValue and compactFlat replaced, as they
// were, for the tests to compare with.

func oldCompactFlat[T text](dst []byte, s T, i int) (_ []byte, _ int, ok, flat bool) {
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
					if i, ok = oldScalarEnd(s, i); !ok {
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
		} else if i, ok = oldScalarEnd(s, i); !ok {
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

// oldScalarEnd returns the index after the string, number or literal at
// s[i:], as compactValue reads them; ok is false for anything else.
func oldScalarEnd[T text](s T, i int) (int, bool) {
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

func oldCompactValue[T text](dst []byte, s T, i int) (_ []byte, _ int, ok bool) {
	if out, end, ok, flat := oldCompactFlat(dst, s, i); flat {
		return out, end, ok
	}
	// The loop for other values is unchanged: the current one.
	return compactNested(dst, s, i)
}

// BenchmarkCompactValue: compactValue on arguments as calls carry them,
// into room as the arena gives it.
func BenchmarkCompactValue(b *testing.B) {
	for _, in := range []struct{ name, s string }{
		{"hermes", compactSeeds[0] + "}\n</tool_call>"},
		{"compact", spaced(strings.ReplaceAll(compactSeeds[0], ", ", ","), "") + "}"},
	} {
		for _, kind := range []string{"string", "bytes"} {
			b.Run(in.name+"/"+kind, func(b *testing.B) {
				room := make([]byte, 0, len(in.s))
				bs := []byte(in.s)
				b.SetBytes(int64(len(in.s)))
				for range b.N {
					var ok bool
					if kind == "string" {
						_, _, ok = compactValue(room, in.s, 0)
					} else {
						_, _, ok = compactValue(room, bs, 0)
					}
					if !ok {
						b.Fatal("refused")
					}
				}
			})
		}
	}
}

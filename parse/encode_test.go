package parse

import (
	"strings"
	"testing"

	"github.com/toolharness/toolharness/chat"
)

// appendString writes JSON strings itself for speed; its output must be
// byte for byte what chat.Marshal writes, or call arguments would change.
func TestAppendStringMatchesMarshal(t *testing.T) {
	cases := []string{
		"", "plain", `quote " and \ backslash`, "<html> & 'x'", "tab\tnl\nr\rbs\bff\f",
		"\x00\x01\x1f\x7f", "é ü 日本 🙂", "\u2028\u2029", "bad \xff\xfe utf8 \xc3", "\xed\xa0\x80",
		"trunc \xe6\x97", strings.Repeat(`a"\`, 100),
	}
	for c := range 256 {
		cases = append(cases, "x"+string([]byte{byte(c)})+"y")
	}
	for _, s := range cases {
		want, err := chat.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := appendString(nil, s); string(got) != string(want) {
			t.Errorf("appendString(%q) = %s, chat.Marshal gives %s", s, got, want)
		}
	}
}

func FuzzAppendString(f *testing.F) {
	f.Add(`{"path": "a\\b"}` + "\n\t\u2028\xff")
	f.Add(soup(512))
	f.Fuzz(func(t *testing.T, s string) {
		want, err := chat.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := appendString(nil, s); string(got) != string(want) {
			t.Fatalf("appendString(%q) = %s, chat.Marshal gives %s", s, got, want)
		}
		if got := encode(s); string(got) != string(want) {
			t.Fatalf("encode(%q) = %s, chat.Marshal gives %s", s, got, want)
		}
	})
}

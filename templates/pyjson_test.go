package templates

import (
	"testing"

	"github.com/toolharness/toolharness/chat"
)

// TestPyStrRepr: strings inside a container print as Python 3's repr()
// prints them (the wants are Python 3.12's repr of each).
func TestPyStrRepr(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"plain", `'plain'`},
		{"it's", `"it's"`},
		{`say "hi"`, `'say "hi"'`},
		{`both ' and "`, `'both \' and "'`},
		{`back\slash`, `'back\\slash'`},
		{"nl\ncr\rtab\t", `'nl\ncr\rtab\t'`},
		{"\x01\x1f\x7f", `'\x01\x1f\x7f'`},
		{"nbsp\u00a0soft\u00adzw\u200bbom\ufeff", `'nbsp\xa0soft\xadzw\u200bbom\ufeff'`},
		{"sep\u2028\u2029", `'sep\u2028\u2029'`},
		{"nel\u0085", `'nel\x85'`},
		{"é ☃ 😀", `'é ☃ 😀'`},
		{"priv\ue000", `'priv\ue000'`},
		{"\U000e0001tag", `'\U000e0001tag'`},
	} {
		if got := PyStr([]any{tc.in}); got != "["+tc.want+"]" {
			t.Errorf("%q: %s, want [%s]", tc.in, got, tc.want)
		}
	}
	obj := &chat.Object{Members: []chat.Member{{Key: "k'", Value: []any{true, nil, "v"}}}}
	if got, want := PyStr(obj), `{"k'": [True, None, 'v']}`; got != want {
		t.Errorf("object: %s, want %s", got, want)
	}
}

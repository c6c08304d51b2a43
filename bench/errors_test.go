package bench

import (
	"errors"
	"strings"
	"testing"
)

// TestInputError: bench's input errors keep their line and sentinel for
// programs (Error, errors.Is) and give a command the cause alone (Msg).
func TestInputError(t *testing.T) {
	for _, tc := range []struct {
		name      string
		err       error
		line, msg string
		is        error
	}{
		{"suite", func() error { _, err := ParseSuite([]byte("name: x\ncases: []\n")); return err }(),
			"bench: suite: no cases", "no cases", ErrSuite},
		{"cells", func() error { _, err := ParseCells([]string{"m"}, []string{"hermes"}, []string{"bogus"}); return err }(),
			`bench: --modes "bogus": want raw, chat or server`, `--modes "bogus": want raw, chat or server`, nil},
		{"corpus", func() error {
			p, err := NewParser("auto")
			if err != nil {
				t.Fatal(err)
			}
			_, err = ScoreCorpus(strings.NewReader("[1]\n"), CorpusOptions{Format: "auto", Parser: p})
			return err
		}(),
			"bench: no readable record: none of the 1 non-empty lines is a record", "none of the 1 non-empty lines is a record", ErrNoRecords},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var ie *InputError
			if !errors.As(tc.err, &ie) {
				t.Fatalf("%v (%T) is no *InputError", tc.err, tc.err)
			}
			if got := tc.err.Error(); !strings.HasPrefix(got, tc.line) {
				t.Errorf("Error %q, want it to start with %q", got, tc.line)
			}
			if !strings.HasPrefix(ie.Msg, tc.msg) {
				t.Errorf("Msg %q, want it to start with %q", ie.Msg, tc.msg)
			}
			if tc.is != nil && !errors.Is(tc.err, tc.is) {
				t.Errorf("not %v", tc.is)
			}
		})
	}
}

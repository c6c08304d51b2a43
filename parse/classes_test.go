package parse

import (
	"strings"
	"testing"
)

// TestTextCoalesced: bytes that each open a block and are each turned
// back into text (a megabyte of '[') come out as a few text events, not
// one per byte, and a rejected fence's backticks are one event.
func TestTextCoalesced(t *testing.T) {
	for _, format := range Formats() {
		for _, b := range []string{"[", "{", "`", "<", "(", "[{"} {
			in := strings.Repeat(b, 1<<20/len(b))
			evs := collect(t, format, Options{}, []string{in})
			if len(evs) > 8 {
				t.Errorf("%s: %d events for 1 MB of %q", format, len(evs), b)
			}
			if got := reconstruct(evs); got != in {
				t.Errorf("%s %q: bytes lost or added", format, b)
			}
		}
	}
	for _, format := range []string{"hermes", "auto", "json", "pythonic"} {
		evs := collect(t, format, Options{Tools: testTools}, []string{"```python\nprint(1)\n```\nDone."})
		for _, e := range evs {
			if e.Type != EventText || strings.Trim(e.Text, "`") == "" && e.Text != "```" {
				t.Errorf("%s: a code fence gave %+v; want text, its backticks in one piece", format, e)
			}
		}
	}
}

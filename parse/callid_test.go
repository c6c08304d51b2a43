package parse

import (
	"strconv"
	"strings"
	"testing"
)

// TestCallIDsCountUp: past the prebuilt IDs, a call's ID is written into
// the arena from a counter its digits count up in; every ID of a long
// parse, kept until the end, reads "call_N" for the Nth call, across the
// carries to a new digit.
func TestCallIDsCountUp(t *testing.T) {
	const n = 1105
	var b strings.Builder
	for i := range n {
		b.WriteString(`<tool_call>{"name": "read_file", "arguments": {"path": "f` + strconv.Itoa(i) + `"}}</tool_call>` + "\n")
	}
	var starts, ids []string
	for _, e := range collect(t, "hermes", Options{Tools: testTools}, chunked(b.String(), 3)) {
		switch e.Type {
		case EventCallStart:
			starts = append(starts, e.Call.ID)
		case EventCall:
			ids = append(ids, e.Call.ID)
		}
	}
	if len(starts) != n || len(ids) != n {
		t.Fatalf("%d call starts and %d calls, want %d", len(starts), len(ids), n)
	}
	for i := range n {
		if want := "call_" + strconv.Itoa(i); starts[i] != want || ids[i] != want {
			t.Errorf("call %d: start ID %q, ID %q, want %q", i, starts[i], ids[i], want)
		}
	}
}

// TestCallIDOutOfOrder: an ID asked for out of order is formatted whole,
// and counting goes on from it.
func TestCallIDOutOfOrder(t *testing.T) {
	p, err := New("hermes", Options{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, n := range []int{3, 64, 65, 99, 100, 500, 500, 501, 9999, 10000, 70} {
		got = append(got, p.callID(n))
	}
	want := "call_3 call_64 call_65 call_99 call_100 call_500 call_500 call_501 call_9999 call_10000 call_70"
	if s := strings.Join(got, " "); s != want {
		t.Errorf("IDs %s\nwant %s", s, want)
	}
}

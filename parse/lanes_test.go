package parse

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestValueLaneEveryCut: Feed's value lane, which copies and marks a
// chunk of up to eight bytes without a loop, gives the events of a
// one-shot parse on the general path (where no value lane runs) for
// every chunk size from 1 to 11 at every offset, so that every byte of
// every value (the one that ends it included) falls at every place in a
// chunk: in the quick cycle and in the block path, in the formats whose
// calls hold JSON values.
func TestValueLaneEveryCut(t *testing.T) {
	ins := []string{
		quickBase,
		quickBase + quickCall("read_file", `{"path": "c.go", "limit": 12, "deep": {"x": [1, 2.5e3], "y": "a\"}b"}, "z": null}`) + "\nand after",
		"text " + quickCall("get_weather", `{"city": "Paris", "days": 3}`) + quickCall("get_weather", `{"city":"Rome","days":10}`),
		`[{"name": "read_file", "arguments": {"path": "a.go", "limit": 5}}, {"name": "get_weather", "arguments": {"city": "Oslo"}}]`,
	}
	formats := []struct {
		format string
		opts   Options
	}{{"hermes", Options{Tools: testTools}}, {"hermes", Options{}}, {"auto", Options{Tools: testTools}}, {"json", Options{}}, {"mistral", Options{}}}
	lanes := 0
	for _, f := range formats {
		for k, in := range ins {
			want := general(t, f.format, f.opts, in, 0)
			for n := 1; n <= 11; n++ {
				for shift := 0; shift < n; shift++ {
					chunks := append([]string{in[:shift]}, chunked(in[shift:], n)...)
					p, err := New(f.format, f.opts)
					if err != nil {
						t.Fatal(err)
					}
					var evs []Event
					emit := func(e Event) { evs = append(evs, e) }
					for _, c := range chunks {
						if p.b.inValue {
							lanes++
						}
						p.Feed(c, emit)
					}
					p.Close(emit)
					if d := cmp.Diff(want, merged(evs)); d != "" {
						t.Fatalf("%s tools=%v input %d, chunks of %d after %d bytes (-one shot +chunked):\n%s", f.format, f.opts.Tools != nil, k, n, shift, d)
					}
				}
			}
		}
	}
	if lanes == 0 {
		t.Fatal("no chunk reached the value lane: the test compares nothing")
	}
}

// TestProseLaneEveryCut: Feed's prose lane, which classes a chunk of up
// to eight bytes at eight positions without a branch on its length,
// sees a marker's first byte or a newline at every place in chunks of 1
// to 11 bytes: the events are those of a one-shot parse on the general
// path, in every format, for prose around calls, reasoning and turn
// markers.
func TestProseLaneEveryCut(t *testing.T) {
	ins := []string{
		"Sure, let me look.\n" + quickCall("read_file", `{"path": "a.go"}`) + "\nDone now.",
		"a<b and c\nd\n\ne " + quickCall("get_weather", `{"city": "Oslo"}`),
		"<think>\nfirst\n</think>\nthe answer is 42\n\nHuman: next",
		`[TOOL_CALLS][{"name": "read_file", "arguments": {"path": "x"}}] and more`,
	}
	opts := Options{Tools: testTools, TurnMarkers: []string{"\n\nHuman:"}}
	lanes := 0
	for _, format := range Formats() {
		for k, in := range ins {
			p, err := New(format, opts)
			if err != nil {
				t.Fatal(err)
			}
			p.noLane = true
			want := merged(run(p, []string{in}))
			for n := 1; n <= 11; n++ {
				for shift := 0; shift < n; shift++ {
					chunks := append([]string{in[:shift]}, chunked(in[shift:], n)...)
					p, _ := New(format, opts)
					var evs []Event
					emit := func(e Event) { evs = append(evs, e) }
					for _, c := range chunks {
						if p.lane {
							lanes++
						}
						p.Feed(c, emit)
					}
					p.Close(emit)
					if d := cmp.Diff(want, merged(evs)); d != "" {
						t.Fatalf("%s input %d, chunks of %d after %d bytes (-one shot, no lane +chunked):\n%s", format, k, n, shift, d)
					}
				}
			}
		}
	}
	if lanes == 0 {
		t.Fatal("no chunk reached the prose lane: the test compares nothing")
	}
}

package parse

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// quickCall is a call in the framing the quick cycle learns.
func quickCall(name, args string) string {
	return "<tool_call>\n{\"name\": \"" + name + "\", \"arguments\": " + args + "}\n</tool_call>"
}

// quickBase is three calls back to back: the first teaches quick the
// framing, the other two go through it.
var quickBase = quickCall("read_file", `{"path": "a.go", "limit": 5}`) + "\n" +
	quickCall("get_weather", `{"city": "Paris"}`) + "\n" +
	quickCall("read_file", `{"path": "b.go"}`) + "\n"

// general parses in with the quick cycle off, in chunks of n (0: whole).
func general(t *testing.T, format string, opts Options, in string, n int) []Event {
	t.Helper()
	p, err := New(format, opts)
	if err != nil {
		t.Fatal(err)
	}
	p.noQuick = true
	return merged(run(p, chunked(in, n)))
}

// quickRun parses in chunks of n (0: whole) and reports how many calls the
// quick cycle emitted.
func quickRun(t *testing.T, format string, opts Options, in string, n int) ([]Event, int) {
	t.Helper()
	return quickRunChunks(t, format, opts, chunked(in, n))
}

// quickRunChunks is quickRun on chunks as given.
func quickRunChunks(t *testing.T, format string, opts Options, chunks []string) ([]Event, int) {
	t.Helper()
	p, err := New(format, opts)
	if err != nil {
		t.Fatal(err)
	}
	var evs []Event
	emit := func(e Event) { evs = append(evs, e) }
	for _, c := range chunks {
		p.Feed(c, emit)
	}
	quick := p.quickCalls
	p.Close(emit)
	return merged(evs), quick
}

// TestQuickCycle: on call-dense output the calls after the first go
// through the quick cycle, with the events the general path gives.
func TestQuickCycle(t *testing.T) {
	cycleMatchesGeneral(t, []string{"hermes", "auto"}, quickBase, quickRun)
}

// cycleMatchesGeneral parses base, three calls back to back, in every
// format of formats, with and without a catalog and strict, in chunks of
// 0 to 7 bytes: the events are the general path's, and run's cycle took
// the last two calls.
func cycleMatchesGeneral(t *testing.T, formats []string, base string, run func(*testing.T, string, Options, string, int) ([]Event, int)) {
	t.Helper()
	for _, format := range formats {
		for _, opts := range []Options{{Tools: testTools}, {}, {Tools: testTools, Strict: true}} {
			want := general(t, format, opts, base, 0)
			if calls := countCalls(want); calls != 3 {
				t.Fatalf("%s: general path gave %d calls, want 3", format, calls)
			}
			for n := range 8 {
				got, quick := run(t, format, opts, base, n)
				if d := cmp.Diff(want, got); d != "" {
					t.Fatalf("%s tools=%v strict=%v chunks of %d (-general +quick):\n%s", format, opts.Tools != nil, opts.Strict, n, d)
				}
				if quick != 2 {
					t.Errorf("%s tools=%v strict=%v chunks of %d: %d calls through the cycle, want 2", format, opts.Tools != nil, opts.Strict, n, quick)
				}
			}
		}
	}
}

func countCalls(evs []Event) int {
	n := 0
	for _, e := range evs {
		if e.Type == EventCall {
			n++
		}
	}
	return n
}

// TestQuickMatchesGeneral changes the second and third calls of quickBase
// at every byte (another byte in its place, the byte left out, a byte put
// before it): wherever the input leaves the learned framing, quick hands
// over to the general path, and the events in every chunking are those
// the general path gives the whole input.
func TestQuickMatchesGeneral(t *testing.T) {
	// The second call and the text after it: the third shows that
	// quick starts again after the general path read a call.
	from := len(quickCall("read_file", `{"path": "a.go", "limit": 5}`))
	to := from + len(quickCall("get_weather", `{"city": "Paris"}`)) + 2
	edits := []string{"", " ", "\n", "<", `"`, `\`, "{", "}", "[", ",", "x", "é", "</tool_call>", "<tool_call>"}
	for _, c := range []struct {
		format string
		opts   Options
	}{{"hermes", Options{Tools: testTools}}, {"hermes", Options{}}, {"hermes", Options{Tools: testTools, Strict: true}}, {"auto", Options{Tools: testTools}}} {
		everyEditMatchesGeneral(t, c.format, c.opts, quickBase, from, to, edits, quickRun)
	}
}

// everyEditMatchesGeneral changes base at every byte of [from, to) with
// each of edits (put in the byte's place and, but for the first, before
// it) and checks that run, in chunks of 0, 1, 4 and 7 bytes, gives the
// events the general path gives the whole edited input.
func everyEditMatchesGeneral(t *testing.T, format string, opts Options, base string, from, to int, edits []string,
	run func(*testing.T, string, Options, string, int) ([]Event, int)) {
	t.Helper()
	for i := from; i < to; i++ {
		for k, e := range edits {
			variants := []string{base[:i] + e + base[i+1:]}
			if k > 0 {
				variants = append(variants, base[:i]+e+base[i:])
			}
			for _, in := range variants {
				want := general(t, format, opts, in, 0)
				if got := reconstruct(want); got != in {
					t.Fatalf("general path lost bytes of %q", in)
				}
				for _, n := range []int{0, 1, 4, 7} {
					got, _ := run(t, format, opts, in, n)
					if d := cmp.Diff(want, got); d != "" {
						t.Fatalf("%s tools=%v strict=%v chunks of %d, input %q (-general +quick):\n%s", format, opts.Tools != nil, opts.Strict, n, in, d)
					}
				}
			}
		}
	}
}

// TestQuickStopsAtEveryEnd: a stream cut anywhere in a quick cycle's call
// ends as the general path ends it.
func TestQuickStopsAtEveryEnd(t *testing.T) {
	cutsMatchGeneral(t, "hermes", quickBase, quickRun)
}

// cutsMatchGeneral cuts base anywhere in its last two thirds and parses
// what is left in chunks of 0, 1 and 4 bytes: run gives the events the
// general path gives.
func cutsMatchGeneral(t *testing.T, format, base string, run func(*testing.T, string, Options, string, int) ([]Event, int)) {
	t.Helper()
	for cut := len(base) / 3; cut <= len(base); cut++ {
		in := base[:cut]
		for _, n := range []int{0, 1, 4} {
			want := general(t, format, Options{Tools: testTools}, in, n)
			got, _ := run(t, format, Options{Tools: testTools}, in, n)
			if d := cmp.Diff(want, got); d != "" {
				t.Fatalf("cut at %d, chunks of %d (-general +quick):\n%s", cut, n, d)
			}
		}
	}
}

// TestQuickDenseInput: the benchmark's call-dense input goes through the
// quick cycle after its first call, with the general path's events.
func TestQuickDenseInput(t *testing.T) {
	in := denseInput("hermes")
	opts := Options{Tools: mustTools(denseTools)}
	want := general(t, "hermes", opts, in, 4)
	got, quick := quickRun(t, "hermes", opts, in, 4)
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("(-general +quick):\n%s", d)
	}
	if quick != denseCalls-1 {
		t.Fatalf("%d calls through the quick cycle, want %d", quick, denseCalls-1)
	}
	if !strings.Contains(in, "</tool_call>\n<tool_call>") {
		t.Fatal("dense input changed shape")
	}
}

// TestQuickBenchProse: on the benchmarks' hermes prose input, cut as they
// cut it, every call after the first goes through the quick cycle, those
// after prose that stopped it ("\n\nHere", a turn marker's first bytes)
// included, with the general path's events.
func TestQuickBenchProse(t *testing.T) {
	for _, in := range tokenBenchInputs(t) {
		if in.name != "hermes/prose" {
			continue
		}
		opts := Options{Tools: in.tools}
		want := general(t, "hermes", opts, in.text, 0)
		calls := countCalls(want)
		for _, cut := range [][]string{cutPieces(in.text, loadPieces(t, "qwen2")), chunksOf(in.text, 4)} {
			got, quick := quickRunChunks(t, "hermes", opts, cut)
			if d := cmp.Diff(want, got); d != "" {
				t.Fatalf("in %d chunks (-general +quick):\n%s", len(cut), d)
			}
			if quick != calls-1 {
				t.Errorf("in %d chunks: %d of %d calls through the quick cycle, want %d", len(cut), quick, calls, calls-1)
			}
		}
	}
}

// TestQuickLargeChunk: fed call-dense output in one chunk, quick takes no
// more of it into the block than a call (each call reading the rest of
// the chunk would make the cost quadratic).
func TestQuickLargeChunk(t *testing.T) {
	largeChunkStaysSmall(t, "hermes", func(p *Parser) int { return p.quickCalls })
}

// largeChunkStaysSmall feeds format's call-dense benchmark input in one
// chunk: the block buffer stays the size of a call, and cycleCalls (the
// calls through the format's quick cycle) are all but the first.
func largeChunkStaysSmall(t *testing.T, format string, cycleCalls func(*Parser) int) {
	t.Helper()
	p, err := New(format, Options{Tools: mustTools(denseTools)})
	if err != nil {
		t.Fatal(err)
	}
	calls := 0
	p.Feed(denseInput(format), func(e Event) {
		if e.Type == EventCall {
			calls++
		}
	})
	if c := cap(p.b.buf); c > 4<<10 {
		t.Errorf("block buffer grew to %d bytes for calls of about 150 to 200", c)
	}
	if quick := cycleCalls(p); quick != denseCalls-1 || calls != denseCalls {
		t.Errorf("%d calls, %d through the quick cycle; want %d and %d", calls, quick, denseCalls, denseCalls-1)
	}
}

// TestCallStartInsideValue: a name after the call object's end is not the
// call's, in any chunking (streaming once sent a call start named from
// it); nor does a name after the arguments change the events.
func TestCallStartInsideValue(t *testing.T) {
	for _, in := range []string{
		"<tool_call>\n{}\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>\n",
		"<tool_call>\n{\"arguments\": {\"city\": \"Paris\"}, \"name\": \"get_weather\"}\n</tool_call>\n",
	} {
		for _, opts := range []Options{{Tools: testTools}, {}} {
			want := general(t, "hermes", opts, in, 0)
			for n := 1; n <= 7; n++ {
				if d := cmp.Diff(want, general(t, "hermes", opts, in, n)); d != "" {
					t.Fatalf("%q in chunks of %d (-whole +chunked):\n%s", in, n, d)
				}
			}
		}
	}
}

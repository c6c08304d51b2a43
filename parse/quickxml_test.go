package parse

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// qxCall is a call in the framing the qwen3-coder cycle learns.
func qxCall(name string, params ...string) string {
	s := "<tool_call>\n<function=" + name + ">\n"
	for i := 0; i+1 < len(params); i += 2 {
		s += "<parameter=" + params[i] + ">\n" + params[i+1] + "\n</parameter>\n"
	}
	return s + "</function>\n</tool_call>"
}

// qxBase is three calls back to back: the first teaches the cycle the
// framing, the other two go through it.
var qxBase = qxCall("read_file", "path", "a.go", "limit", "5") + "\n" +
	qxCall("get_weather", "city", "Paris") + "\n" +
	qxCall("read_file", "path", "b.go") + "\n"

// qxRun parses in chunks of n (0: whole) and reports how many calls the
// cycle finished.
func qxRun(t *testing.T, format string, opts Options, in string, n int) ([]Event, int) {
	t.Helper()
	p, err := New(format, opts)
	if err != nil {
		t.Fatal(err)
	}
	var evs []Event
	emit := func(e Event) { evs = append(evs, e) }
	for _, c := range chunked(in, n) {
		p.Feed(c, emit)
	}
	calls := p.qx.calls
	p.Close(emit)
	return merged(evs), calls
}

// TestQuickXMLCycle: on call-dense qwen3-coder output the calls after the
// first go through the cycle, with the events the general path gives.
func TestQuickXMLCycle(t *testing.T) {
	cycleMatchesGeneral(t, []string{"qwen3-coder", "auto"}, qxBase, qxRun)
}

// TestQuickXMLMatchesGeneral changes the second and third calls of qxBase
// at every byte (another byte in its place, the byte left out, a byte put
// before it): wherever the input leaves the learned framing, the cycle
// hands over to the general path, and the events in every chunking are
// those the general path gives the whole input.
func TestQuickXMLMatchesGeneral(t *testing.T) {
	from := len(qxCall("read_file", "path", "a.go", "limit", "5"))
	to := from + len(qxCall("get_weather", "city", "Paris")) + 2
	edits := []string{"", " ", "\n", "<", ">", "/", "x", "</tool_call>", "<tool_call>", "\nHuman:"}
	for _, c := range []struct {
		format string
		opts   Options
	}{
		{"qwen3-coder", Options{Tools: testTools}}, {"qwen3-coder", Options{}},
		{"qwen3-coder", Options{Tools: testTools, Strict: true}}, {"auto", Options{Tools: testTools}},
	} {
		everyEditMatchesGeneral(t, c.format, c.opts, qxBase, from, to, edits, qxRun)
	}
}

// TestQuickXMLStopsAtEveryEnd: a stream cut anywhere in a cycle's call
// ends as the general path ends it.
func TestQuickXMLStopsAtEveryEnd(t *testing.T) {
	cutsMatchGeneral(t, "qwen3-coder", qxBase, qxRun)
}

// TestQuickXMLBenchInputs: the benchmarks' qwen3-coder inputs, cut as the
// benchmarks cut them, go through the cycle after their first call, with
// the general path's events.
func TestQuickXMLBenchInputs(t *testing.T) {
	for _, in := range tokenBenchInputs(t) {
		if in.ours != "qwen3-coder" {
			continue
		}
		opts := Options{Tools: in.tools}
		calls := strings.Count(in.text, "<tool_call>")
		for _, cut := range [][]string{cutPieces(in.text, loadPieces(t, "qwen2")), chunksOf(in.text, 4), {in.text}} {
			want := general(t, "qwen3-coder", opts, in.text, 0)
			p, err := New("qwen3-coder", opts)
			if err != nil {
				t.Fatal(err)
			}
			p.noQuick = false
			var evs []Event
			emit := func(e Event) { evs = append(evs, e) }
			for _, c := range cut {
				p.Feed(c, emit)
			}
			quick := p.qx.calls
			p.Close(emit)
			if d := cmp.Diff(want, merged(evs)); d != "" {
				t.Fatalf("%s in %d chunks (-general +quick):\n%s", in.name, len(cut), d)
			}
			if countCalls(want) != calls || quick != calls-1 {
				t.Fatalf("%s in %d chunks: %d calls, %d through the cycle; want %d and %d", in.name, len(cut), countCalls(want), quick, calls, calls-1)
			}
		}
	}
}

// TestQuickXMLLargeChunk: fed call-dense output in one chunk, the cycle
// takes no more of it into the block than a call (each call reading the
// rest of the chunk would make the cost quadratic).
func TestQuickXMLLargeChunk(t *testing.T) {
	largeChunkStaysSmall(t, "qwen3-coder", func(p *Parser) int { return p.qx.calls })
}

package parse

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/toolharness/toolharness/chat"
)

// thinkMarkers is the reference for the reasoning blocks a format's
// parser splits off (the first: the one ThinkOpen means), written apart
// from the parser's own table.
func thinkMarkers(format string) [][2]string {
	think := [2]string{"<think>", "</think>"}
	seed := [2]string{"<seed:think>", "</seed:think>"}
	mistral := [2]string{"[THINK]", "[/THINK]"}
	switch format {
	case "seed-oss":
		return [][2]string{seed, think}
	case "mistral":
		return [][2]string{think, mistral}
	case "auto":
		return [][2]string{think, seed, mistral}
	}
	return [][2]string{think}
}

// reasoningEnd is the reference for where a leading reasoning block ends
// (0: there is none), written independently of the streaming code.
func reasoningEnd(text string, opened bool, pairs [][2]string) int {
	start, close := 0, pairs[0][1]
	if !opened {
		trimmed := strings.TrimLeft(text, " \t\r\n")
		i := slices.IndexFunc(pairs, func(p [2]string) bool { return strings.HasPrefix(trimmed, p[0]) })
		if i < 0 {
			return 0
		}
		start, close = len(text)-len(trimmed)+len(pairs[i][0]), pairs[i][1]
	}
	i := strings.Index(text[start:], close)
	if i < 0 {
		return len(text)
	}
	return start + i + len(close)
}

// checkReasoning asserts that no call, call start or error lies inside
// the leading reasoning block.
func checkReasoning(t testing.TB, evs []Event, text string, opened bool, pairs [][2]string) {
	t.Helper()
	end := reasoningEnd(text, opened, pairs)
	for _, e := range evs {
		switch e.Type {
		case EventCall, EventCallStart:
			if e.Call.Offset < end {
				t.Fatalf("call %s at offset %d inside the reasoning block [0,%d)", e.Call.Name, e.Call.Offset, end)
			}
		case EventError:
			if e.Err.Offset < end {
				t.Fatalf("%s error at offset %d inside the reasoning block [0,%d)", e.Err.Kind, e.Err.Offset, end)
			}
		}
	}
}

// checkParts asserts that the leading reasoning block is reasoning and
// framing, and that nothing of it is content.
func checkParts(t testing.TB, evs []Event, text string, opened bool, pairs [][2]string) {
	t.Helper()
	end := reasoningEnd(text, opened, pairs)
	start := 0
	if !opened {
		start = len(text) - len(strings.TrimLeft(text, " \t\r\n"))
	}
	textSpans(evs, func(e Event, at int) {
		if e.Part == PartContent && at < end && at+len(e.Text) > start {
			t.Fatalf("content %q at %d inside the reasoning block [%d,%d)", e.Text, at, start, end)
		}
	})
}

// checkNoCallInReasoning asserts that no call or block error follows
// reasoning text directly (with no content or framing between) unless
// it is a harmony header's: reasoning is never scanned for calls, and
// only gpt-oss's header tokens end its analysis message and open a call.
func checkNoCallInReasoning(t testing.TB, evs []Event) {
	t.Helper()
	after := ""
	for _, e := range evs {
		raw := ""
		switch e.Type {
		case EventText:
			after = ""
			if e.Part == PartReasoning {
				after = e.Text
			}
			continue
		case EventCall:
			raw = e.Call.Raw
		case EventError:
			raw = e.Err.Raw
		}
		if after != "" && raw != "" && !strings.HasPrefix(raw, "<|start|>") && !strings.HasPrefix(raw, "<|channel|>") {
			t.Fatalf("%s %q right after the reasoning %q", e.Type, raw, after)
		}
		if raw != "" {
			// What follows a block follows the block, not the reasoning.
			after = ""
		}
	}
}

func TestReasoningIsNeverScanned(t *testing.T) {
	const quoted = `I will call {"name": "get_weather", "arguments": {"city": "London"}} or <tool_call>{"name": "read_file", "arguments": {"path": "x"}}</tool_call>.`
	cases := []struct {
		name      string
		format    string
		thinkOpen bool
		tools     []chat.Tool
		in        string
		want      view
	}{
		{"quoted calls in reasoning, real call after", "auto", false, testTools,
			"<think>\n" + quoted + "\n</think>\n\n<tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Antwerp\"}}</tool_call>",
			view{Content: "<think>\n" + quoted + "\n</think>\n\n", Calls: []string{`get_weather{"city":"Antwerp"}`}}},
		{"leading whitespace before the block", "hermes", false, testTools,
			"\n \t<think>" + quoted + "</think>done",
			view{Content: "\n \t<think>" + quoted + "</think>done"}},
		{"every format skips it", "json", false, nil,
			"<think>{\"name\": \"a\", \"parameters\": {}}</think>{\"name\": \"b\", \"parameters\": {}}",
			view{Content: "<think>{\"name\": \"a\", \"parameters\": {}}</think>", Calls: []string{`b{}`}}},
		{"xml", "xml", true, nil,
			`<think><function_calls><invoke name="a"></invoke></function_calls></think><function_calls><invoke name="b"></invoke></function_calls>`,
			view{Content: `<think><function_calls><invoke name="a"></invoke></function_calls></think>`, Calls: []string{`b{}`}}},
		{"unclosed reasoning is all content", "auto", false, nil,
			"<think>" + quoted,
			view{Content: "<think>" + quoted}},
		{"a block later in the answer is prose", "auto", false, nil,
			"Answer: <think>" + quoted + "</think>",
			view{Content: "Answer: <think>I will call  or .</think>", Calls: []string{`get_weather{"city":"London"}`, `read_file{"path":"x"}`}}},
		{"not a think tag", "hermes", false, nil,
			"<thinking><tool_call>{\"name\": \"a\", \"arguments\": {}}</tool_call>",
			view{Content: "<thinking>", Calls: []string{`a{}`}}},
		{"a partial open tag at the end", "hermes", false, nil, "  <thin", view{Content: "  <thin"}},
		{"think open: bare closer ends reasoning", "hermes", true, nil,
			quoted + "\n</think>\n<tool_call>{\"name\": \"b\", \"arguments\": {}}</tool_call>",
			view{Content: quoted + "\n</think>\n", Calls: []string{`b{}`}}},
		{"think open: no closer, all reasoning", "auto", true, nil, quoted, view{Content: quoted}},
		{"think open: partial closer at the end", "auto", true, nil, "hmm </thi", view{Content: "hmm </thi"}},
		{"without think open a bare closer is text", "hermes", false, nil,
			"plan </think><tool_call>{\"name\": \"b\", \"arguments\": {}}</tool_call>",
			view{Content: "plan </think>", Calls: []string{`b{}`}}},
		{"a tool named think is a tag call", "tags", false, mustTools(`[{"name":"think","parameters":{"type":"object","properties":{"thought":{"type":"string"}}}}]`),
			"<think><thought>plan</thought></think>",
			view{Calls: []string{`think{"thought":"plan"}`}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, strict := range []bool{false, true} {
				opts := Options{Tools: c.tools, Strict: strict, ThinkOpen: c.thinkOpen}
				r, err := String(c.format, c.in, opts)
				if err != nil {
					t.Fatal(err)
				}
				got := viewOf(r)
				if strict && len(c.want.Calls) > 0 && len(got.Calls) == 0 {
					continue // the call itself may need a repair
				}
				if d := cmp.Diff(c.want, got); d != "" {
					t.Errorf("strict=%v %q (-want +got):\n%s", strict, c.in, d)
				}
				whole := merged(collect(t, c.format, opts, []string{c.in}))
				if got := reconstruct(whole); got != c.in {
					t.Errorf("reconstructed text differs:\n%s", cmp.Diff(c.in, got))
				}
				if c.format != "tags" {
					checkReasoning(t, whole, c.in, c.thinkOpen, thinkMarkers(c.format))
					checkParts(t, whole, c.in, c.thinkOpen, thinkMarkers(c.format))
					checkNoCallInReasoning(t, whole)
				}
				for size := 1; size <= 9; size++ {
					if d := cmp.Diff(whole, merged(collect(t, c.format, opts, chunksOf(c.in, size)))); d != "" {
						t.Fatalf("strict=%v chunks of %d differ (-whole +chunked):\n%s", strict, size, d)
					}
				}
			}
		})
	}
}

// TestReasoningStreamsWithSmallHoldback checks that reasoning is emitted
// as it arrives, holding back only a possible </think>, and that offsets
// of what follows count the reasoning bytes.
func TestReasoningStreamsWithSmallHoldback(t *testing.T) {
	p, err := New("auto", Options{})
	if err != nil {
		t.Fatal(err)
	}
	var evs []Event
	emit := func(e Event) { evs = append(evs, e) }
	p.Feed("\n<thi", emit)
	p.Feed("nk>let me call {\"name\": \"x\"} </th", emit)
	if got := reconstruct(evs); got != "\n<think>let me call {\"name\": \"x\"} " {
		t.Fatalf("streamed reasoning %q", got)
	}
	p.Feed("ink><tool_call>{\"name\": \"y\", \"arguments\": {}}</tool_call>", emit)
	p.Close(emit)
	var calls []chat.ToolCall
	for _, e := range evs {
		if e.Type == EventCall {
			calls = append(calls, e.Call)
		}
	}
	if len(calls) != 1 || calls[0].Name != "y" || calls[0].Offset != len("\n<think>let me call {\"name\": \"x\"} </think>") {
		t.Fatalf("calls %+v", calls)
	}
	// The parser is reset for the next turn: a reasoning block may open again.
	evs = nil
	p.Feed("<think>{\"name\": \"z\", \"arguments\": {}}</think>", emit)
	p.Close(emit)
	if d := cmp.Diff([]string{"framing:<think>", `reasoning:{"name": "z", "arguments": {}}`, "framing:</think>"}, partsView(evs)); d != "" {
		t.Fatalf("second turn (-want +got):\n%s", d)
	}
}

// TestCorpusReasoningQuotesAreNotCalls: smollm3 quotes the call it will
// make inside its reasoning; only the call after </think> counts.
func TestCorpusReasoningQuotesAreNotCalls(t *testing.T) {
	n := 0
	for _, r := range loadCorpus(t) {
		if !strings.Contains(r.Raw, "</think>") {
			continue
		}
		n++
		res, err := String("auto", r.Raw, Options{Tools: corpusTools(t, r.File)})
		if err != nil {
			t.Fatal(err)
		}
		end := reasoningEnd(r.Raw, false, thinkMarkers("auto"))
		for _, c := range res.Calls {
			if c.Offset < end {
				t.Errorf("%s line %d: call %s at %d inside reasoning ending at %d", r.File, r.Line, c.Name, c.Offset, end)
			}
		}
	}
	if n == 0 {
		t.Fatal("no corpus record with a reasoning block; the corpus copy in testdata/corpus is incomplete")
	}
}

// TestNoAllocPerChunkInReasoning: streaming reasoning allocates nothing.
func TestNoAllocPerChunkInReasoning(t *testing.T) {
	in := benchInput(t, "prose", 16<<10)
	chunks := chunksOf(in, 4)
	for _, format := range Formats() {
		p, err := New(format, Options{Tools: testTools, ThinkOpen: true})
		if err != nil {
			t.Fatal(err)
		}
		emit := func(Event) {}
		p.Feed(in, emit)
		if p.rs != rsIn {
			t.Fatalf("%s: not in the reasoning block after prose", format)
		}
		allocs := testing.AllocsPerRun(5, func() {
			for _, c := range chunks {
				p.Feed(c, emit)
			}
		})
		if allocs != 0 {
			t.Errorf("%s: %.0f allocations feeding %d reasoning chunks", format, allocs, len(chunks))
		}
	}
}

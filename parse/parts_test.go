package parse

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// partsView shows a turn's events as "part:text" (text merged by part),
// "call:name" and "error:kind".
func partsView(evs []Event) []string {
	var out []string
	for _, e := range merged(evs) {
		switch e.Type {
		case EventText:
			out = append(out, e.Part.String()+":"+e.Text)
		case EventCall:
			out = append(out, "call:"+e.Call.Name)
		case EventError:
			out = append(out, "error:"+string(e.Err.Kind))
		}
	}
	return out
}

// harmonyTokens are the framing markers that must reach a consumer in
// one piece.
var harmonyTokens = []string{"<|start|>", "<|channel|>", "<|message|>", "<|end|>", "<|return|>", "<|call|>", "<think>", "</think>",
	"<seed:think>", "</seed:think>", "[THINK]", "[/THINK]"}

// textSpans walks the events' bytes: f gets each text event with where
// it starts in the turn's text.
func textSpans(evs []Event, f func(e Event, at int)) {
	off, lastCall := 0, -1
	for _, e := range evs {
		switch {
		case e.Type == EventText:
			f(e, off)
			off += len(e.Text)
		case e.Type == EventCall && e.Call.Offset != lastCall:
			off += len(e.Call.Raw)
			lastCall = e.Call.Offset
		case e.Type == EventError && e.Err.Raw != "" && e.Err.Offset != lastCall:
			off += len(e.Err.Raw)
			lastCall = e.Err.Offset
		}
	}
}

// splitMarker returns a marker the one-shot events (whole) give as
// framing that a text event boundary of evs cuts in two, or "".
func splitMarker(evs, whole []Event) string {
	cuts := map[int]bool{}
	textSpans(evs, func(e Event, at int) { cuts[at], cuts[at+len(e.Text)] = true, true })
	var found string
	textSpans(merged(whole), func(e Event, at int) {
		if e.Part != PartFraming {
			return
		}
		for _, m := range harmonyTokens {
			for i := 0; ; {
				k := strings.Index(e.Text[i:], m)
				if k < 0 {
					break
				}
				for c := at + i + k + 1; c < at+i+k+len(m); c++ {
					if cuts[c] && found == "" {
						found = m
					}
				}
				i += k + len(m)
			}
		}
	})
	return found
}

// partCase is a reply run in each of formats, strict and lenient, with
// the catalog testTools; want is its events as partsView shows them.
type partCase struct {
	name      string
	formats   []string
	thinkOpen bool
	in        string
	want      []string
}

func allPartCases() []partCase { return append(slices.Clip(partCases), reasoningPartCases...) }

var partCases = []partCase{
	// Reasoning blocks, in every format.
	{"think block", Formats(), false, "<think>plan</think>\nIt is 3.",
		[]string{"framing:<think>", "reasoning:plan", "framing:</think>", "content:\nIt is 3."}},
	{"whitespace before the block is content", Formats(), false, "\n <think>a</think>b",
		[]string{"content:\n ", "framing:<think>", "reasoning:a", "framing:</think>", "content:b"}},
	{"think open", slices.DeleteFunc(Formats(), func(f string) bool { return f == "seed-oss" }), true, "plan</think>It is 3.",
		[]string{"reasoning:plan", "framing:</think>", "content:It is 3."}},
	{"unclosed block is reasoning", Formats(), false, "<think>plan",
		[]string{"framing:<think>", "reasoning:plan"}},
	{"a partial closer at the end is reasoning", Formats(), false, "<think>a </thi",
		[]string{"framing:<think>", "reasoning:a </thi"}},
	{"a closer's prefix inside the block is reasoning", Formats(), false, "<think>a </th b</think>c",
		[]string{"framing:<think>", "reasoning:a </th b", "framing:</think>", "content:c"}},
	{"a later block is prose", []string{"hermes", "auto"}, false, "Answer: <think>x</think>",
		[]string{"content:Answer: <think>x</think>"}},
	{"reasoning then a call", []string{"hermes", "auto"}, false,
		"<think>quote <tool_call>{\"name\": \"a\"}</tool_call></think>\n<tool_call>{\"name\": \"read_file\", \"arguments\": {\"path\": \"x\"}}</tool_call>",
		[]string{"framing:<think>", "reasoning:quote <tool_call>{\"name\": \"a\"}</tool_call>", "framing:</think>", "content:\n", "call:read_file"}},

	// Harmony (gpt-oss).
	{"harmony analysis then final", []string{"harmony", "auto"}, false,
		`<|channel|>analysis<|message|>Adding.<|end|><|start|>assistant<|channel|>final<|message|>It is 3.<|return|>`,
		[]string{"framing:<|channel|>analysis<|message|>", "reasoning:Adding.",
			"framing:<|end|><|start|>assistant<|channel|>final<|message|>", "content:It is 3.", "framing:<|return|>"}},
	{"harmony final only", []string{"harmony", "auto"}, false, `<|channel|>final<|message|>It is 3.<|return|>`,
		[]string{"framing:<|channel|>final<|message|>", "content:It is 3.", "framing:<|return|>"}},
	{"harmony commentary preamble then a call", []string{"harmony", "auto"}, false,
		`<|channel|>commentary<|message|>Checking the weather.<|end|><|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{"city": "Paris"}<|call|>`,
		[]string{"framing:<|channel|>commentary<|message|>", "content:Checking the weather.", "framing:<|end|>", "call:get_weather"}},
	{"harmony analysis then a call", []string{"harmony", "auto"}, false,
		`<|channel|>analysis<|message|>Need weather.<|end|><|start|>assistant to=functions.get_weather<|channel|>commentary json<|message|>{"city": "Paris"}<|call|>`,
		[]string{"framing:<|channel|>analysis<|message|>", "reasoning:Need weather.", "framing:<|end|>", "call:get_weather"}},
	{"harmony truncated mid-analysis", []string{"harmony", "auto"}, false, `<|channel|>analysis<|message|>Let me thi`,
		[]string{"framing:<|channel|>analysis<|message|>", "reasoning:Let me thi"}},
	{"harmony truncated mid-header", []string{"harmony", "auto"}, false, `<|channel|>analy`,
		[]string{"framing:<|channel|>analy"}},
	{"harmony message without a channel", []string{"harmony", "auto"}, false, `<|start|>assistant<|message|>Hi.<|end|>`,
		[]string{"framing:<|start|>assistant<|message|>", "content:Hi.", "framing:<|end|>"}},
	{"harmony header with more than the channel", []string{"harmony", "auto"}, false, `<|channel|>analysis json<|message|>x<|end|>`,
		[]string{"framing:<|channel|>analysis json<|message|>", "reasoning:x", "framing:<|end|>"}},
	{"harmony analysis cut off by a new header", []string{"harmony", "auto"}, false,
		`<|channel|>analysis<|message|>a<|channel|>final<|message|>b`,
		[]string{"framing:<|channel|>analysis<|message|>", "reasoning:a", "framing:<|channel|>final<|message|>", "content:b"}},
	{"harmony prose without markers is content", []string{"harmony", "auto"}, false, "It is 3.", []string{"content:It is 3."}},
	{"a harmony marker without a header is framing, then text", []string{"harmony", "auto"}, false,
		"<|channel|>" + strings.Repeat("prose ", 100),
		[]string{"framing:<|channel|>", "content:" + strings.Repeat("prose ", 100)}},
	{"harmony in another format is content", []string{"hermes", "xml"}, false,
		`<|channel|>analysis<|message|>Adding.<|end|>`, []string{"content:<|channel|>analysis<|message|>Adding.<|end|>"}},
	{"harmony after a reasoning block", []string{"harmony", "auto"}, false,
		`<think>t</think><|channel|>final<|message|>f`,
		[]string{"framing:<think>", "reasoning:t", "framing:</think><|channel|>final<|message|>", "content:f"}},
}

// TestParts: text events say which part of the reply they are, for every
// chunking, with every byte kept and no marker cut in two.
func TestParts(t *testing.T) {
	for _, c := range allPartCases() {
		for _, format := range c.formats {
			t.Run(c.name+"/"+format, func(t *testing.T) {
				for _, strict := range []bool{false, true} {
					opts := Options{Tools: testTools, Strict: strict, ThinkOpen: c.thinkOpen}
					evs := collect(t, format, opts, []string{c.in})
					if got := reconstruct(evs); got != c.in {
						t.Fatalf("bytes lost or added:\n%s", cmp.Diff(c.in, got))
					}
					if d := cmp.Diff(c.want, partsView(evs)); d != "" {
						t.Fatalf("strict=%v parts (-want +got):\n%s", strict, d)
					}
					checkNoCallInReasoning(t, merged(evs))
					var answer strings.Builder
					for _, w := range c.want {
						if s, ok := strings.CutPrefix(w, "content:"); ok {
							answer.WriteString(s)
						}
					}
					if got := Answer(evs); got != answer.String() {
						t.Errorf("answer %q, want %q", got, answer.String())
					}
					if r, _ := String(format, c.in, opts); r.Answer != answer.String() || r.Reasoning != Reasoning(evs) || r.Content != reconstructText(evs) {
						t.Errorf("String: answer %q, reasoning %q, content %q", r.Answer, r.Reasoning, r.Content)
					}
					for n := 1; n <= 7; n++ {
						chunked := collect(t, format, opts, chunked(c.in, n))
						if d := cmp.Diff(merged(evs), merged(chunked)); d != "" {
							t.Fatalf("chunks of %d differ (-whole +chunked):\n%s", n, d)
						}
						if m := splitMarker(chunked, evs); m != "" {
							t.Errorf("chunks of %d: %s split across text events", n, m)
						}
					}
				}
			})
		}
	}
}

// reconstructText is the text of the events, whatever its part.
func reconstructText(evs []Event) string {
	var b strings.Builder
	for _, e := range evs {
		if e.Type == EventText {
			b.WriteString(e.Text)
		}
	}
	return b.String()
}

// TestPartsCoalesced: a run of markers that each frame is a few events,
// as a run of rejected brackets is.
func TestPartsCoalesced(t *testing.T) {
	for _, format := range []string{"harmony", "auto"} {
		for _, m := range []string{"<|end|>", "<|channel|>", "<|start|>", "<|return|><|call|>"} {
			in := strings.Repeat(m, 1<<18/len(m))
			for _, chunk := range []int{0, 4096} {
				evs := collect(t, format, Options{}, chunked(in, chunk))
				if got := reconstruct(evs); got != in {
					t.Fatalf("%s %q: bytes lost or added", format, m)
				}
				limit := 8
				if chunk > 0 {
					limit += 2 * len(in) / chunk
				}
				if len(evs) > limit {
					t.Errorf("%s: %d events for 256 KB of %q in chunks of %d", format, len(evs), m, chunk)
				}
			}
		}
	}
}

func TestPartJSON(t *testing.T) {
	type line struct {
		Part Part `json:"part,omitempty"`
	}
	for _, c := range []struct {
		part Part
		json string
	}{{PartContent, `{}`}, {PartReasoning, `{"part":"reasoning"}`}, {PartFraming, `{"part":"framing"}`}} {
		b, err := json.Marshal(line{c.part})
		if err != nil || string(b) != c.json {
			t.Errorf("%v: %s %v, want %s", c.part, b, err, c.json)
		}
		var back line
		if err := json.Unmarshal(b, &back); err != nil || back.Part != c.part {
			t.Errorf("%s read back as %v (%v)", b, back.Part, err)
		}
	}
	var p Part
	if err := p.UnmarshalText([]byte("thinking")); err == nil || !strings.HasPrefix(err.Error(), "parse: ") {
		t.Errorf("unknown part: %v", err)
	}
	if _, err := Part(9).MarshalText(); err == nil {
		t.Error("part 9 marshalled")
	}
}

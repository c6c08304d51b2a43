package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/toolharness/toolharness/parse"
)

const parseToolsFixture = `[{"type":"function","function":{"name":"read_file","parameters":{"type":"object","properties":{"path":{"type":"string"},"limit":{"type":"integer"}}}}}]`

func TestParseStream(t *testing.T) {
	tools := writeFile(t, "tools.json", parseToolsFixture)
	in := `Reading.<tool_call>{"name": "read_file", "arguments": {"path": "a.txt"}}</tool_call>` +
		`<tool_call>{"name": "rm", "arguments": {}}</tool_call><tool_call>{"name": "read_file", "arguments": {`
	out, stderr, code := runCLI(t, in, "parse", "--format", "hermes", "--tools", tools)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	want := []string{
		`{"type":"text","text":"Reading."}`,
		`{"type":"call_start","id":"call_0","name":"read_file","offset":8}`,
		`{"type":"call","id":"call_0","name":"read_file","arguments":{"path":"a.txt"},"repairs":[],"offset":8}`,
		`{"type":"call_start","id":"call_1","name":"rm","offset":84}`,
		`{"type":"call","id":"call_1","name":"rm","arguments":{},"repairs":[],"offset":84,"error":{"kind":"unknown_tool","offset":84,"message":"unknown tool \"rm\"; available: read_file"}}`,
		`{"type":"call_start","id":"call_2","name":"read_file","offset":138}`,
		`{"type":"error","kind":"truncated","offset":138,"message":"output ended inside <tool_call>; finish the call and close it with </tool_call>"}`,
	}
	if d := cmp.Diff(want, strings.Split(strings.TrimSpace(out), "\n")); d != "" {
		t.Fatalf("(-want +got):\n%s", d)
	}
}

// TestParseParts: each text event says its part; the answer's carry none,
// so output without reasoning is as it always was.
func TestParseParts(t *testing.T) {
	in := `<|channel|>analysis<|message|>Adding.<|end|><|start|>assistant<|channel|>final<|message|>It is 3.<|return|>`
	want := []string{
		`{"type":"text","text":"<|channel|>analysis<|message|>","part":"framing"}`,
		`{"type":"text","text":"Adding.","part":"reasoning"}`,
		`{"type":"text","text":"<|end|><|start|>assistant<|channel|>final<|message|>","part":"framing"}`,
		`{"type":"text","text":"It is 3."}`,
		`{"type":"text","text":"<|return|>","part":"framing"}`,
	}
	for _, format := range []string{"harmony", "auto"} {
		out, stderr, code := runCLI(t, in, "parse", "--format", format)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		if d := cmp.Diff(want, strings.Split(strings.TrimSpace(out), "\n")); d != "" {
			t.Errorf("%s (-want +got):\n%s", format, d)
		}
	}
	out, stderr, code := runCLI(t, "<think>plan</think>It is 3.", "parse", "--format", "hermes", "--chunk", "2")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	want = []string{"framing:<think>", "reasoning:plan", "framing:</think>", "content:It is 3."}
	if d := cmp.Diff(want, mergeTextLines(t, out)); d != "" {
		t.Errorf("think (-want +got):\n%s", d)
	}
}

// TestParseChunked checks that --chunk gives the same events, text apart.
func TestParseChunked(t *testing.T) {
	in := "héllo [get_weather(city=\"Zürich\")] and <tool_call>{'name': 'x', 'arguments': {'a': True}}</tool_call> done"
	whole, _, code := runCLI(t, in, "parse", "--format", "auto")
	if code != 0 {
		t.Fatal("exit", code)
	}
	for _, n := range []string{"1", "3", "4"} {
		chunked, _, code := runCLI(t, in, "parse", "--format", "auto", "--chunk", n)
		if code != 0 {
			t.Fatal("exit", code)
		}
		if d := cmp.Diff(mergeTextLines(t, whole), mergeTextLines(t, chunked)); d != "" {
			t.Fatalf("--chunk %s (-whole +chunked):\n%s", n, d)
		}
	}
}

// mergeTextLines is the output's lines with the text of one part merged,
// as "part:text".
func mergeTextLines(t *testing.T, out string) []string {
	t.Helper()
	var lines []string
	var text strings.Builder
	part := parse.PartContent
	flush := func() {
		if text.Len() > 0 {
			lines = append(lines, part.String()+":"+text.String())
			text.Reset()
		}
	}
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var ev struct {
			Type string     `json:"type"`
			Text string     `json:"text"`
			Part parse.Part `json:"part"`
		}
		if err := json.Unmarshal([]byte(l), &ev); err != nil {
			t.Fatalf("bad line %q: %v", l, err)
		}
		if ev.Type == "text" {
			if ev.Part != part {
				flush()
				part = ev.Part
			}
			text.WriteString(ev.Text)
			continue
		}
		flush()
		lines = append(lines, l)
	}
	flush()
	return lines
}

func TestParseBatch(t *testing.T) {
	tools := writeFile(t, "tools.json", parseToolsFixture)
	in := strings.Join([]string{
		`{"id": 1, "raw": "Hi <tool_call>{\"name\": \"read_file\", \"arguments\": {\"path\": \"a\"}}</tool_call> bye", "model": "ignored"}`,
		`{"id": "b", "raw": "<tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"X\"}}</tool_call>", "tools": [{"name": "get_weather", "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}}}]}`,
		`{"id": "c", "raw": "<tool_call>{\"name\": \"nope\", \"arguments\": {}}</tool_call><tool_call>{\"name\": "}`,
		`not json at all`,
		`{"id": "d"}`,
		``,
		`{"id": "e", "raw": "{\"name\": \"read_file\", \"arguments\": \"{\\\"path\\\": 1}\"}"}`,
	}, "\n")
	out, stderr, code := runCLI(t, in, "parse", "--format", "hermes", "--jsonl", "--tools", tools)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	want := []string{
		`{"id":1,"calls":[{"id":"call_0","name":"read_file","arguments":{"path":"a"},"repairs":[]}],"content":"Hi  bye","errors":[]}`,
		`{"id":"b","calls":[{"id":"call_0","name":"get_weather","arguments":{"city":"X"},"repairs":[]}],"content":"","errors":[]}`,
		`{"id":"c","calls":[{"id":"call_0","name":"nope","arguments":{},"repairs":[],"error":{"kind":"unknown_tool","message":"unknown tool \"nope\"; available: read_file"}}],"content":"","errors":[{"kind":"truncated","offset":56,"message":"output ended inside <tool_call>; finish the call and close it with </tool_call>"}]}`,
		`{"id":null,"calls":[],"content":"","errors":[{"kind":"input","message":"line 4: not a JSON record: invalid character 'o' in literal null (expecting 'u')"}]}`,
		`{"id":"d","calls":[],"content":"","errors":[{"kind":"input","message":"line 5: missing \"raw\""}]}`,
		`{"id":"e","calls":[{"id":"call_0","name":"read_file","arguments":{"path":1},"repairs":["missing_open_tag","arguments_string"]}],"content":"","errors":[]}`,
	}
	if d := cmp.Diff(want, strings.Split(strings.TrimSpace(out), "\n")); d != "" {
		t.Fatalf("(-want +got):\n%s", d)
	}
}

// batchInput generates n records from a few real-looking outputs.
func batchInput(n int) string {
	raws := []string{
		`<tool_call>{"name": "read_file", "arguments": {"path": "a.txt"}}</tool_call>`,
		"```json\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"b\"}}\n```",
		`I can't do that, but here is some prose about the weather in Antwerp.`,
		`<tool_call>{"name": "read_file", "pattern": "*.py"}`,
	}
	var b strings.Builder
	for i := range n {
		raw, _ := json.Marshal(raws[i%len(raws)])
		fmt.Fprintf(&b, `{"id": %d, "raw": %s}`+"\n", i, raw)
	}
	return b.String()
}

// TestParseBatchLarge runs 50,000 records and checks that every one gets
// its output line, in order.
func TestParseBatchLarge(t *testing.T) {
	const n = 50000
	var out strings.Builder
	opts := parse.Options{}
	if err := parseBatch(strings.NewReader(batchInput(n)), &out, formatParsers("hermes"), opts); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(strings.NewReader(out.String()))
	i := 0
	for ; sc.Scan(); i++ {
		var rec struct {
			ID    int               `json:"id"`
			Calls []json.RawMessage `json:"calls"`
		}
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil || rec.ID != i {
			t.Fatalf("line %d: %s (%v)", i, sc.Text(), err)
		}
		if wantCalls := map[int]int{0: 1, 1: 1, 2: 0, 3: 1}[i%4]; len(rec.Calls) != wantCalls {
			t.Fatalf("line %d: %d calls, want %d", i, len(rec.Calls), wantCalls)
		}
	}
	if i != n {
		t.Fatalf("%d output lines for %d records", i, n)
	}
}

// BenchmarkParseBatch50k measures --jsonl on 50,000 records.
func BenchmarkParseBatch50k(b *testing.B) {
	in := batchInput(50000)
	b.SetBytes(int64(len(in)))
	for range b.N {
		if err := parseBatch(strings.NewReader(in), io.Discard, formatParsers("auto"), parse.Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

func TestParseHelpAndBadFormat(t *testing.T) {
	out, _, code := runCLI(t, "", "parse", "--help")
	if code != 0 || !strings.Contains(out, "Examples:") || !strings.Contains(out, "--jsonl") {
		t.Fatalf("help (exit %d):\n%s", code, out)
	}
	_, stderr, code := runCLI(t, "x", "parse", "--format", "yaml")
	if code == 0 || !strings.Contains(stderr, `--format "yaml": want one of`) {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
}

// TestParseReasoning: a call quoted inside the leading <think> block is
// content; with --think-open a bare </think> ends the reasoning.
func TestParseReasoning(t *testing.T) {
	quoted := `<tool_call>{"name": "read_file", "arguments": {"path": "quoted"}}</tool_call>`
	real := `<tool_call>{"name": "read_file", "arguments": {"path": "a.txt"}}</tool_call>`
	for _, c := range []struct {
		name string
		args []string
		in   string
	}{
		{"leading block", nil, "<think>I could write " + quoted + "</think>\n" + real},
		{"think open", []string{"--think-open"}, "I could write " + quoted + "</think>\n" + real},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, stderr, code := runCLI(t, c.in, append([]string{"parse", "--format", "auto", "--chunk", "3"}, c.args...)...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			var calls []string
			for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
				var ev struct {
					Type      string          `json:"type"`
					Arguments json.RawMessage `json:"arguments"`
					Offset    int             `json:"offset"`
				}
				if err := json.Unmarshal([]byte(line), &ev); err != nil {
					t.Fatalf("%q: %v", line, err)
				}
				if ev.Type == "call" {
					calls = append(calls, fmt.Sprintf("%s@%d", ev.Arguments, ev.Offset))
				}
			}
			want := []string{fmt.Sprintf(`{"path":"a.txt"}@%d`, strings.Index(c.in, real))}
			if d := cmp.Diff(want, calls); d != "" {
				t.Fatalf("calls (-want +got):\n%s", d)
			}
		})
	}
}

package derive

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/toolharness/toolharness/chat"
	"github.com/toolharness/toolharness/internal/golden"
	"github.com/toolharness/toolharness/parse"
)

// mustRoundTrip are templates whose own calls must parse back (one call,
// and parallel calls where the template renders them): the ones unlike
// the built-in formats among them, by suite id.
var mustRoundTrip = []string{
	"zai-org-GLM-4.5", "llama-cpp-lfm2", "deepseek-r1-distill-qwen-32b", "deepseek-v3.1", "deepseek-v3.gguf",
	"functionary-medium-v3.1", "functionary-medium-v3.2", "command-r7b-12-2024.tool_use",
	"CohereForAI-c4ai-command-r-plus-tool_use", "NVIDIA-Nemotron-Nano-v2", "firefunction-v2",
	"qwen2.5-7b-instruct", "qwen3-0.6b", "qwen3-coder", "mistral-nemo-instruct-2407",
	"mistral-small-3.2-24b-instruct-2506", "llama-3.1-8b-instruct", "gpt-oss-120b",
}

// mustNotWriteCalls are templates asserted to render no tool calls.
var mustNotWriteCalls = []string{"gemma-3-it", "phi-4-mini-instruct.gguf", "chatml", "moonshotai-Kimi-K2"}

// TestRoundTripSuite: for every suite template, derive its syntax, render
// an assistant turn holding known calls (one, then two in parallel where
// the template renders two) and parse the turn back with the derived
// parser; names and arguments (types kept) must come back. The per-
// template outcome is golden-checked in testdata/roundtrip.txt.
func TestRoundTripSuite(t *testing.T) {
	tools, err := chat.ParseTools([]byte(roundTripTools))
	if err != nil {
		t.Fatal(err)
	}
	outcome := map[string]string{}
	var report strings.Builder
	var goTally, refTally tally
	for _, e := range loadSuite(t) {
		tok := Tokens{BOS: e.token("bos_token"), EOS: e.token("eos_token")}
		r := compileSuite(t, e)
		line := goTally.roundTripTemplate(r, tok, tools)
		// The same from the reference Jinja2 renders of the same requests:
		// a difference fails unless the engine reports a construct it
		// renders differently on purpose (see TestDeriveSuite).
		if refLine := refTally.roundTripTemplate(newRecordedRenderer(loadRecording(t, e.ID)), tok, tools); refLine != line {
			if len(r.tmpl.Deviations()) == 0 {
				t.Errorf("%s: %s from the Go engine's renders, %s from Jinja2's", e.ID, line, refLine)
			}
			line += " [from Jinja2 renders: " + refLine + "]"
		}
		outcome[e.ID] = line
		fmt.Fprintf(&report, "%s: %s\n", e.ID, line)
	}
	fmt.Fprintf(&report, "\nGo engine renders: %s\nJinja2 renders: %s\n", goTally, refTally)
	t.Log(strings.TrimSpace(report.String()))
	for _, id := range mustRoundTrip {
		if o := outcome[id]; !strings.Contains(o, "one call ok;") {
			t.Errorf("%s: %s", id, o)
		}
	}
	// Every template that writes calls round-trips, with the derived
	// syntax alone too.
	for id, o := range outcome {
		if strings.Contains(o, "failed") {
			t.Errorf("%s: %s", id, o)
		}
	}
	if goTally.aloneOneOK != goTally.capable || goTally.aloneParallelOK != goTally.parallelCapable {
		t.Errorf("derived syntax alone: %s", goTally)
	}
	for _, id := range mustNotWriteCalls {
		if o := outcome[id]; o != "writes no tool calls" {
			t.Errorf("%s: %q, want a template that writes no tool calls", id, o)
		}
	}
	golden.Check(t, *update, filepath.Join("testdata", "roundtrip.txt"), report.String())
}

// tally counts round-trip outcomes over the suite: with the parser
// NewParser gives (a built-in format's where the derived syntax is one)
// and with the derived syntax alone.
type tally struct {
	capable, oneOK, parallelCapable, parallelOK int
	aloneOneOK, aloneParallelOK                 int
}

func (t tally) String() string {
	return fmt.Sprintf("%d templates write calls; one call round-tripped for %d; %d render parallel calls, round-tripped for %d; "+
		"derived syntax alone: one call %d, parallel calls %d",
		t.capable, t.oneOK, t.parallelCapable, t.parallelOK, t.aloneOneOK, t.aloneParallelOK)
}

// roundTripTemplate derives one template's syntax and round-trips one call
// and two, with NewParser's parser and with the derived syntax alone; it
// returns the outcome line.
func (t *tally) roundTripTemplate(r Renderer, tok Tokens, tools []chat.Tool) string {
	res, err := Derive(r, tok)
	switch {
	case err != nil:
		return "no derivation: " + oneLine(err)
	case !res.WritesCalls:
		return "writes no tool calls"
	}
	t.capable++
	alone := res
	alone.Format = ""
	one, aloneOne := roundTrip(r, res, tools, 1), roundTrip(r, alone, tools, 1)
	t.oneOK += okCount(one)
	t.aloneOneOK += okCount(aloneOne)
	two, aloneTwo := "template renders one call a turn", "-"
	if res.Parallel {
		t.parallelCapable++
		two, aloneTwo = roundTrip(r, res, tools, 2), roundTrip(r, alone, tools, 2)
		t.parallelOK += okCount(two)
		t.aloneParallelOK += okCount(aloneTwo)
	}
	line := fmt.Sprintf("%s: one call %s; parallel %s", res.FormatName(), one, two)
	if res.Format != "" {
		line += fmt.Sprintf("; derived syntax alone: one call %s; parallel %s", aloneOne, aloneTwo)
	}
	return line
}

func okCount(outcome string) int {
	if outcome == "ok" {
		return 1
	}
	return 0
}

// roundTrip renders the first n round-trip calls in the derived input
// style and parses the assistant turn back; "ok" or "failed: why".
func roundTrip(r Renderer, res Result, tools []chat.Tool, n int) string {
	style := StyleNamed(res.Style)
	full, err := r.Render(roundTripRequest(style, n))
	if err != nil {
		return "failed: render: " + oneLine(err)
	}
	base, err := r.Render(Request{Messages: messages(userMessage()), Tools: json.RawMessage(roundTripTools)})
	if err != nil {
		return "failed: render the conversation before the turn: " + oneLine(err)
	}
	// The turn from its header on: a generation prompt may itself open the
	// call (functionary v3.2 ends it with ">>>").
	turn := full[commonPrefix(full, base):]
	open, close := res.Syntax.ReasoningOpen, res.Syntax.ReasoningClose
	// The prompt opened reasoning the rendered turn closes (history turns
	// of some templates keep the </think> but not the <think>).
	thinkOpen := res.ThinkOpen && strings.Contains(turn, close) && !strings.Contains(turn, open)
	p, err := res.NewParser(parse.Options{Tools: tools, ThinkOpen: thinkOpen})
	if err != nil {
		return "failed: parser: " + oneLine(err)
	}
	calls, problems := parseTurn(p, turn, 0)
	for _, chunk := range []int{1, 3, 7} {
		chunked, _ := parseTurn(p, turn, chunk)
		if !reflect.DeepEqual(chunked, calls) {
			return fmt.Sprintf("failed: %d-byte chunks give other calls than the whole turn", chunk)
		}
	}
	if len(problems) > 0 {
		return "failed: " + strings.Join(problems, "; ")
	}
	if len(calls) != n {
		return fmt.Sprintf("failed: %d calls parsed from %q, want %d", len(calls), turn, n)
	}
	for i, c := range calls {
		want := roundTripCalls[i]
		if c.Name != want.Name || !reflect.DeepEqual(decodeJSON(string(c.Arguments)), decodeJSON(string(want.Arguments))) {
			return fmt.Sprintf("failed: call %d is %s %s, want %s %s", i, c.Name, c.Arguments, want.Name, want.Arguments)
		}
	}
	return "ok"
}

// parseTurn feeds turn to p (reset first) in chunks of about chunk bytes,
// cut at rune boundaries (0: at once), and returns the calls and problems.
func parseTurn(p *parse.Parser, turn string, chunk int) ([]chat.ToolCall, []string) {
	p.Reset()
	var calls []chat.ToolCall
	var problems []string
	emit := func(ev parse.Event) {
		switch ev.Type {
		case parse.EventCall:
			calls = append(calls, ev.Call)
			if ev.Err != nil {
				problems = append(problems, ev.Err.Error())
			}
		case parse.EventError:
			problems = append(problems, ev.Err.Error())
		}
	}
	for _, piece := range chunks(turn, chunk) {
		p.Feed(piece, emit)
	}
	p.Close(emit)
	return calls, problems
}

// chunks cuts s into pieces of about n bytes at rune boundaries (n <= 0:
// one piece).
func chunks(s string, n int) []string {
	var out []string
	for s != "" {
		k := len(s)
		if n > 0 && n < k {
			k = n
			for k < len(s) && !utf8.RuneStart(s[k]) {
				k++
			}
		}
		out = append(out, s[:k])
		s = s[k:]
	}
	return out
}

func roundTripRequest(s Style, n int) Request {
	return Request{Messages: messages(userMessage(), string(AssistantCalls(s, roundTripCalls[:n]))), Tools: json.RawMessage(roundTripTools)}
}

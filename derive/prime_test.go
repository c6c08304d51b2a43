package derive

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/toolharness/toolharness/chat"
	"github.com/toolharness/toolharness/internal/golden"
	"github.com/toolharness/toolharness/parse"
)

// mustPrime are templates whose generation prompt ends inside the call
// syntax, with the tail that must be learned.
var mustPrime = map[string]string{"functionary-medium-v3.2": ">>>", "gpt-oss-120b": "<|start|>assistant"}

// TestOutputParserSuite: for every suite template that writes calls, the
// model's reply is what the rendered call turn adds to the generation
// prompt (after the reasoning the prompt opened, when it opens one); the
// output parser alone must read the calls back from it (whole and in 1-,
// 3- and 7-byte chunks), with offsets and Raw in the reply, and an answer
// turn's reply must be its content byte for byte, with no call and no
// error. Outcomes are golden-checked in testdata/output.txt.
func TestOutputParserSuite(t *testing.T) {
	tools, err := chat.ParseTools([]byte(roundTripTools))
	if err != nil {
		t.Fatal(err)
	}
	var report strings.Builder
	capable, ok := 0, 0
	for _, e := range loadSuite(t) {
		r := compileSuite(t, e)
		res, err := Derive(r, Tokens{BOS: e.token("bos_token"), EOS: e.token("eos_token")})
		if err != nil || !res.WritesCalls {
			continue
		}
		capable++
		if want, listed := mustPrime[e.ID]; listed && res.PromptTail != want {
			t.Errorf("%s: prompt tail %q, want %q", e.ID, res.PromptTail, want)
		}
		line := outputOutcome(r, res, tools)
		if line == "ok" {
			ok++
		} else {
			t.Errorf("%s: %s", e.ID, line)
		}
		fmt.Fprintf(&report, "%s: tail %q: %s\n", e.ID, res.PromptTail, line)
	}
	fmt.Fprintf(&report, "\n%d templates write calls; replies parsed alone for %d\n", capable, ok)
	golden.Check(t, *update, filepath.Join("testdata", "output.txt"), report.String())
}

// outputOutcome checks one template's call replies (one call, and two
// where it renders parallel calls) and its answer reply; "ok" or why not.
func outputOutcome(r Renderer, res Result, tools []chat.Tool) string {
	prompt, err := r.Render(Request{Messages: messages(userMessage()), Tools: json.RawMessage(roundTripTools), AddGenerationPrompt: true})
	if err != nil {
		return "render the prompt: " + oneLine(err)
	}
	p, err := res.NewOutputParser(parse.Options{Tools: tools})
	if err != nil {
		return "parser: " + oneLine(err)
	}
	counts := []int{1}
	if res.Parallel {
		counts = append(counts, 2)
	}
	for _, n := range counts {
		full, err := r.Render(roundTripRequest(StyleNamed(res.Style), n))
		if err != nil {
			return "render the call turn: " + oneLine(err)
		}
		if why := checkCallReply(p, res, replyAfter(prompt, full, res), n); why != "" {
			return fmt.Sprintf("%d call(s): %s", n, why)
		}
	}
	answer, err := r.Render(Request{Messages: messages(userMessage(), `{"role": "assistant", "content": "`+sentinelAnswer+`"}`), Tools: json.RawMessage(roundTripTools)})
	if err != nil {
		return "render the answer turn: " + oneLine(err)
	}
	reply := replyAfter(prompt, answer, res)
	text, calls, problems := collect(p, reply, 0)
	switch {
	case len(calls) > 0 || len(problems) > 0:
		return fmt.Sprintf("answer %q: %d calls, problems %q", reply, len(calls), problems)
	case text != reply:
		return fmt.Sprintf("answer %q: content %q", reply, text)
	}
	return "ok"
}

// replyAfter is what a model writes after the prompt for a turn the
// template renders as full: what full adds to the prompt, or, when the
// prompt opened a reasoning block the rendered history turn leaves out,
// some reasoning, its close and the rest of the turn.
func replyAfter(prompt, full string, res Result) string {
	if strings.HasPrefix(full, prompt) {
		return full[len(prompt):]
	}
	rest := Tail(prompt, full)
	if res.ThinkOpen {
		close := res.Syntax.ReasoningClose
		return "Let me look.\n" + close + "\n\n" + strings.TrimPrefix(rest, close)
	}
	return rest
}

func checkCallReply(p *OutputParser, res Result, reply string, n int) string {
	text, calls, problems := collect(p, reply, 0)
	if len(problems) > 0 {
		return fmt.Sprintf("problems %q in %q", problems, reply)
	}
	if len(calls) != n {
		return fmt.Sprintf("%d calls parsed from %q", len(calls), reply)
	}
	for i, c := range calls {
		want := roundTripCalls[i]
		if c.Name != want.Name || !reflect.DeepEqual(decodeJSON(string(c.Arguments)), decodeJSON(string(want.Arguments))) {
			return fmt.Sprintf("call %d is %s %s", i, c.Name, c.Arguments)
		}
		if c.Offset < 0 || c.Offset+len(c.Raw) > len(reply) || reply[c.Offset:c.Offset+len(c.Raw)] != c.Raw {
			return fmt.Sprintf("call %d: Raw %q is not the reply's bytes at offset %d", i, c.Raw, c.Offset)
		}
	}
	if res.PromptTail != "" && strings.Contains(text, res.PromptTail) && !strings.Contains(reply, res.PromptTail) {
		return fmt.Sprintf("the prompt's tail is in the content %q", text)
	}
	for _, chunk := range []int{1, 3, 7} {
		t2, c2, _ := collect(p, reply, chunk)
		if t2 != text || !reflect.DeepEqual(c2, calls) {
			return fmt.Sprintf("%d-byte chunks give other events", chunk)
		}
	}
	return ""
}

// collect parses reply with p (reset first) in chunks (0: at once) and
// returns the content, the calls and the problems.
func collect(p *OutputParser, reply string, chunk int) (string, []chat.ToolCall, []string) {
	p.Reset()
	var text strings.Builder
	var calls []chat.ToolCall
	var problems []string
	emit := func(ev parse.Event) {
		switch ev.Type {
		case parse.EventText:
			text.WriteString(ev.Text)
		case parse.EventCall:
			calls = append(calls, ev.Call)
		}
		if ev.Err != nil {
			problems = append(problems, ev.Err.Error())
		}
	}
	for _, piece := range chunks(reply, chunk) {
		p.Feed(piece, emit)
	}
	p.Close(emit)
	return text.String(), calls, problems
}

// FuzzOutputParser: the output parser of a template whose prompt ends in
// the call syntax never panics, gives the same text and calls for any
// chunking, keeps offsets inside the output, and emits as text only bytes
// of the output, in order (the prompt's tail is not the model's).
// Seeded with the replies of the suite's functionary v3.2 and gpt-oss
// templates (calls and answers).
func FuzzOutputParser(f *testing.F) {
	tools, err := chat.ParseTools([]byte(roundTripTools))
	if err != nil {
		f.Fatal(err)
	}
	var parsers []*OutputParser
	var tails []string
	for _, e := range loadSuite(f) {
		if _, ok := mustPrime[e.ID]; !ok {
			continue
		}
		r := compileSuite(f, e)
		res, err := Derive(r, Tokens{BOS: e.token("bos_token"), EOS: e.token("eos_token")})
		if err != nil {
			f.Fatal(err)
		}
		p, err := res.NewOutputParser(parse.Options{Tools: tools})
		if err != nil {
			f.Fatal(err)
		}
		prompt, _ := r.Render(Request{Messages: messages(userMessage()), Tools: json.RawMessage(roundTripTools), AddGenerationPrompt: true})
		for _, req := range []Request{roundTripRequest(StyleNamed(res.Style), 1), roundTripRequest(StyleNamed(res.Style), 2),
			{Messages: messages(userMessage(), `{"role": "assistant", "content": "`+sentinelAnswer+`"}`), Tools: json.RawMessage(roundTripTools)}} {
			if full, err := r.Render(req); err == nil {
				f.Add(uint8(len(parsers)), replyAfter(prompt, full, res))
			}
		}
		parsers, tails = append(parsers, p), append(tails, res.PromptTail)
	}
	if len(parsers) != len(mustPrime) {
		f.Fatalf("%d of the %d templates with a prompt tail are in the suite", len(parsers), len(mustPrime))
	}
	f.Add(uint8(0), "")
	f.Add(uint8(0), ">")
	f.Add(uint8(1), "<|start|>assistant to=functions.lookup_record")
	f.Fuzz(func(t *testing.T, which uint8, output string) {
		i := int(which) % len(parsers)
		p, tail := parsers[i], tails[i]
		text, calls, problems := collect(p, output, 0)
		text1, calls1, problems1 := collect(p, output, 1)
		if text1 != text || !reflect.DeepEqual(calls1, calls) || !reflect.DeepEqual(problems1, problems) {
			t.Fatalf("byte chunks differ:\n%q %v %q\n%q %v %q", text, calls, problems, text1, calls1, problems1)
		}
		for _, c := range calls {
			if c.Offset < 0 || c.Offset > len(output) {
				t.Fatalf("call offset %d outside the output (%d bytes)", c.Offset, len(output))
			}
		}
		if !isSubsequence(text, output) {
			t.Fatalf("the text %q holds bytes the output %q does not (prompt tail %q)", text, output, tail)
		}
	})
}

// isSubsequence reports whether the bytes of a occur in b in order.
func isSubsequence(a, b string) bool {
	for i := 0; i < len(a); i++ {
		j := strings.IndexByte(b, a[i])
		if j < 0 {
			return false
		}
		b = b[j+1:]
	}
	return true
}

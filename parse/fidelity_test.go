package parse

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/toolharness/toolharness/chat"
)

// fidelityCase is a record of testdata/fidelity.jsonl: an output written
// to the shape of what models write in issue 23's classes (the Python
// readings of an AST decoder, invented next turns, markup a brace off,
// fences), with what each format that meets it must read. The file is
// also a `bench corpus` input (id, raw, expected; the catalog is
// testdata/fidelity_tools.json).
type fidelityCase struct {
	ID          string   `json:"id"`
	Class       string   `json:"class"`
	Formats     []string `json:"formats"`
	Raw         string   `json:"raw"`
	WantCalls   []string `json:"want_calls"`
	WantContent string   `json:"want_content"`
	WantEndTurn bool     `json:"want_end_turn"`
	// WantCallsIn overrides WantCalls for a format that reads the calls
	// with other repairs (a derived JSON syntax reading Python calls
	// adds pythonic_call).
	WantCallsIn map[string][]string `json:"want_calls_in"`
}

// fidelitySyntaxes are the derived syntaxes a case may name as a format
// ("syntax:NAME"): the syntax derived from llama.cpp's LFM2 template,
// which writes a JSON list, and Gemma 4's.
var fidelitySyntaxes = map[string]Syntax{"lfm2-json": lfm2JSONSyntax, "gemma4": gemma4Syntax}

// fidelityParser is New for a named format, NewSyntax for "syntax:NAME".
func fidelityParser(t testing.TB, format string, opts Options) *Parser {
	t.Helper()
	var p *Parser
	var err error
	if name, ok := strings.CutPrefix(format, "syntax:"); ok {
		syn, known := fidelitySyntaxes[name]
		if !known {
			t.Fatalf("unknown syntax %q", name)
		}
		p, err = NewSyntax(syn, opts)
	} else {
		p, err = New(format, opts)
	}
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func loadFidelity(t testing.TB) ([]fidelityCase, []chat.Tool) {
	t.Helper()
	tools, err := chat.ReadToolsFile(filepath.Join("testdata", "fidelity_tools.json"))
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join("testdata", "fidelity.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []fidelityCase
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var c fidelityCase
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatalf("fidelity.jsonl: %v", err)
		}
		out = append(out, c)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out, tools
}

// TestFidelityClasses parses every case in each of its formats with the
// catalog, whole and in 1–7-byte chunks, and checks the calls, the
// content, the end of the turn and that the events give back the bytes.
func TestFidelityClasses(t *testing.T) {
	cases, tools := loadFidelity(t)
	classes := map[string]bool{}
	for _, c := range cases {
		classes[c.Class] = true
		for _, format := range c.Formats {
			t.Run(c.ID+"/"+format, func(t *testing.T) {
				opts := Options{Tools: tools}
				whole := merged(run(fidelityParser(t, format, opts), []string{c.Raw}))
				if got := reconstruct(whole); got != c.Raw {
					t.Fatalf("bytes lost or added:\n%s", cmp.Diff(c.Raw, got))
				}
				for n := 1; n <= 7; n++ {
					if d := cmp.Diff(whole, merged(run(fidelityParser(t, format, opts), chunked(c.Raw, n)))); d != "" {
						t.Fatalf("chunks of %d differ (-whole +chunked):\n%s", n, d)
					}
				}
				r := resultOf(whole)
				for _, e := range whole {
					if e.Type == EventEndTurn {
						r.EndTurn = e.Err
					}
				}
				got := viewOf(r)
				want := view{Content: c.WantContent, Calls: c.WantCalls}
				if calls, ok := c.WantCallsIn[format]; ok {
					want.Calls = calls
				}
				if len(want.Calls) == 0 {
					want.Calls = nil
				}
				if d := cmp.Diff(want, got); d != "" {
					t.Errorf("(-want +got):\n%s", d)
				}
				// Without a catalog, the shape alone decides the reading.
				if d := cmp.Diff(want, viewOf(resultOf(run(fidelityParser(t, format, Options{}), []string{c.Raw})))); d != "" {
					t.Errorf("without the catalog (-want +got):\n%s", d)
				}
				if (r.EndTurn != nil) != c.WantEndTurn {
					t.Fatalf("end of turn %v, want %v", r.EndTurn, c.WantEndTurn)
				}
				if r.EndTurn != nil {
					if r.EndTurn.Kind != KindOverranTurn {
						t.Errorf("end of turn kind %s", r.EndTurn.Kind)
					}
					var overrun strings.Builder
					for _, e := range whole {
						if e.Type == EventText && e.Part == PartOverrun {
							overrun.WriteString(e.Text)
						}
					}
					if got, want := overrun.String(), c.Raw[r.EndTurn.Offset:]; got != want {
						t.Errorf("overrun text %q, want the output from the marker on, %q", got, want)
					}
				}
			})
		}
	}
	for _, want := range []string{"tuple_value", "expression_value", "bare_identifier", "unescaped_quotes", "quoted_call",
		"quoted_name", "tuple_list", "line_continuation", "overran_turn", "missing_braces", "code_fence", "lfm2_markers", "gemma4_quote_tokens", "json_call"} {
		if !classes[want] {
			t.Errorf("no case of class %s in testdata/fidelity.jsonl", want)
		}
	}
}

// TestFidelityStrict: strict, none of the Python repairs is made (the
// turn still ends at an invented one: that is no repair).
func TestFidelityStrict(t *testing.T) {
	cases, tools := loadFidelity(t)
	for _, c := range cases {
		for _, format := range c.Formats {
			evs := run(fidelityParser(t, format, Options{Tools: tools, Strict: true}), []string{c.Raw})
			r := resultOf(evs)
			for _, e := range evs {
				if e.Type == EventEndTurn {
					r.EndTurn = e.Err
				}
			}
			for _, call := range r.Calls {
				if len(call.Repairs) > 0 {
					t.Errorf("%s/%s strict: %s repaired %v", c.ID, format, call.Name, call.Repairs)
				}
			}
			if (r.EndTurn != nil) != c.WantEndTurn {
				t.Errorf("%s/%s strict: end of turn %v, want %v", c.ID, format, r.EndTurn, c.WantEndTurn)
			}
		}
	}
}

// TestTurnMarkersOption: a template's own role header given in
// Options.TurnMarkers ends the turn like the built-in ones.
func TestTurnMarkersOption(t *testing.T) {
	in := `[get_weather(city="Paris")]<|turn|>user` + "\n" + `[get_weather(city="Rome")]`
	for _, extra := range [][]string{nil, {"<|turn|>user"}} {
		r, err := String("pythonic", in, Options{TurnMarkers: extra})
		if err != nil {
			t.Fatal(err)
		}
		if want := 2 - len(extra); len(r.Calls) != want || (r.EndTurn != nil) != (extra != nil) {
			t.Errorf("TurnMarkers %q: %d calls, end of turn %v; want %d calls", extra, len(r.Calls), r.EndTurn, want)
		}
	}
}

// TestBraceShortAtTheEnd: a call object a brace short is only closed by
// missing_braces before its closing tag; cut off at the end of the
// output it is truncated, as before.
func TestBraceShortAtTheEnd(t *testing.T) {
	for _, in := range []string{
		`<tool_call>{"name": "read_file", "arguments": {"path": "a.txt"}`,
		"<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"a.txt\"}\n",
		`<tool_call>{"name": "read_file", "arguments": {`,
	} {
		for _, format := range []string{"hermes", "auto"} {
			r, err := String(format, in, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(view{Errors: []string{"truncated"}}, viewOf(r)); d != "" {
				t.Errorf("%s %q (-want +got):\n%s", format, in, d)
			}
		}
	}
}

// TestBalanceBrackets: the closers missing_braces adds or drops, and the
// contents it leaves alone.
func TestBalanceBrackets(t *testing.T) {
	for _, tc := range []struct {
		in, want  string
		added, ok bool
	}{
		{`{"a": {"b": 1}`, `{"a": {"b": 1}}`, true, true},
		{`{"a": {"b": 1}}}` + "\n", `{"a": {"b": 1}}`, false, true},
		{`[{"a": {"b": 1}]`, `[{"a": {"b": 1}}]`, true, true},
		{`[{"a": {"b": 1}` + "\n]", `[{"a": {"b": 1}}]`, true, true},
		{`[{"a": {"b": "]"}]`, `[{"a": {"b": "]"}}]`, true, true},
		{`[{"a": {"b": 1}]}`, `[{"a": {"b": 1}}]`, true, true},
		{`[{"a": {"b": 1}}}]`, `[{"a": {"b": 1}}]`, false, true},
		{`[{"a": 1}}, {"b": 2}}]`, `[{"a": 1}, {"b": 2}]`, false, true},
		{`{"x": [{"a": 1}}]}`, "", false, false},            // a '}' where a ']' and a '}' are open: which is short is not known
		{`[{"a": [{"b": {"c": {"d": 1}]`, "", false, false}, // more than three short
		{`{"a": [1}`, "", false, false},                     // a '}' where a ']' is open
		{`{"a": 1}`, "", false, false},                      // balanced
		{`{"a": "b`, "", false, false},                      // ends inside a string
	} {
		got, added, ok := balanceBrackets(tc.in)
		if got != tc.want || added != tc.added || ok != tc.ok {
			t.Errorf("%q: %q %v %v, want %q %v %v", tc.in, got, added, ok, tc.want, tc.added, tc.ok)
		}
	}
}

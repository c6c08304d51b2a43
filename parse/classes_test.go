package parse

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestTextCoalesced: bytes that each open a block and are each turned
// back into text (a megabyte of '[') come out as a few text events, not
// one per byte, and a rejected fence's backticks are one event.
func TestTextCoalesced(t *testing.T) {
	for _, format := range Formats() {
		for _, b := range []string{"[", "{", "`", "<", "(", "[{"} {
			in := strings.Repeat(b, 1<<20/len(b))
			evs := collect(t, format, Options{}, []string{in})
			if len(evs) > 8 {
				t.Errorf("%s: %d events for 1 MB of %q", format, len(evs), b)
			}
			if got := reconstruct(evs); got != in {
				t.Errorf("%s %q: bytes lost or added", format, b)
			}
		}
	}
	for _, format := range []string{"hermes", "auto", "json", "pythonic"} {
		evs := collect(t, format, Options{Tools: testTools}, []string{"```python\nprint(1)\n```\nDone."})
		for _, e := range evs {
			if e.Type != EventText || strings.Trim(e.Text, "`") == "" && e.Text != "```" {
				t.Errorf("%s: a code fence gave %+v; want text, its backticks in one piece", format, e)
			}
		}
	}
}

// bfclTools are tools of the shape of BFCL's questions
// (../shared/bench/bfcl_v1_sample.jsonl), the benchmark whose prompt-mode
// outputs issue 12's classes were seen in.
var bfclTools = mustTools(`[
 {"name":"get_directions","parameters":{"type":"object","properties":{"start":{"type":"string"},"end":{"type":"string"},"avoid_tolls":{"type":"boolean"}}}},
 {"name":"calculate_BMI","parameters":{"type":"object","properties":{"weight_kg":{"type":"number"},"height_m":{"type":"number"}}}},
 {"name":"calculate_cagr","parameters":{"type":"object","properties":{"initial_value":{"type":"integer"},"final_value":{"type":"integer"},"period_in_years":{"type":"integer"}}}},
 {"name":"Basic.checkSizes","parameters":{"type":"object","properties":{"environ":{"type":"string"},"size":{"type":"string"}}}},
 {"name":"add","parameters":{"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"integer"}}}},
 {"name":"get_weather","parameters":{"type":"object","properties":{"location":{"type":"string"},"unit":{"type":"string"}}}},
 {"name":"calc","parameters":{"type":"object","properties":{"x":{"type":"integer"}}}}
]`)

// classCases are the eight classes of issue 12 and its text items, each
// in the formats that meet it (auto always: it must recognise them
// without being told the format).
var classCases = []struct {
	name    string
	formats []string
	strict  bool
	in      string
	want    view
}{
	// 1. Python calls without the list brackets.
	{"bare python call", []string{"pythonic", "auto"}, false, `get_directions(start='Sydney', end='Melbourne')`,
		view{Calls: []string{`get_directions{"start":"Sydney","end":"Melbourne"} repairs=missing_brackets`}}},
	{"bare python calls separated by comma", []string{"pythonic", "auto"}, false, `add(a=1, b=2), add(a=3, b=4)`,
		view{Calls: []string{`add{"a":1,"b":2} repairs=missing_brackets`, `add{"a":3,"b":4} repairs=missing_brackets`}}},
	{"bare python calls separated by semicolons, trailing semicolon", []string{"pythonic", "auto"}, false, "\n add(a=1, b=2); calc(x=3);",
		view{Content: "\n ", Calls: []string{`add{"a":1,"b":2} repairs=missing_brackets`, `calc{"x":3} repairs=missing_brackets`}}},
	{"bare python call then prose", []string{"pythonic", "auto"}, false, `calc(x=1) is what I will run.`,
		view{Content: " is what I will run.", Calls: []string{`calc{"x":1} repairs=missing_brackets`}}},
	{"bare call strict is text", []string{"pythonic", "auto"}, true, `calc(x=1)`,
		view{Content: `calc(x=1)`}},
	{"prose with a parenthesis is text", []string{"pythonic", "auto"}, false, `Paris (France) is sunny; calc(x=1) later.`,
		view{Content: `Paris (France) is sunny; calc(x=1) later.`}},
	{"a word and a parenthesis naming no tool is text", []string{"pythonic", "auto"}, false, `Note(s): none.`,
		view{Content: `Note(s): none.`}},
	{"bare call after reasoning", []string{"pythonic", "auto"}, false, "<think>use calc</think>\ncalc(x=2)",
		view{Content: "<think>use calc</think>\n", Calls: []string{`calc{"x":2} repairs=missing_brackets`}}},
	// 2. Markdown-escaped identifiers.
	{"markdown-escaped names and keys", []string{"pythonic", "auto"}, false, `[calculate\_BMI(weight\_kg=70, height\_m=1.75)]`,
		view{Calls: []string{`calculate_BMI{"weight_kg":70,"height_m":1.75} repairs=markdown_escape`}}},
	{"markdown-escaped bare call", []string{"pythonic", "auto"}, false, `calculate\_BMI(weight\_kg=70, height\_m=1.75)`,
		view{Calls: []string{`calculate_BMI{"weight_kg":70,"height_m":1.75} repairs=missing_brackets,markdown_escape`}}},
	// 3. Calls quoted as strings in a list.
	{"quoted call in a list", []string{"pythonic", "auto"}, false, `['calculate_cagr(initial_value=2000, final_value=3000, period_in_years=4)']`,
		view{Calls: []string{`calculate_cagr{"initial_value":2000,"final_value":3000,"period_in_years":4} repairs=quoted_call`}}},
	{"two quoted calls", []string{"pythonic", "auto"}, false, `["add(a=1, b=2)", "calc(x=5)"]`,
		view{Calls: []string{`add{"a":1,"b":2} repairs=quoted_call`, `calc{"x":5} repairs=quoted_call`}}},
	{"a list of quoted words is text", []string{"pythonic", "auto"}, false, `Options: ['fast', 'cheap'].`,
		view{Content: `Options: ['fast', 'cheap'].`}},
	// 4. Bare identifiers as argument values.
	{"bare identifier value", []string{"pythonic", "auto"}, false, `[Basic.checkSizes(environ=envVariables, size='5')]`,
		view{Calls: []string{`Basic.checkSizes{"environ":"envVariables","size":"5"} repairs=bare_identifier`}}},
	{"bare identifier value strict", []string{"pythonic"}, true, `[Basic.checkSizes(environ=envVariables, size='5')]`,
		view{Errors: []string{"bad_json"}}},
	// 5. Repeated opening markers without closing ones.
	{"repeated <function_call> without closers", []string{"hermes", "json", "auto"}, false,
		`<function_call> {"name": "add", "arguments": {"a": 1, "b": 2}} <function_call> {"name": "calc", "arguments": {"x": 3}}`,
		view{Content: " ", Calls: []string{`add{"a":1,"b":2} repairs=missing_close_tag,wrapper_tag`, `calc{"x":3} repairs=wrapper_tag`}}},
	// 6. GLM formats.
	{"glm4 name line and object", []string{"glm4", "auto"}, false, "get_weather\n{\"location\": \"Paris\"}",
		view{Calls: []string{`get_weather{"location":"Paris"}`}}},
	{"glm4 two calls", []string{"glm4"}, true, "get_weather\n{\"location\": \"Paris\"}\ncalc\n{\"x\": 1}",
		view{Content: "\n", Calls: []string{`get_weather{"location":"Paris"}`, `calc{"x":1}`}}},
	{"glm4 prose", []string{"glm4", "auto"}, false, "Paris\nis sunny {\"location\": 1}",
		view{Content: "Paris\nis sunny {\"location\": 1}"}},
	{"glm45 pairs", []string{"glm45", "auto"}, true, "<tool_call>get_weather\n<arg_key>location</arg_key>\n<arg_value>Paris</arg_value>\n</tool_call>",
		view{Calls: []string{`get_weather{"location":"Paris"}`}}},
	{"glm45 values by schema", []string{"glm45", "auto"}, false, "<tool_call>add\n<arg_key>a</arg_key>\n<arg_value>1</arg_value>\n<arg_key>b</arg_key>\n<arg_value>2</arg_value>\n</tool_call>",
		view{Calls: []string{`add{"a":1,"b":2}`}}},
	// 7. Harmony with the recipient in the header.
	{"harmony recipient in the header", []string{"harmony", "auto"}, true,
		`<|start|>assistant to=functions.add<|channel|>commentary json<|message|>{"a": 1, "b": 2}<|call|>`,
		view{Calls: []string{`add{"a":1,"b":2}`}}},
	{"harmony final channel is content", []string{"harmony", "auto"}, true,
		`<|channel|>analysis<|message|>Adding.<|end|><|start|>assistant<|channel|>final<|message|>It is 3.<|return|>`,
		view{Content: `<|channel|>analysis<|message|>Adding.<|end|><|start|>assistant<|channel|>final<|message|>It is 3.<|return|>`,
			Parts: []string{"framing:<|channel|>analysis<|message|>", "reasoning:Adding.",
				"framing:<|end|><|start|>assistant<|channel|>final<|message|>", "content:It is 3.", "framing:<|return|>"}}},
	// 8. Code fences followed by unrelated text.
	{"first fenced block is the answer", []string{"hermes", "json", "auto"}, false,
		"```json\n{\"name\": \"calc\", \"arguments\": {\"x\": 1}}\n```\nHere is how it works:\n```json\n{\"name\": \"calc\", \"arguments\": {\"x\": 1}}\n```\nand {\"name\": \"calc\", \"arguments\": {\"x\": 1}} again.",
		view{Content: "\nHere is how it works:\n```json\n{\"name\": \"calc\", \"arguments\": {\"x\": 1}}\n```\nand {\"name\": \"calc\", \"arguments\": {\"x\": 1}} again.",
			Calls: []string{`calc{"x":1} repairs=code_fence`}}},
	{"pythonic fence then code", []string{"pythonic", "auto"}, false,
		"```tool_code\n[calc(x=1)]\n```\n\n```python\ndef f():\n    return [calc(x=1)]\n```\n[calc(x=1)]",
		view{Content: "\n\n```python\ndef f():\n    return [calc(x=1)]\n```\n[calc(x=1)]", Calls: []string{`calc{"x":1} repairs=code_fence`}}},
	// Granite's <|tool_call|> with --format json.
	{"granite tool_call marker in json", []string{"json"}, false, `<|tool_call|>[{"name": "add", "arguments": {"a": 1, "b": 2}}]`,
		view{Calls: []string{`add{"a":1,"b":2} repairs=wrapper_tag,array_wrapped`}}},
	// In auto the marker and the list are Granite's (and Phi-4-mini's)
	// own syntax, read strict too.
	{"granite tool_call marker in auto", []string{"auto"}, true, `<|tool_call|>[{"name": "add", "arguments": {"a": 1, "b": 2}}]`,
		view{Calls: []string{`add{"a":1,"b":2}`}}},
	{"granite tool_call marker in json strict", []string{"json"}, true, `<|tool_call|>[{"name": "add", "parameters": {"a": 1, "b": 2}}]`,
		view{Calls: []string{`{} error=bad_json`}}},
	{"a list of calls in strict json is an error, not a silent repair", []string{"json"}, true, `[{"name": "add", "parameters": {"a": 1}}]`,
		view{Calls: []string{`{} error=bad_json`}}},
}

func TestIssue12Classes(t *testing.T) {
	for _, c := range classCases {
		for _, format := range c.formats {
			t.Run(c.name+"/"+format, func(t *testing.T) {
				opts := Options{Tools: bfclTools, Strict: c.strict}
				whole := merged(collect(t, format, opts, []string{c.in}))
				if got := reconstruct(whole); got != c.in {
					t.Fatalf("bytes lost or added:\n%s", cmp.Diff(c.in, got))
				}
				for n := 1; n <= 4; n++ {
					if d := cmp.Diff(whole, merged(collect(t, format, opts, chunked(c.in, n)))); d != "" {
						t.Fatalf("chunks of %d differ (-whole +chunked):\n%s", n, d)
					}
				}
				got := viewOf(resultOf(whole))
				if c.want.Parts != nil {
					got.Parts = partsView(whole)
				}
				if d := cmp.Diff(c.want, got); d != "" {
					t.Errorf("(-want +got):\n%s", d)
				}
			})
		}
	}
}

// FuzzFastCall checks that the per-call fast path gives the bytes the
// slow path (relaxed values, encoded again) gives, whenever it answers.
func FuzzFastCall(f *testing.F) {
	for _, s := range []string{
		`{"name": "read_file", "arguments": {"path": "a.txt", "limit": 5}}`,
		`{"arguments": {"x": [1, 2.5e3, -0, true, null, {"y": "é\n\"q\"\\"}]}, "name": "t"}`,
		`{"name": "t", "arguments": {"s": "\u00e9\/"}}`,
		`{"name": "t", "arguments": {"s": "a` + "\u2028" + `b", "bad": "\xff"}}`,
		"{\"name\": \"t\", \"arguments\": {}}\n",
	} {
		f.Add(s, false)
		f.Add(s, true)
	}
	for _, r := range loadCorpus(f) {
		if i := strings.Index(r.Raw, "{"); i >= 0 {
			f.Add(r.Raw[i:], false)
		}
	}
	f.Fuzz(func(t *testing.T, content string, strict bool) {
		p, err := New("hermes", Options{Strict: strict})
		if err != nil {
			t.Fatal(err)
		}
		keys := objectKeys{name: "name", args: "arguments"}
		fast, ok := p.fastCall(content, keys)
		if !ok {
			return
		}
		slow, serr := p.decodeJSONSlow(content, 0, keys, false)
		if serr != nil || len(slow) != 1 || slow[0].err != nil || slow[0].repairs != 0 {
			t.Fatalf("fast path took %q, slow path: %+v %v", content, slow, serr)
		}
		if fast.name != slow[0].name || string(fast.args) != string(slow[0].args) {
			t.Fatalf("%q: fast %s %s, slow %s %s", content, fast.name, fast.args, slow[0].name, slow[0].args)
		}
	})
}

// TestToolCallReadingsKept: when no reading of a <tool_call> names
// registered tools, the first reading is the one reported (the readings
// share a scratch slice).
func TestToolCallReadingsKept(t *testing.T) {
	for _, in := range []string{
		"<tool_call>\n<function=nope>\n<parameter=a>\n1\n</parameter>\n</function>\n</tool_call>",
		`<tool_call>{"name": "nope", "arguments": {"a": 1}}</tool_call>`,
	} {
		evs := collect(t, "auto", Options{Tools: testTools}, []string{in})
		var names []string
		for _, e := range evs {
			if e.Type == EventCall {
				names = append(names, e.Call.Name)
			}
		}
		if d := cmp.Diff([]string{"nope"}, names); d != "" {
			t.Errorf("%q: calls (-want +got):\n%s", in, d)
		}
	}
}

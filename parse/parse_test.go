package parse

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/toolharness/toolharness/chat"
)

var testTools = mustTools(`[
 {"name":"read_file","parameters":{"type":"object","properties":{"path":{"type":"string"},"limit":{"type":"integer"}},"required":["path"]}},
 {"name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"}}}},
 {"name":"set","parameters":{"type":"object","properties":{
   "flag":{"type":"boolean"},"tags":{"type":"array","items":{"type":"string"}},
   "meta":{"type":"object"},"n":{"anyOf":[{"type":"integer"},{"type":"null"}]},
   "ratio":{"type":["number","null"]}}}}
]`)

func mustTools(s string) []chat.Tool {
	tools, err := chat.ParseTools([]byte(s))
	if err != nil {
		panic(err)
	}
	return tools
}

// view is what a case checks: content, calls (name, args, repairs, error
// kind) and error kinds.
type view struct {
	Content string
	Calls   []string
	Errors  []string
	// Parts, where a test sets them, are the events as partsView shows
	// them (viewOf leaves them out).
	Parts []string
}

func viewOf(r Result) view {
	v := view{Content: r.Content}
	for _, c := range r.Calls {
		s := c.Name + string(c.Arguments)
		if len(c.Repairs) > 0 {
			s += " repairs=" + strings.Join(c.Repairs, ",")
		}
		if c.Err != nil {
			s += " error=" + string(c.Err.Kind)
		}
		v.Calls = append(v.Calls, s)
	}
	for _, e := range r.Errors {
		v.Errors = append(v.Errors, string(e.Kind))
	}
	return v
}

type formatCase struct {
	name   string
	format string
	strict bool
	tools  bool
	in     string
	want   view
}

var formatCases = []formatCase{
	// hermes
	{"hermes basic", "hermes", false, true, `Sure.<tool_call>{"name": "read_file", "arguments": {"path": "a.txt"}}</tool_call>Done.`,
		view{Content: "Sure.Done.", Calls: []string{`read_file{"path":"a.txt"}`}}},
	{"hermes two calls and text between", "hermes", true, false, "<tool_call>\n{\"name\": \"a\", \"arguments\": {}}\n</tool_call>\nand\n<tool_call>{\"name\": \"b\", \"arguments\": {\"x\": 1}}</tool_call>",
		view{Content: "\nand\n", Calls: []string{`a{}`, `b{"x":1}`}}},
	{"hermes stop sequence ate the closer", "hermes", true, false, `<tool_call>{"name": "a", "arguments": {"x": 1}}`,
		view{Calls: []string{`a{"x":1}`}}},
	{"hermes truncated", "hermes", false, false, `<tool_call>{"name": "a", "arguments": {"x": `,
		view{Errors: []string{"truncated"}}},
	{"hermes bad json strict", "hermes", true, false, `<tool_call>{"name": 'a', "arguments": {}}</tool_call>`,
		view{Errors: []string{"bad_json"}}},
	{"hermes single quotes lenient", "hermes", false, false, `<tool_call>{'name': 'a', 'arguments': {'b': True, 'c': None,}}</tool_call>`,
		view{Calls: []string{`a{"b":true,"c":null} repairs=python_literals,single_quotes,trailing_comma`}}},
	// The fast path's edges (valueEnd, nameChunk): each must give what
	// tracking the value gives, in every chunking.
	{"hermes '<' inside a string", "hermes", false, true, "<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"<a>}{\"}}\n</tool_call>",
		view{Calls: []string{`read_file{"path":"<a>}{"}`}}},
	{"hermes brackets inside a string", "hermes", false, true, "<tool_call>{\"name\": \"read_file\", \"arguments\": {\"path\": \"f(}]\"}} </tool_call>",
		view{Calls: []string{`read_file{"path":"f(}]"}`}}},
	{"hermes unclosed call then prose", "hermes", false, true, "<tool_call>{\"name\": \"read_file\", \"arguments\": {\"path\": \"a\"}}\nThat reads the file; then I will look at what it says and go on from there.",
		view{Content: "\nThat reads the file; then I will look at what it says and go on from there.", Calls: []string{`read_file{"path":"a"} repairs=missing_close_tag`}}},
	{"hermes name after the arguments", "hermes", false, true, "<tool_call>{\"arguments\": {\"path\": \"a\"}, \"name\": \"read_file\"}</tool_call>",
		view{Calls: []string{`read_file{"path":"a"}`}}},
	{"hermes escaped name", "hermes", false, true, "<tool_call>{\"name\": \"read\\u005ffile\", \"arguments\": {}}</tool_call>",
		view{Calls: []string{`read_file{}`}}},
	{"hermes blank lines before the closer", "hermes", true, true, "<tool_call>{\"name\": \"read_file\", \"arguments\": {\"path\": \"a\"}}\n\n </tool_call>x",
		view{Content: "x", Calls: []string{`read_file{"path":"a"}`}}},
	{"hermes closer cut short", "hermes", false, true, "<tool_call>{\"name\": \"read_file\", \"arguments\": {}}</tool_cal>ok",
		view{Content: "</tool_cal>ok", Calls: []string{`read_file{} repairs=missing_close_tag`}}},
	{"hermes empty name, truncated", "hermes", false, true, `<tool_call>{"name": ""`,
		view{Errors: []string{"truncated"}}},
	{"hermes unknown tool", "hermes", false, true, `<tool_call>{"name": "delete_all", "arguments": {}}</tool_call>`,
		view{Calls: []string{`delete_all{} error=unknown_tool`}}},
	{"hermes missing name", "hermes", false, false, `<tool_call>{"arguments": {"a": 1}}</tool_call>`,
		view{Calls: []string{`{"a":1} error=missing_name`}}},
	{"hermes arguments string", "hermes", false, false, `<tool_call>{"name": "a", "arguments": "{\"x\": 2}"}</tool_call>`,
		view{Calls: []string{`a{"x":2} repairs=arguments_string`}}},
	{"hermes arguments string strict", "hermes", true, false, `<tool_call>{"name": "a", "arguments": "{\"x\": 2}"}</tool_call>`,
		view{Calls: []string{`a{} error=bad_arguments`}}},
	{"hermes parameters key", "hermes", false, false, `<tool_call>{"name": "a", "parameters": {"x": 2}}</tool_call>`,
		view{Calls: []string{`a{"x":2} repairs=arguments_key`}}},
	{"hermes flattened", "hermes", false, false, `<tool_call>{"name": "search", "pattern": "*.py"}`,
		view{Calls: []string{`search{"pattern":"*.py"} repairs=flattened_arguments`}}},
	{"hermes flattened strict", "hermes", true, false, `<tool_call>{"name": "search", "pattern": "*.py"}</tool_call>`,
		view{Calls: []string{`search{"pattern":"*.py"} error=bad_arguments`}}},
	{"hermes missing open tag", "hermes", false, true, "{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Antwerp\"}}\n</tool_call>",
		view{Calls: []string{`get_weather{"city":"Antwerp"} repairs=missing_open_tag`}}},
	{"hermes bare json not a registered tool stays text", "hermes", false, true, `Example: {"name": "John", "age": 3}`,
		view{Content: `Example: {"name": "John", "age": 3}`}},
	{"hermes fence", "hermes", false, true, "Here:\n```json\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n```\nok",
		view{Content: "Here:\n\nok", Calls: []string{`get_weather{"city":"Paris"} repairs=code_fence`}}},
	{"hermes python fence stays text", "hermes", false, true, "```python\nprint({'name': 1})\n```",
		view{Content: "```python\nprint({'name': 1})\n```"}},
	{"hermes tools wrapper", "hermes", false, true, "<tools>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"X\"}}\n</tools>",
		view{Calls: []string{`get_weather{"city":"X"} repairs=wrapper_tag`}}},
	{"hermes array wrapped", "hermes", false, false, `<tool_call>[{"name": "a", "arguments": {}}]</tool_call>`,
		view{Calls: []string{`a{} repairs=array_wrapped`}}},
	{"hermes nested openai shape", "hermes", false, false, `<tool_call>{"type": "function", "function": {"name": "a", "arguments": {"q": 1}}}</tool_call>`,
		view{Calls: []string{`a{"q":1} repairs=nested_call`}}},
	{"hermes reopened without closing", "hermes", false, false, `<tool_call>{"name": "a", "arguments": {}}<tool_call>{"name": "b", "arguments": {}}</tool_call>`,
		view{Calls: []string{`a{} repairs=missing_close_tag`, `b{}`}}},
	{"hermes missing braces", "hermes", false, false, "<tool_call>\n\"name\": \"a\",\n\"arguments\": {\"c\": \"L\"}\n</tool_call>",
		view{Calls: []string{`a{"c":"L"} repairs=missing_braces`}}},
	{"hermes marker prefix at end is text", "hermes", false, false, "I will use <tool_ca",
		view{Content: "I will use <tool_ca"}},
	{"hermes empty block", "hermes", false, false, "<tool_call></tool_call>",
		view{Errors: []string{"missing_name"}}},
	// json (Llama)
	{"json bare parameters", "json", true, false, `{"name": "a", "parameters": {"x": 1}}`,
		view{Calls: []string{`a{"x":1}`}}},
	{"json python_tag", "json", true, false, `<|python_tag|>{"name": "a", "parameters": {}}`,
		view{Calls: []string{`a{}`}}},
	{"json python_tag code stays text", "json", false, false, "<|python_tag|>import os\nprint(1)",
		view{Content: "<|python_tag|>import os\nprint(1)"}},
	{"json several", "json", true, false, `{"name": "a", "parameters": {}}; {"name": "b", "parameters": {}}`,
		view{Content: "; ", Calls: []string{`a{}`, `b{}`}}},
	{"json prose with braces", "json", false, false, `use {x} and {"k": 1}`,
		view{Content: `use {x} and {"k": 1}`}},
	// mistral
	{"mistral list with ids", "mistral", true, false, `[TOOL_CALLS][{"name": "a", "arguments": {"x": 1}, "id": "abc123XYZ"}, {"name": "b", "arguments": {}}]`,
		view{Calls: []string{`a{"x":1}`, `b{}`}}},
	{"mistral name args", "mistral", true, false, `[TOOL_CALLS]get_weather[ARGS]{"city": "X"}`,
		view{Calls: []string{`get_weather{"city":"X"}`}}},
	{"mistral bare list lenient", "mistral", false, false, `[{"name": "a", "arguments": {}}]`,
		view{Calls: []string{`a{} repairs=missing_open_tag`}}},
	// xml
	{"xml basic", "xml", false, true, "ok <function_calls>\n<invoke name=\"read_file\">\n<parameter name=\"path\"> a b.txt</parameter>\n<parameter name=\"limit\">5</parameter>\n</invoke>\n</function_calls> done",
		view{Content: "ok  done", Calls: []string{`read_file{"path":" a b.txt","limit":5}`}}},
	{"xml bad value", "xml", false, true, `<function_calls><invoke name="read_file"><parameter name="limit">five</parameter></invoke></function_calls>`,
		view{Calls: []string{`read_file{"limit":"five"} error=bad_value`}}},
	{"xml values by schema", "xml", false, true, `<function_calls><invoke name="set"><parameter name="flag">true</parameter><parameter name="tags">["a","b"]</parameter><parameter name="meta">{"k": 1}</parameter><parameter name="n">null</parameter><parameter name="ratio">0.5</parameter></invoke></function_calls>`,
		view{Calls: []string{`set{"flag":true,"tags":["a","b"],"meta":{"k":1},"n":null,"ratio":0.5}`}}},
	{"xml two invokes", "xml", false, false, `<function_calls><invoke name="a"><parameter name="x">1</parameter></invoke><invoke name="b"></invoke></function_calls>`,
		view{Calls: []string{`a{"x":"1"}`, `b{}`}}},
	{"xml unexpected tag", "xml", false, true, `<function_calls><invoke name="read_file"><path>a</path></invoke></function_calls>`,
		view{Calls: []string{`read_file{} error=unexpected_tag`}}},
	{"xml closer eaten by stop", "xml", true, true, `<function_calls><invoke name="get_weather"><parameter name="city">Oslo</parameter></invoke>`,
		view{Calls: []string{`get_weather{"city":"Oslo"}`}}},
	{"xml strict unclosed parameter", "xml", true, true, `<function_calls><invoke name="get_weather"><parameter name="city">Oslo</invoke></function_calls>`,
		view{Calls: []string{`get_weather{"city":"Oslo"} error=unclosed_block`}}},
	// qwen3-coder
	{"qwen3-coder closer eaten by stop", "qwen3-coder", true, true, "<tool_call>\n<function=get_weather>\n<parameter=city>\nOslo\n</parameter>\n</function>\n",
		view{Calls: []string{`get_weather{"city":"Oslo"}`}}},
	{"qwen3-coder basic", "qwen3-coder", true, true, "<tool_call>\n<function=read_file>\n<parameter=path>\nsrc/a b.go\n</parameter>\n<parameter=limit>\n10\n</parameter>\n</function>\n</tool_call>",
		view{Calls: []string{`read_file{"path":"src/a b.go","limit":10}`}}},
	{"qwen3-coder missing open tag", "qwen3-coder", false, true, "<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n</function>\n</tool_call>",
		view{Calls: []string{`get_weather{"city":"Paris"} repairs=missing_open_tag`}}},
	{"qwen3-coder unknown parameter", "qwen3-coder", false, true, "<tool_call><function=get_weather><parameter=town>X</parameter></function></tool_call>",
		view{Calls: []string{`get_weather{"town":"X"} error=unexpected_tag`}}},
	// pythonic
	{"pythonic two calls", "pythonic", true, false, `[get_weather(city="Paris"), read(path='a.txt', limit=5, all=True)]Done`,
		view{Content: "Done", Calls: []string{`get_weather{"city":"Paris"}`, `read{"path":"a.txt","limit":5,"all":true}`}}},
	{"pythonic markdown link is text", "pythonic", false, false, `see [the docs](http://x) and [a, b]`,
		view{Content: `see [the docs](http://x) and [a, b]`}},
	{"pythonic positional lenient", "pythonic", false, true, `[read_file("a.txt", 3)]`,
		view{Calls: []string{`read_file{"path":"a.txt","limit":3} repairs=positional_arguments`}}},
	{"pythonic positional strict", "pythonic", true, true, `[read_file("a.txt")]`,
		view{Calls: []string{`read_file{} error=bad_arguments`}}},
	// harmony
	{"harmony call", "harmony", true, false, `<|channel|>analysis<|message|>Need weather.<|end|><|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{"city": "Paris"}<|call|>`,
		view{Content: `<|channel|>analysis<|message|>Need weather.<|end|>`, Calls: []string{`get_weather{"city":"Paris"}`}}},
	{"harmony call eaten by stop", "harmony", true, false, `<|channel|>commentary to=functions.a <|constrain|>json<|message|>{"x": 1}`,
		view{Calls: []string{`a{"x":1}`}}},
	// tags
	{"tags basic", "tags", false, true, "I'll read it.\n<read_file>\n<path>a.txt</path>\n<limit>3</limit>\n</read_file>",
		view{Content: "I'll read it.\n", Calls: []string{`read_file{"path":"a.txt","limit":3}`}}},
	{"tags prose mention stays text", "tags", false, true, "use <read_file> to read",
		view{Content: "use <read_file> to read"}},
	// auto
	{"auto hermes", "auto", false, true, `<tool_call>{"name": "get_weather", "arguments": {"city": "X"}}</tool_call>`,
		view{Calls: []string{`get_weather{"city":"X"}`}}},
	{"auto qwen3-coder", "auto", false, true, "<tool_call>\n<function=get_weather>\n<parameter=city>\nX\n</parameter>\n</function>\n</tool_call>",
		view{Calls: []string{`get_weather{"city":"X"}`}}},
	{"auto pythonic", "auto", false, true, `[get_weather(city="X")]`,
		view{Calls: []string{`get_weather{"city":"X"}`}}},
	{"auto tool_call with pythonic inside", "auto", false, true, `<tool_call>get_weather(city="X")</tool_call>`,
		view{Calls: []string{`get_weather{"city":"X"} repairs=pythonic_call`}}},
	{"auto mistral", "auto", false, true, `[TOOL_CALLS][{"name": "get_weather", "arguments": {"city": "X"}}]`,
		view{Calls: []string{`get_weather{"city":"X"}`}}},
	{"auto xml", "auto", false, true, `<function_calls><invoke name="get_weather"><parameter name="city">X</parameter></invoke></function_calls>`,
		view{Calls: []string{`get_weather{"city":"X"}`}}},
	{"auto tags", "auto", false, true, `<get_weather><city>X</city></get_weather>`,
		view{Calls: []string{`get_weather{"city":"X"}`}}},
	{"auto harmony", "auto", false, true, `<|channel|>commentary to=functions.get_weather json<|message|>{"city":"X"}<|call|>`,
		view{Calls: []string{`get_weather{"city":"X"}`}}},
}

func TestFormats(t *testing.T) {
	for _, c := range formatCases {
		t.Run(c.name, func(t *testing.T) {
			opts := Options{Strict: c.strict}
			if c.tools {
				opts.Tools = testTools
			}
			r, err := String(c.format, c.in, opts)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(c.want, viewOf(r)); d != "" {
				t.Errorf("%s (-want +got):\n%s", c.in, d)
			}
			if c.strict {
				for _, call := range r.Calls {
					if len(call.Repairs) > 0 {
						t.Errorf("strict parse repaired %s: %v", call.Name, call.Repairs)
					}
				}
			}
			// Every byte is kept, and chunking does not change the events.
			whole := merged(collect(t, c.format, opts, []string{c.in}))
			if got := reconstruct(whole); got != c.in {
				t.Errorf("reconstructed text differs:\n%s", cmp.Diff(c.in, got))
			}
			for size := 1; size <= 7; size++ {
				var chunks []string
				for s := c.in; len(s) > 0; {
					n := min(size, len(s))
					chunks = append(chunks, s[:n])
					s = s[n:]
				}
				if d := cmp.Diff(whole, merged(collect(t, c.format, opts, chunks))); d != "" {
					t.Fatalf("chunks of %d differ (-whole +chunked):\n%s", size, d)
				}
			}
		})
	}
}

func TestCallStartComesBeforeTheCloser(t *testing.T) {
	p, err := New("hermes", Options{})
	if err != nil {
		t.Fatal(err)
	}
	var evs []Event
	emit := func(e Event) { evs = append(evs, e) }
	p.Feed(`Hi <tool_call>{"name": "read_file", "argum`, emit)
	if len(evs) != 2 || evs[0].Text != "Hi " || evs[1].Type != EventCallStart || evs[1].Call.Name != "read_file" || evs[1].Call.ID != "call_0" || evs[1].Call.Offset != 3 {
		t.Fatalf("after the name: %+v", evs)
	}
	p.Feed(`ents": {}}</tool_call> bye <tool`, emit)
	if len(evs) != 4 || evs[2].Type != EventCall || evs[3].Text != " bye " {
		t.Fatalf("after the closer: %+v", evs)
	}
	p.Close(emit)
	if last := evs[len(evs)-1]; last.Type != EventText || last.Text != "<tool" {
		t.Fatalf("held-back text not released at close: %+v", last)
	}
}

func TestHoldbackIsOnlyAMarkerPrefix(t *testing.T) {
	p, err := New("hermes", Options{Strict: true})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	emit := func(e Event) { got = append(got, e.Text) }
	p.Feed("a <b> <to", emit)
	if d := cmp.Diff([]string{"a <b> "}, got); d != "" {
		t.Fatalf("only the marker prefix may be held (-want +got):\n%s", d)
	}
	p.Feed("ol", emit)
	p.Feed("s> x", emit)
	p.Close(emit)
	if all := strings.Join(got, ""); all != "a <b> <tools> x" {
		t.Fatalf("text %q", all)
	}
}

func TestErrorsAreTypedAndLocated(t *testing.T) {
	in := `text <tool_call>{"name": "a", "arguments": {"x": 1,, }}</tool_call>`
	r, err := String("hermes", in, Options{Strict: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Errors) != 1 {
		t.Fatalf("errors: %+v", r.Errors)
	}
	e := r.Errors[0]
	if e.Kind != KindBadJSON || e.Offset != strings.Index(in, ",,")+1 || e.Raw == "" {
		t.Fatalf("error %+v (offset of ',,' is %d)", e, strings.Index(in, ",,"))
	}
	if !strings.HasPrefix(e.Error(), "parse: ") {
		t.Fatalf("Error() = %q", e.Error())
	}
}

func TestNewUnknownFormat(t *testing.T) {
	_, err := New("yaml", Options{})
	if !errors.Is(err, ErrUnknownFormat) {
		t.Fatalf("err = %v", err)
	}
}

func TestStopSequences(t *testing.T) {
	for _, f := range Formats() {
		for _, s := range StopSequences(f) {
			// The block cut right before the stop sequence still parses.
			_ = s
		}
	}
	if got := StopSequences("hermes"); !cmp.Equal(got, []string{"</tool_call>"}) {
		t.Fatalf("hermes stops %v", got)
	}
}

func TestArgumentsAreJSONObjects(t *testing.T) {
	for _, c := range formatCases {
		opts := Options{Strict: c.strict}
		if c.tools {
			opts.Tools = testTools
		}
		r, _ := String(c.format, c.in, opts)
		for _, call := range r.Calls {
			var m map[string]any
			if err := json.Unmarshal(call.Arguments, &m); err != nil {
				t.Errorf("%s: arguments %s: %v", c.name, call.Arguments, err)
			}
		}
	}
}

package parse

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// familyCase is a table case of the named formats built on a Syntax
// (families.go), run in each of its formats, whole and in 1–7-byte
// chunks, with the catalog testTools unless noTools.
type familyCase struct {
	name    string
	formats []string
	strict  bool
	noTools bool
	in      string
	want    view
}

// The markers, spelled out once.
const (
	dsSec, dsSecEnd   = "<｜tool▁calls▁begin｜>", "<｜tool▁calls▁end｜>"
	dsCall, dsCallEnd = "<｜tool▁call▁begin｜>", "<｜tool▁call▁end｜>"
	dsSep             = "<｜tool▁sep｜>"
	kSec, kSecEnd     = "<|tool_calls_section_begin|>", "<|tool_calls_section_end|>"
	kCall, kCallEnd   = "<|tool_call_begin|>", "<|tool_call_end|>"
	kArgs             = "<|tool_call_argument_begin|>"
	fgCall, fgEnd     = "<start_function_call>", "<end_function_call>"
)

var (
	ds  = []string{"deepseek", "auto"}
	kk  = []string{"kimi-k2", "auto"}
	fy  = []string{"functionary", "auto"}
	fg  = []string{"functiongemma", "auto"}
	dsA = strings.NewReplacer("｜", "|")
)

func dsV31(name, args string) string { return dsCall + name + dsSep + args + dsCallEnd }
func dsR1(name, args string) string {
	return dsCall + "function" + dsSep + name + "\n```json\n" + args + "\n```" + dsCallEnd
}
func kimiCall(name string, i int, args string) string {
	return kCall + "functions." + name + ":" + string(rune('0'+i)) + kArgs + args + kCallEnd
}
func dsml(calls ...string) string {
	return "<｜DSML｜function_calls>\n" + strings.Join(calls, "\n") + "\n</｜DSML｜function_calls>"
}
func dsmlInvoke(name string, params ...string) string {
	return `<｜DSML｜invoke name="` + name + `">` + "\n" + strings.Join(params, "\n") + "\n</｜DSML｜invoke>"
}
func dsmlParam(key, str, v string) string {
	return `<｜DSML｜parameter name="` + key + `" string="` + str + `">` + v + "</｜DSML｜parameter>"
}

var familyCases = []familyCase{
	// DeepSeek V3.1: name<｜tool▁sep｜>{…}.
	{"deepseek v3.1 one call", ds, true, false, dsSec + dsV31("get_weather", `{"city":"Paris"}`) + dsSecEnd,
		view{Calls: []string{`get_weather{"city":"Paris"}`}}},
	{"deepseek v3.1 parallel calls", ds, true, false,
		dsSec + dsV31("get_weather", `{"city":"Paris"}`) + dsV31("read_file", `{"path":"a.txt","limit":5}`) + dsSecEnd,
		view{Calls: []string{`get_weather{"city":"Paris"}`, `read_file{"path":"a.txt","limit":5}`}}},
	// DeepSeek V3 and R1: function<｜tool▁sep｜>name, fenced JSON.
	{"deepseek r1 prose around", ds, true, false,
		"Let me check.\n" + dsSec + dsR1("get_weather", `{"city": "Paris"}`) + dsSecEnd + "\nDone.",
		view{Content: "Let me check.\n\nDone.", Calls: []string{`get_weather{"city":"Paris"}`}}},
	{"deepseek r1 parallel calls", ds, true, false,
		dsSec + dsR1("get_weather", `{"city": "Paris"}`) + "\n" + dsR1("read_file", `{"path": "a.txt"}`) + dsSecEnd,
		view{Calls: []string{`get_weather{"city":"Paris"}`, `read_file{"path":"a.txt"}`}}},
	{"deepseek reasoning quoting a call", ds, true, false,
		"<think>I could write " + dsSec + dsV31("read_file", `{"path":"x"}`) + dsSecEnd + "</think>\n\n" + dsSec + dsV31("get_weather", `{"city":"Paris"}`) + dsSecEnd,
		view{Content: "<think>I could write " + dsSec + dsV31("read_file", `{"path":"x"}`) + dsSecEnd + "</think>\n\n", Calls: []string{`get_weather{"city":"Paris"}`}}},
	{"deepseek truncated", ds, false, false, dsSec + dsCall + "get_weather" + dsSep + `{"city": "Pa`,
		view{Errors: []string{"truncated"}}},
	{"deepseek section close eaten by stop", ds, true, false, dsSec + dsV31("get_weather", `{"city":"Paris"}`),
		view{Calls: []string{`get_weather{"city":"Paris"}`}}},
	{"deepseek missing call close", ds, false, false, dsSec + dsCall + "get_weather" + dsSep + `{"city":"Paris"}` + dsSecEnd,
		view{Calls: []string{`get_weather{"city":"Paris"} repairs=missing_close_tag`}}},
	{"deepseek missing call close strict", ds, true, false, dsSec + dsCall + "get_weather" + dsSep + `{"city":"Paris"}` + dsSecEnd,
		view{Calls: []string{`get_weather{"city":"Paris"} error=unclosed_block`}}},
	{"deepseek call without its section", ds, false, false, "Sure. " + dsV31("get_weather", `{"city":"Paris"}`) + " ok",
		view{Content: "Sure.  ok", Calls: []string{`get_weather{"city":"Paris"} repairs=missing_open_tag`}}},
	{"deepseek call without its section strict", ds, true, false, dsV31("get_weather", `{"city":"Paris"}`),
		view{Content: dsV31("get_weather", `{"city":"Paris"}`)}},
	{"deepseek ascii bars", ds, false, false, dsA.Replace(dsSec + dsR1("get_weather", `{"city": "Paris"}`) + dsSecEnd),
		view{Calls: []string{`get_weather{"city":"Paris"} repairs=marker_spelling`}}},
	{"deepseek ascii bars v3.1 parallel", ds, false, false,
		dsA.Replace(dsSec + dsV31("get_weather", `{"city":"Paris"}`) + dsV31("read_file", `{"path":"a"}`) + dsSecEnd),
		view{Calls: []string{`get_weather{"city":"Paris"} repairs=marker_spelling`, `read_file{"path":"a"} repairs=marker_spelling`}}},
	{"deepseek ascii bars strict are text", ds, true, false, dsA.Replace(dsSec + dsV31("get_weather", `{"city":"Paris"}`) + dsSecEnd),
		view{Content: dsA.Replace(dsSec + dsV31("get_weather", `{"city":"Paris"}`) + dsSecEnd)}},
	{"deepseek marker-like text", ds, false, false, "The separator " + dsSep + " and " + dsSec[:10] + " are tokens; I will use <｜tool▁ca",
		view{Content: "The separator " + dsSep + " and " + dsSec[:10] + " are tokens; I will use <｜tool▁ca"}},
	{"deepseek unknown tool", ds, false, false, dsSec + dsV31("rm", `{"path":"/"}`) + dsSecEnd,
		view{Calls: []string{`rm{"path":"/"} error=unknown_tool`}}},
	{"deepseek bad json", ds, true, false, dsSec + dsV31("get_weather", `{city: Paris}`) + dsSecEnd,
		view{Calls: []string{`get_weather{} error=bad_json`}}},
	{"deepseek empty section", ds, false, false, dsSec + dsSecEnd,
		view{Errors: []string{"missing_name"}}},

	// DeepSeek V3.2 DSML.
	{"dsml one call", ds, true, false, dsml(dsmlInvoke("get_weather", dsmlParam("city", "true", "Paris"))),
		view{Calls: []string{`get_weather{"city":"Paris"}`}}},
	{"dsml parallel calls, JSON values, prose around", ds, true, false,
		"Reading.\n\n" + dsml(dsmlInvoke("read_file", dsmlParam("path", "true", "a b.txt"), dsmlParam("limit", "false", "5")),
			dsmlInvoke("set", dsmlParam("tags", "false", `["x", "y"]`), dsmlParam("meta", "false", `{"k": null}`))) + "\nDone.",
		view{Content: "Reading.\n\n\nDone.", Calls: []string{`read_file{"path":"a b.txt","limit":5}`, `set{"tags":["x","y"],"meta":{"k":null}}`}}},
	{"dsml JSON value without a catalog", ds, true, true, dsml(dsmlInvoke("f", dsmlParam("n", "false", "3"), dsmlParam("s", "true", "3"))),
		view{Calls: []string{`f{"n":3,"s":"3"}`}}},
	{"dsml value marked JSON that is not, lenient", ds, false, false, dsml(dsmlInvoke("get_weather", dsmlParam("city", "false", "Paris"))),
		view{Calls: []string{`get_weather{"city":"Paris"}`}}},
	{"dsml value marked JSON that is not, strict", ds, true, false, dsml(dsmlInvoke("get_weather", dsmlParam("city", "false", "Paris"))),
		view{Calls: []string{`get_weather{"city":"Paris"} error=bad_value`}}},
	{"dsml truncated", ds, false, false, "<｜DSML｜function_calls>\n" + `<｜DSML｜invoke name="get_weather">` + "\n" + `<｜DSML｜parameter name="ci`,
		view{Errors: []string{"truncated"}}},
	{"dsml section close eaten by stop", ds, true, false, strings.TrimSuffix(dsml(dsmlInvoke("get_weather", dsmlParam("city", "true", "Paris"))), "</｜DSML｜function_calls>"),
		view{Calls: []string{`get_weather{"city":"Paris"}`}}},
	{"dsml missing parameter close", ds, false, false, dsml(dsmlInvoke("get_weather", `<｜DSML｜parameter name="city" string="true">Paris`)),
		view{Calls: []string{`get_weather{"city":"Paris"} repairs=missing_close_tag`}}},
	{"dsml ascii bars", ds, false, false, dsA.Replace(dsml(dsmlInvoke("get_weather", dsmlParam("city", "true", "Paris")))),
		view{Calls: []string{`get_weather{"city":"Paris"} repairs=marker_spelling`}}},
	{"dsml invoke without its section", ds, false, false, dsmlInvoke("get_weather", dsmlParam("city", "true", "Paris")),
		view{Calls: []string{`get_weather{"city":"Paris"} repairs=missing_open_tag`}}},
	{"dsml marker-like text", ds, false, false, "DSML wraps calls in <｜DSML｜invoke> tags.",
		view{Content: "DSML wraps calls in <｜DSML｜invoke> tags."}},

	// Kimi K2.
	{"kimi one call", kk, true, false, kSec + kimiCall("get_weather", 0, `{"city":"Paris"}`) + kSecEnd,
		view{Calls: []string{`get_weather{"city":"Paris"}`}}},
	{"kimi parallel calls, prose around", kk, true, false,
		"Checking both.\n" + kSec + kimiCall("get_weather", 0, `{"city":"Paris"}`) + "\n" + kimiCall("read_file", 1, `{"path": "a.txt", "limit": 5}`) + kSecEnd + "\nDone.",
		view{Content: "Checking both.\n\nDone.", Calls: []string{`get_weather{"city":"Paris"}`, `read_file{"path":"a.txt","limit":5}`}}},
	{"kimi truncated", kk, false, false, kSec + kCall + "functions.get_weather:0" + kArgs + `{"city": "Pa`,
		view{Errors: []string{"truncated"}}},
	{"kimi section close eaten by stop", kk, true, false, kSec + kimiCall("get_weather", 0, `{"city":"Paris"}`),
		view{Calls: []string{`get_weather{"city":"Paris"}`}}},
	{"kimi missing call close", kk, false, false, kSec + kCall + "functions.get_weather:0" + kArgs + `{"city":"Paris"}` + kSecEnd,
		view{Calls: []string{`get_weather{"city":"Paris"} repairs=missing_close_tag`}}},
	{"kimi call without its section", kk, false, false, kimiCall("get_weather", 0, `{"city":"Paris"}`),
		view{Calls: []string{`get_weather{"city":"Paris"} repairs=missing_open_tag`}}},
	{"kimi singular section markers", kk, false, false, "<|tool_call_section_begin|>" + kimiCall("get_weather", 0, `{"city":"Paris"}`) + "<|tool_call_section_end|>",
		view{Calls: []string{`get_weather{"city":"Paris"} repairs=marker_spelling`}}},
	{"kimi singular section markers strict are not a section", kk, true, false, "<|tool_call_section_begin|>x",
		view{Content: "<|tool_call_section_begin|>x"}},
	{"kimi marker-like text", kk, false, false, "Sections open with <|tool_calls_section|> or <|tool_calls_sect",
		view{Content: "Sections open with <|tool_calls_section|> or <|tool_calls_sect"}},
	{"kimi unknown tool", kk, false, false, kSec + kimiCall("rm", 0, `{}`) + kSecEnd,
		view{Calls: []string{`rm{} error=unknown_tool`}}},

	// Functionary v3.2.
	{"functionary one call", fy, true, false, ">>>get_weather\n{\"city\": \"Paris\"}",
		view{Calls: []string{`get_weather{"city":"Paris"}`}}},
	{"functionary parallel calls", fy, true, false, ">>>get_weather\n{\"city\": \"Paris\"}>>>read_file\n{\"path\": \"a.txt\"}",
		view{Calls: []string{`get_weather{"city":"Paris"}`, `read_file{"path":"a.txt"}`}}},
	{"functionary content channel then a call", fy, true, false, ">>>all\nLet me check.>>>get_weather\n{\"city\": \"Paris\"}\nThen more.",
		view{Content: ">>>all\nLet me check.\nThen more.", Calls: []string{`get_weather{"city":"Paris"}`}}},
	{"functionary all channel holding JSON is content", fy, false, true, ">>>all\n{\"city\": \"Paris\"}",
		view{Content: ">>>all\n{\"city\": \"Paris\"}"}},
	{"functionary python prompt is text", fy, false, true, "```python\n>>> x = {\"a\": 1}\n>>> x\n{\"a\": 1}\n>>> print(x)\n```",
		view{Content: "```python\n>>> x = {\"a\": 1}\n>>> x\n{\"a\": 1}\n>>> print(x)\n```"}},
	{"functionary shift operator is text", fy, false, true, "In Java, x >>>2 and y >>> z\n{} shift.",
		view{Content: "In Java, x >>>2 and y >>> z\n{} shift."}},
	{"functionary unregistered name is text", fy, false, false, "Run >>>python\n{\"code\": 1}",
		view{Content: "Run >>>python\n{\"code\": 1}"}},
	{"functionary truncated", fy, false, false, ">>>get_weather\n{\"city\": \"Pa",
		view{Errors: []string{"truncated"}}},
	{"functionary bad json", fy, true, false, ">>>get_weather\n{\"city\": Paris}",
		view{Calls: []string{`get_weather{} error=bad_json`}}},
	{"functionary reply after the generation prompt's >>>", []string{"functionary"}, true, false, "get_weather\n{\"city\": \"Paris\"}>>>read_file\n{\"path\": \"a\"}",
		view{Calls: []string{`get_weather{"city":"Paris"}`, `read_file{"path":"a"}`}}},

	// FunctionGemma.
	{"functiongemma one call", fg, true, false, fgCall + "call:get_weather{city:<escape>Paris<escape>}" + fgEnd,
		view{Calls: []string{`get_weather{"city":"Paris"}`}}},
	{"functiongemma parallel calls, prose around", fg, true, false,
		"On it.\n" + fgCall + "call:get_weather{city:<escape>Paris, France<escape>}" + fgEnd + fgCall + "call:read_file{limit:5,path:<escape>a {b}.txt<escape>}" + fgEnd + "\nDone.",
		view{Content: "On it.\n\nDone.", Calls: []string{`get_weather{"city":"Paris, France"}`, `read_file{"limit":5,"path":"a {b}.txt"}`}}},
	{"functiongemma values", fg, true, false, fgCall + "call:set{flag:true,meta:{k:<escape>v<escape>,<escape>q<escape>:[1,2.5,false]},n:None,ratio:-0.5,tags:[]}" + fgEnd,
		view{Calls: []string{`set{"flag":true,"meta":{"k":"v","q":[1,2.5,false]},"n":null,"ratio":-0.5,"tags":[]}`}}},
	{"functiongemma no arguments", fg, true, true, fgCall + "call:now{}" + fgEnd,
		view{Calls: []string{`now{}`}}},
	{"functiongemma truncated", fg, false, false, fgCall + "call:get_weather{city:<escape>Par",
		view{Errors: []string{"truncated"}}},
	{"functiongemma close eaten by stop", fg, true, false, fgCall + "call:get_weather{city:<escape>Paris<escape>}",
		view{Calls: []string{`get_weather{"city":"Paris"}`}}},
	{"functiongemma missing close before the next call", fg, false, false,
		fgCall + "call:get_weather{city:<escape>Paris<escape>}" + fgCall + "call:get_weather{city:<escape>Oslo<escape>}" + fgEnd,
		view{Calls: []string{`get_weather{"city":"Paris"} repairs=missing_close_tag`, `get_weather{"city":"Oslo"}`}}},
	{"functiongemma bare word lenient", fg, false, false, fgCall + "call:get_weather{city:Paris}" + fgEnd,
		view{Calls: []string{`get_weather{"city":"Paris"} repairs=bare_identifier`}}},
	{"functiongemma bare word strict", fg, true, false, fgCall + "call:get_weather{city:Paris}" + fgEnd,
		view{Calls: []string{`get_weather{} error=bad_json`}}},
	{"functiongemma unclosed escape", fg, false, false, fgCall + "call:get_weather{city:<escape>Paris}" + fgEnd,
		view{Calls: []string{`get_weather{} error=bad_json`}}},
	{"functiongemma declaration echoed is text", fg, false, false,
		"<start_function_declaration>declaration:get_weather{description:<escape>Weather<escape>}<end_function_declaration> call:get_weather{city:<escape>Paris<escape>}",
		view{Content: "<start_function_declaration>declaration:get_weather{description:<escape>Weather<escape>}<end_function_declaration> call:get_weather{city:<escape>Paris<escape>}"}},
	{"functiongemma unknown tool", fg, false, false, fgCall + "call:rm{path:<escape>/<escape>}" + fgEnd,
		view{Calls: []string{`rm{"path":"/"} error=unknown_tool`}}},
}

// MiniMax-M2 and Seed-OSS, and a DeepSeek R1 distill's misspelt section.
var familyCases2 = []familyCase{
	{"minimax one call", mm, true, false, "<minimax:tool_call>\n<invoke name=\"get_weather\">\n<parameter name=\"city\">Paris</parameter>\n</invoke>\n</minimax:tool_call>",
		view{Calls: []string{`get_weather{"city":"Paris"}`}}},
	{"minimax parallel calls, prose around, values by schema", mm, true, false,
		"<think>Both.</think>\nOn it.\n<minimax:tool_call>\n<invoke name=\"read_file\">\n<parameter name=\"path\">a b.txt</parameter>\n<parameter name=\"limit\">\n5\n</parameter>\n</invoke>\n<invoke name=\"get_weather\">\n<parameter name=\"city\">Oslo</parameter>\n</invoke>\n</minimax:tool_call>\nDone.",
		view{Content: "<think>Both.</think>\nOn it.\n\nDone.", Calls: []string{`read_file{"path":"a b.txt","limit":5}`, `get_weather{"city":"Oslo"}`}}},
	{"minimax truncated", mm, false, false, "<minimax:tool_call>\n<invoke name=\"get_weather\">\n<parameter name=\"ci",
		view{Errors: []string{"truncated"}}},
	{"minimax section close eaten by stop", mm, true, false, "<minimax:tool_call>\n<invoke name=\"get_weather\">\n<parameter name=\"city\">Paris</parameter>\n</invoke>\n",
		view{Calls: []string{`get_weather{"city":"Paris"}`}}},
	{"minimax marker-like text", mm, false, false, "MiniMax writes <minimax:tool_call blocks and <invoke> tags.",
		view{Content: "MiniMax writes <minimax:tool_call blocks and <invoke> tags."}},
	{"seed one call", so, true, false, "<seed:tool_call>\n<function=get_weather>\n<parameter=city>Paris</parameter>\n</function>\n</seed:tool_call>",
		view{Calls: []string{`get_weather{"city":"Paris"}`}}},
	{"seed parallel calls, prose around", so, true, false,
		"Sure.\n<seed:tool_call>\n<function=get_weather>\n<parameter=city>Paris</parameter>\n</function>\n<function=read_file>\n<parameter=path>\na.txt\n</parameter>\n<parameter=limit>2</parameter>\n</function>\n</seed:tool_call> ok",
		view{Content: "Sure.\n ok", Calls: []string{`get_weather{"city":"Paris"}`, `read_file{"path":"a.txt","limit":2}`}}},
	{"seed truncated", so, false, false, "<seed:tool_call>\n<function=get_weather>\n<parameter=ci",
		view{Errors: []string{"truncated"}}},
	// A text value has no end of its own: cut by the end of the output
	// it is what was written (as in every format of pairs).
	{"seed value cut by the end of the output", so, false, false, "<seed:tool_call>\n<function=get_weather>\n<parameter=city>Pa",
		view{Calls: []string{`get_weather{"city":"Pa"} repairs=missing_close_tag`}}},
	{"seed missing function close", so, false, false, "<seed:tool_call>\n<function=get_weather>\n<parameter=city>Paris</parameter>\n</seed:tool_call>",
		view{Calls: []string{`get_weather{"city":"Paris"} repairs=missing_close_tag`}}},
	{"seed marker-like text", so, false, false, "Seed writes <seed:tool_call > blocks.",
		view{Content: "Seed writes <seed:tool_call > blocks."}},
	{"deepseek r1 distill's misspelt section", ds, false, false, "<｜tool_calls_begin｜>" + dsR1("get_weather", `{"city": "Paris"}`) + dsSecEnd,
		view{Calls: []string{`get_weather{"city":"Paris"} repairs=marker_spelling`}}},
	{"deepseek section spelt <｜tool▁calls｜>", ds, false, false, "<｜tool▁calls｜>" + dsV31("get_weather", `{"city": "Paris"}`) + dsSecEnd,
		view{Calls: []string{`get_weather{"city":"Paris"} repairs=marker_spelling`}}},

	// FunctionGemma's strings written as JSON strings (quoted_string).
	{"functiongemma json-quoted value lenient", fg, false, false, fgCall + `call:get_weather{city:"Paris"}` + fgEnd,
		view{Calls: []string{`get_weather{"city":"Paris"} repairs=quoted_string`}}},
	{"functiongemma json-quoted key lenient", fg, false, false, fgCall + `call:read_file{"path":<escape>a.txt<escape>,limit:2}` + fgEnd,
		view{Calls: []string{`read_file{"path":"a.txt","limit":2} repairs=quoted_string`}}},
	{"functiongemma json-quoted nested value and bare word", fg, false, false, fgCall + `call:set{meta:{k:"v \"q\""},tags:[a]}` + fgEnd,
		view{Calls: []string{`set{"meta":{"k":"v \"q\""},"tags":["a"]} repairs=bare_identifier,quoted_string`}}},
	{"functiongemma json-quoted value strict", fg, true, false, fgCall + `call:get_weather{city:"Paris"}` + fgEnd,
		view{Calls: []string{`get_weather{} error=bad_json`}}},
}

// Phi-4-mini's and Granite's <|tool_call|>[…] and Apriel's
// <tool_calls>[…]</tool_calls> in auto: the markers are the models' own,
// so strict reads them, and they are the call block's, not content.
var familyCases3 = []familyCase{
	{"phi-4-mini call", au, true, false, `<|tool_call|>[{"name": "get_weather", "arguments": {"city": "Paris"}}]<|/tool_call|>`,
		view{Calls: []string{`get_weather{"city":"Paris"}`}}},
	{"phi-4-mini parallel calls, prose around", au, true, false,
		"On it.\n" + `<|tool_call|>[{"name": "get_weather", "arguments": {"city": "Paris"}}, {"name": "read_file", "arguments": {"path": "a"}}]` + "\n<|/tool_call|>\nDone.",
		view{Content: "On it.\n\nDone.", Calls: []string{`get_weather{"city":"Paris"}`, `read_file{"path":"a"}`}}},
	{"granite call, never closed", au, true, false, `<|tool_call|>[{"name": "get_weather", "arguments": {"city": "Paris"}}] Then I will answer.`,
		view{Content: " Then I will answer.", Calls: []string{`get_weather{"city":"Paris"}`}}},
	{"granite call object", au, true, false, `<|tool_call|>{"name": "get_weather", "arguments": {"city": "Paris"}}`,
		view{Calls: []string{`get_weather{"city":"Paris"}`}}},
	{"phi-4-mini truncated", au, false, false, `<|tool_call|>[{"name": "get_weather", "arguments": {"city": "Pa`,
		view{Errors: []string{"truncated"}}},
	{"phi-4-mini single quotes lenient", au, false, false, `<|tool_call|>[{'name': 'get_weather', 'arguments': {'city': 'Paris'}}]<|/tool_call|>`,
		view{Calls: []string{`get_weather{"city":"Paris"} repairs=single_quotes`}}},
	{"phi-4-mini unknown tool", au, false, false, `<|tool_call|>[{"name": "rm", "arguments": {}}]<|/tool_call|>`,
		view{Calls: []string{`rm{} error=unknown_tool`}}},
	{"phi-4-mini marker in prose is text", au, false, true, "Phi writes <|tool_call|> and then <|/tool_call|>.",
		view{Content: "Phi writes <|tool_call|> and then <|/tool_call|>."}},
	{"apriel call", au, true, false, `<tool_calls>[{"name": "get_weather", "arguments": {"city": "Paris"}}]</tool_calls>`,
		view{Calls: []string{`get_weather{"city":"Paris"}`}}},
	{"apriel parallel calls, prose around", au, true, false,
		"Checking.\n<tool_calls>\n" + `[{"name": "get_weather", "arguments": {"city": "Paris"}}, {"name": "read_file", "arguments": {"path": "a", "limit": 3}}]` + "\n</tool_calls>\nDone.",
		view{Content: "Checking.\n\nDone.", Calls: []string{`get_weather{"city":"Paris"}`, `read_file{"path":"a","limit":3}`}}},
	{"apriel close eaten by stop", au, true, false, `<tool_calls>[{"name": "get_weather", "arguments": {"city": "Paris"}}]`,
		view{Calls: []string{`get_weather{"city":"Paris"}`}}},
	{"apriel missing close before prose", au, false, false, `<tool_calls>[{"name": "get_weather", "arguments": {"city": "Paris"}}] Done.`,
		view{Content: " Done.", Calls: []string{`get_weather{"city":"Paris"} repairs=missing_close_tag`}}},
	{"apriel truncated", au, false, false, `<tool_calls>[{"name": "get_weather", "arguments": {"ci`,
		view{Errors: []string{"truncated"}}},
	{"apriel tag in prose is text", au, false, true, "Apriel wraps calls in <tool_calls> tags: <tool_calls>[1, 2]</tool_calls>.",
		view{Content: "Apriel wraps calls in <tool_calls> tags: <tool_calls>[1, 2]</tool_calls>."}},
	{"apriel unregistered tool is text", au, false, false, `<tool_calls>[{"name": "rm", "arguments": {}}]</tool_calls>`,
		view{Content: `<tool_calls>[{"name": "rm", "arguments": {}}]</tool_calls>`}},
}

func allFamilyCases() []familyCase {
	return slices.Concat(familyCases, familyCases2, familyCases3)
}

var (
	mm = []string{"minimax-m2", "auto"}
	so = []string{"seed-oss", "auto"}
	au = []string{"auto"}
)

func TestFamilyFormats(t *testing.T) {
	for _, c := range allFamilyCases() {
		for _, format := range c.formats {
			t.Run(c.name+"/"+format, func(t *testing.T) {
				opts := Options{Tools: testTools, Strict: c.strict}
				if c.noTools {
					opts.Tools = nil
				}
				whole := merged(collect(t, format, opts, []string{c.in}))
				if got := reconstruct(whole); got != c.in {
					t.Fatalf("bytes lost or added:\n%s", cmp.Diff(c.in, got))
				}
				for n := 1; n <= 7; n++ {
					if d := cmp.Diff(whole, merged(collect(t, format, opts, chunked(c.in, n)))); d != "" {
						t.Fatalf("chunks of %d differ (-whole +chunked):\n%s", n, d)
					}
				}
				r := resultOf(whole)
				if d := cmp.Diff(c.want, viewOf(r)); d != "" {
					t.Errorf("%q (-want +got):\n%s", c.in, d)
				}
				for _, call := range r.Calls {
					if c.strict && len(call.Repairs) > 0 {
						t.Errorf("strict parse repaired %s: %v", call.Name, call.Repairs)
					}
				}
			})
		}
	}
}

// TestFormatKimiCallIDs: Kimi K2's calls keep the ID the model wrote,
// functions.NAME:IDX, which its template writes back into history; the
// call start carries the positional ID.
func TestFormatKimiCallIDs(t *testing.T) {
	in := kSec + kimiCall("get_weather", 0, `{"city":"Paris"}`) + kimiCall("read_file", 1, `{"path":"a"}`) + kSecEnd
	var starts, ids []string
	for _, e := range collect(t, "kimi-k2", Options{Tools: testTools}, chunked(in, 3)) {
		switch e.Type {
		case EventCallStart:
			starts = append(starts, e.Call.ID)
		case EventCall:
			ids = append(ids, e.Call.ID)
		}
	}
	if d := cmp.Diff([]string{"functions.get_weather:0", "functions.read_file:1"}, ids); d != "" {
		t.Errorf("call IDs (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"call_0", "call_1"}, starts); d != "" {
		t.Errorf("call start IDs (-want +got):\n%s", d)
	}
}

// TestAutoFormatKnownShapes pins what auto reads of other current models'
// calls (lenient, with the catalog), next to the families above: the
// call comes out; the markers auto has no opener for stay content.
func TestAutoFormatKnownShapes(t *testing.T) {
	for _, c := range []struct {
		name, in string
		want     view
	}{
		{"llama python_tag", `<|python_tag|>{"name": "get_weather", "parameters": {"city": "Paris"}}`,
			view{Calls: []string{`get_weather{"city":"Paris"}`}}},
		{"gemma tool_code fence", "```tool_code\nget_weather(city=\"Paris\")\n```",
			view{Calls: []string{`get_weather{"city":"Paris"} repairs=code_fence`}}},
		{"phi-4", `<|tool_call|>[{"name": "get_weather", "arguments": {"city": "Paris"}}]<|/tool_call|>`,
			view{Calls: []string{`get_weather{"city":"Paris"}`}}},
		{"command-r action", "Action: ```json\n[{\"tool_name\": \"get_weather\", \"parameters\": {\"city\": \"Paris\"}}]\n```",
			view{Content: "Action: ", Calls: []string{`get_weather{"city":"Paris"} repairs=code_fence,array_wrapped,name_key`}}},
		{"apriel", `<tool_calls>[{"name": "get_weather", "arguments": {"city": "Paris"}}]</tool_calls>`,
			view{Calls: []string{`get_weather{"city":"Paris"}`}}},
		{"xlam", `{"tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}}]}`,
			view{Calls: []string{`get_weather{"city":"Paris"} repairs=nested_call`}}},
		{"mistral name args", `[TOOL_CALLS]get_weather[ARGS]{"city": "Paris"}`,
			view{Calls: []string{`get_weather{"city":"Paris"}`}}},
		{"minimax-m2", "<minimax:tool_call>\n<invoke name=\"get_weather\">\n<parameter name=\"city\">Paris</parameter>\n</invoke>\n</minimax:tool_call>",
			view{Calls: []string{`get_weather{"city":"Paris"}`}}},
		{"seed-oss", "<seed:tool_call>\n<function=get_weather>\n<parameter=city>Paris</parameter>\n</function>\n</seed:tool_call>",
			view{Calls: []string{`get_weather{"city":"Paris"}`}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			whole := merged(collect(t, "auto", Options{Tools: testTools}, []string{c.in}))
			if got := reconstruct(whole); got != c.in {
				t.Fatalf("bytes lost or added:\n%s", cmp.Diff(c.in, got))
			}
			if d := cmp.Diff(whole, merged(collect(t, "auto", Options{Tools: testTools}, chunked(c.in, 3)))); d != "" {
				t.Fatalf("chunked (-whole +chunked):\n%s", d)
			}
			if d := cmp.Diff(c.want, viewOf(resultOf(whole))); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

// TestFamilyFormatStops: output cut where a format's stop sequence
// would end generation still gives the call, with no error.
func TestFamilyFormatStops(t *testing.T) {
	for format, in := range map[string]string{
		"deepseek":      dsSec + dsV31("get_weather", `{"city":"Paris"}`) + dsSecEnd + " " + dsml(dsmlInvoke("get_weather", dsmlParam("city", "true", "Paris"))),
		"kimi-k2":       kSec + kimiCall("get_weather", 0, `{"city":"Paris"}`) + kSecEnd,
		"functiongemma": fgCall + "call:get_weather{city:<escape>Paris<escape>}" + fgEnd + "<start_function_response>response:get_weather{}",
		"minimax-m2":    "<minimax:tool_call>\n<invoke name=\"get_weather\">\n<parameter name=\"city\">Paris</parameter>\n</invoke>\n</minimax:tool_call>",
		"seed-oss":      "<seed:tool_call>\n<function=get_weather>\n<parameter=city>Paris</parameter>\n</function>\n</seed:tool_call>",
	} {
		stops := StopSequences(format)
		if len(stops) == 0 {
			t.Errorf("%s: no stop sequences", format)
		}
		for _, s := range stops {
			i := strings.LastIndex(in, s)
			if i < 0 {
				t.Fatalf("%s: stop %q not in the example", format, s)
			}
			r, err := String(format, in[:i], Options{Tools: testTools, Strict: true})
			if err != nil {
				t.Fatal(err)
			}
			if len(r.Calls) == 0 || r.Calls[len(r.Calls)-1].Err != nil || len(r.Errors) > 0 {
				t.Errorf("%s cut at %q: %+v", format, s, viewOf(r))
			}
		}
	}
}

package parse

import (
	"strings"
	"testing"
)

// quotedCalls are calls a model quotes while it reasons, one in each
// syntax auto reads (read_file is a registered tool).
var quotedCalls = strings.Join([]string{
	`<tool_call>{"name": "read_file", "arguments": {"path": "x"}}</tool_call>`,
	`{"name": "read_file", "parameters": {"path": "x"}}`,
	`[read_file(path="x")]`,
	`<function_calls><invoke name="read_file"><parameter name="path">x</parameter></invoke></function_calls>`,
	`<read_file><path>x</path></read_file>`,
	`<|python_tag|>{"name": "read_file", "parameters": {"path": "x"}}`,
	`[TOOL_CALLS][{"name": "read_file", "arguments": {"path": "x"}}]`,
	dsSec + dsV31("read_file", `{"path":"x"}`) + dsSecEnd,
	">>>read_file\n{\"path\": \"x\"}",
	`<|tool_call|>[{"name": "read_file", "arguments": {"path": "x"}}]<|/tool_call|>`,
	`<tool_calls>[{"name": "read_file", "arguments": {"path": "x"}}]</tool_calls>`,
	"<seed:tool_call>\n<function=read_file>\n<parameter=path>x</parameter>\n</function>\n</seed:tool_call>",
	"```json\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"x\"}}\n```",
}, ", ")

const (
	hAnalysis = "<|channel|>analysis<|message|>"
	hFinal    = "<|end|><|start|>assistant<|channel|>final<|message|>"
	hWeather  = `<|start|>assistant to=functions.get_weather<|channel|>commentary json<|message|>{"city": "Paris"}<|call|>`
	seedCall  = "<seed:tool_call>\n<function=get_weather>\n<parameter=city>Paris</parameter>\n</function>\n</seed:tool_call>"
	seedQuote = "<seed:tool_call>\n<function=read_file>\n<parameter=path>x</parameter>\n</function>\n</seed:tool_call>"
	weatherTC = `<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>`
	mistralTC = `[TOOL_CALLS][{"name": "get_weather", "arguments": {"city": "Paris"}}]`
)

var (
	harmonyFormats = []string{"harmony", "auto"}
	seedFormats    = []string{"seed-oss", "auto"}
	mistralFormats = []string{"mistral", "auto"}
)

// reasoningPartCases: reasoning never yields a call, whichever way the
// family marks it (gpt-oss's analysis channel, Seed-OSS's <seed:think>,
// Magistral's [THINK]), and every byte of it is reasoning text.
var reasoningPartCases = []partCase{
	// gpt-oss: the analysis channel.
	{"harmony analysis quoting calls is reasoning", harmonyFormats, false,
		hAnalysis + "I could write " + quotedCalls + "." + hFinal + "It is sunny.<|return|>",
		[]string{"framing:" + hAnalysis, "reasoning:I could write " + quotedCalls + ".", "framing:" + hFinal,
			"content:It is sunny.", "framing:<|return|>"}},
	{"harmony analysis quoting a call, then the call", harmonyFormats, false,
		hAnalysis + "Write " + weatherTC + "? No: a header.<|end|>" + hWeather,
		[]string{"framing:" + hAnalysis, "reasoning:Write " + weatherTC + "? No: a header.", "framing:<|end|>", "call:get_weather"}},
	{"harmony analysis cut off inside a quoted call", harmonyFormats, false,
		hAnalysis + `I could call <tool_call>{"name": "read_fi`,
		[]string{"framing:" + hAnalysis, `reasoning:I could call <tool_call>{"name": "read_fi`}},
	{"harmony analysis ending in a marker's prefix", harmonyFormats, false,
		hAnalysis + "Call <tool_ca",
		[]string{"framing:" + hAnalysis, "reasoning:Call <tool_ca"}},
	{"harmony analysis cut off by a header, then a quote is content", []string{"harmony"}, false,
		hAnalysis + "a " + weatherTC + "<|channel|>final<|message|>b " + weatherTC,
		[]string{"framing:" + hAnalysis, "reasoning:a " + weatherTC, "framing:<|channel|>final<|message|>", "content:b " + weatherTC}},
	{"a call in the final message is a call in auto", []string{"auto"}, false,
		hAnalysis + "Plan " + weatherTC + "." + hFinal + "On it. " + weatherTC + "<|return|>",
		[]string{"framing:" + hAnalysis, "reasoning:Plan " + weatherTC + ".", "framing:" + hFinal, "content:On it. ",
			"call:get_weather", "framing:<|return|>"}},
	{"after the analysis message ends, calls are read again", []string{"auto"}, false,
		hAnalysis + "Plan " + weatherTC + ".<|end|>" + weatherTC,
		[]string{"framing:" + hAnalysis, "reasoning:Plan " + weatherTC + ".", "framing:<|end|>", "call:get_weather"}},
	{"a call in a header without recipient is framing", harmonyFormats, false,
		"<|channel|>final " + weatherTC + "<|message|>Hi",
		[]string{"framing:<|channel|>final " + weatherTC + "<|message|>", "content:Hi"}},
	{"a preamble's quoted call is a call in auto", []string{"auto"}, false,
		"<|channel|>commentary<|message|>" + weatherTC + "<|end|>",
		[]string{"framing:<|channel|>commentary<|message|>", "call:get_weather", "framing:<|end|>"}},

	// Seed-OSS: <seed:think>, with its budget reflections inside.
	{"seed think block", seedFormats, false,
		"<seed:think>Plan. <seed:cot_budget_reflect>I have used 12 tokens, and there are 500 tokens remaining for use.</seed:cot_budget_reflect> I could write " +
			seedQuote + " or " + quotedCalls + "</seed:think>\n" + seedCall,
		[]string{"framing:<seed:think>", "reasoning:Plan. <seed:cot_budget_reflect>I have used 12 tokens, and there are 500 tokens remaining for use.</seed:cot_budget_reflect> I could write " +
			seedQuote + " or " + quotedCalls, "framing:</seed:think>", "content:\n", "call:get_weather"}},
	{"seed thinking budget 0", seedFormats, false,
		"<seed:think><seed:cot_budget_reflect>The current thinking budget is 0, so I will directly start answering the question.</seed:cot_budget_reflect>\n\n</seed:think>It is 3.",
		[]string{"framing:<seed:think>", "reasoning:<seed:cot_budget_reflect>The current thinking budget is 0, so I will directly start answering the question.</seed:cot_budget_reflect>\n\n",
			"framing:</seed:think>", "content:It is 3."}},
	{"seed think unclosed is reasoning", seedFormats, false, "<seed:think>I will call " + seedCall,
		[]string{"framing:<seed:think>", "reasoning:I will call " + seedCall}},
	{"seed think with a partial closer at the end", seedFormats, false, " <seed:think>a </seed:thi",
		[]string{"content: ", "framing:<seed:think>", "reasoning:a </seed:thi"}},
	{"seed think, <think>'s closer inside is reasoning", seedFormats, false, "<seed:think>a</think>b</seed:think>c",
		[]string{"framing:<seed:think>", "reasoning:a</think>b", "framing:</seed:think>", "content:c"}},
	{"seed think open", []string{"seed-oss"}, true, "plan " + seedQuote + "</seed:think>It is 3.",
		[]string{"reasoning:plan " + seedQuote, "framing:</seed:think>", "content:It is 3."}},
	{"a seed call at the start is no reasoning block", seedFormats, false, seedCall + " ok",
		[]string{"call:get_weather", "content: ok"}},
	{"seed think in another format is content", []string{"hermes", "mistral"}, false, "<seed:think>a</seed:think>b",
		[]string{"content:<seed:think>a</seed:think>b"}},
	{"a later seed think is prose", seedFormats, false, "Answer: <seed:think>a</seed:think>",
		[]string{"content:Answer: <seed:think>a</seed:think>"}},

	// Magistral, Devstral: [THINK]…[/THINK].
	{"mistral think block", mistralFormats, false,
		"[THINK]I could write " + quotedCalls + "[/THINK]" + mistralTC,
		[]string{"framing:[THINK]", "reasoning:I could write " + quotedCalls, "framing:[/THINK]", "call:get_weather"}},
	{"mistral think unclosed, partial closer", mistralFormats, false, "\n[THINK]plan [TOOL_CALLS] [/THI",
		[]string{"content:\n", "framing:[THINK]", "reasoning:plan [TOOL_CALLS] [/THI"}},
	{"mistral [TOOL_CALLS] at the start is no reasoning block", mistralFormats, false, mistralTC,
		[]string{"call:get_weather"}},
	{"a later [THINK] is prose", mistralFormats, false, "Answer: [THINK]x[/THINK]",
		[]string{"content:Answer: [THINK]x[/THINK]"}},
	{"[THINK] in another format is content", []string{"hermes", "seed-oss"}, false, "[THINK]a[/THINK]b",
		[]string{"content:[THINK]a[/THINK]b"}},
}

// TestReasoningPairsNoPrefix: no reasoning opener of a format is a prefix
// of another (thinkStart takes the first complete one, which must not
// depend on the chunking).
func TestReasoningPairsNoPrefix(t *testing.T) {
	for _, f := range Formats() {
		ps := reasoningPairs(f)
		for i, a := range ps {
			for j, b := range ps {
				if i != j && strings.HasPrefix(b[0], a[0]) {
					t.Errorf("%s: %q is a prefix of %q", f, a[0], b[0])
				}
			}
		}
	}
}

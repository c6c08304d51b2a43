package derive

import (
	"encoding/json"
	"fmt"
)

// Request is one render of a chat template: what transformers'
// apply_chat_template passes it (messages, tools or none, the generation
// prompt flag). Template-specific kwargs are the Renderer's business.
type Request struct {
	Messages json.RawMessage `json:"messages"`
	// Tools is the OpenAI-shaped tool list, nil for "no tools" (the
	// template then sees tools=None).
	Tools               json.RawMessage `json:"tools"`
	AddGenerationPrompt bool            `json:"add_generation_prompt"`
}

// Renderer renders a chat template. A template that raises returns an
// error; derivation treats it as "this probe shape is not accepted" and
// tries the next input style.
type Renderer interface {
	Render(Request) (string, error)
}

// Probe is one named request of the probe set.
type Probe struct {
	Name    string  `json:"name"`
	Request Request `json:"request"`
}

// The sentinels: distinctive names and values that cannot occur in a
// template's own text, so finding them in a render says where the model's
// content went. Two tools with names that share no prefix beyond "probe_",
// and argument values of several JSON types (a string, an integer, a
// boolean) whose rendered forms are unique.
const (
	sentinelUser      = "PROBE_USER_TEXT"
	sentinelAnswer    = "PROBE_ANSWER_TEXT"
	sentinelReasoning = "PROBE_REASONING_TEXT"
	sentinelUser2     = "PROBE_SECOND_USER_TEXT"
	sentinelTool1     = "probe_alpha"
	sentinelTool2     = "probe_beta"
	// Mistral Nemo insists on 9 alphanumerics; others ignore ids.
	sentinelID1 = "probe0001"
	sentinelID2 = "probe0002"
)

// sentinelArgs1 and sentinelArgs2 are the arguments of the two probe calls,
// in the order the template receives them.
var (
	sentinelArgs1 = []arg{{"first_arg", `"alpha_value"`}, {"second_arg", `4242`}, {"third_arg", `true`}}
	sentinelArgs2 = []arg{{"beta_arg", `"beta_value"`}}
)

// arg is one argument: its key and its value as JSON text.
type arg struct{ key, value string }

func argsObject(args []arg) json.RawMessage {
	b := []byte{'{'}
	for i, a := range args {
		if i > 0 {
			b = append(b, ", "...)
		}
		k, _ := json.Marshal(a.key)
		b = append(b, k...)
		b = append(b, ": "...)
		b = append(b, a.value...)
	}
	return append(b, '}')
}

// probeTools is the catalog of the probes: both probe tools, with a schema
// whose types match the sentinel arguments (templates such as Qwen3-Coder
// render parameters from the schema).
const probeTools = `[{"type": "function", "function": {"name": "probe_alpha", "description": "Probe tool one.", ` +
	`"parameters": {"type": "object", "properties": {"first_arg": {"type": "string", "description": "A string."}, ` +
	`"second_arg": {"type": "integer", "description": "An integer."}, "third_arg": {"type": "boolean", "description": "A flag."}}, ` +
	`"required": ["first_arg", "second_arg", "third_arg"]}}}, ` +
	`{"type": "function", "function": {"name": "probe_beta", "description": "Probe tool two.", ` +
	`"parameters": {"type": "object", "properties": {"beta_arg": {"type": "string", "description": "A string."}}, ` +
	`"required": ["beta_arg"]}}}]`

// Style is one shape of an assistant tool-call message. Templates disagree
// on it (see the hf / vllm / openai styles of the reference renders):
// arguments as an object or a JSON string, content absent, "" or null.
type Style struct {
	Name string `json:"name"`
	// StringArguments writes arguments as a JSON string (OpenAI wire shape).
	StringArguments bool `json:"string_arguments"`
	// Content is the message's content field as JSON ("" for absent).
	Content string `json:"content"`
	// NamedIDs gives each call the id functions.NAME:INDEX, for templates
	// that write a call's id as its head instead of its name (Kimi K2
	// Instruct 0905: <|tool_call_begin|>{{ tool_call['id'] }}); the
	// convention cannot be read from such a template, only its use.
	NamedIDs bool `json:"named_ids,omitempty"`
}

// Styles are tried in this order; the first that renders the call wins.
// vllm (content "") comes first: it is the shape every engine renders,
// where hf's missing content makes Jinja2 raise in templates that read it
// (Devstral) while toolharness's engine renders it as empty. string-args (arguments as a JSON string, no content) is for templates
// that concatenate the arguments as text and refuse a null content
// (Apertus); named-ids is tried only when no other style rendered the
// call's name but one rendered its id where the call goes.
var Styles = []Style{
	{Name: "vllm", Content: `""`},
	{Name: "hf"},
	{Name: "openai", StringArguments: true, Content: `null`},
	{Name: "string-args", StringArguments: true},
	{Name: "named-ids", NamedIDs: true},
}

// StyleNamed returns the input style of that name (the first when none is).
func StyleNamed(name string) Style {
	for _, s := range Styles {
		if s.Name == name {
			return s
		}
	}
	return Styles[0]
}

// Call is one tool call of a probe or round-trip message.
type Call struct {
	ID, Name  string
	Arguments json.RawMessage // a JSON object
}

// AssistantCalls writes an assistant message holding calls in style s.
func AssistantCalls(s Style, calls []Call) json.RawMessage {
	b := []byte(`{"role": "assistant"`)
	if s.Content != "" {
		b = append(b, `, "content": `...)
		b = append(b, s.Content...)
	}
	b = append(b, `, "tool_calls": [`...)
	for i, c := range calls {
		if i > 0 {
			b = append(b, ", "...)
		}
		args := []byte(c.Arguments)
		if s.StringArguments {
			args, _ = json.Marshal(string(c.Arguments))
		}
		id := c.ID
		if s.NamedIDs {
			id = fmt.Sprintf("functions.%s:%d", c.Name, i)
		}
		b = fmt.Appendf(b, `{"id": %s, "type": "function", "function": {"name": %s, "arguments": %s}}`,
			quote(id), quote(c.Name), args)
	}
	return append(b, "]}"...)
}

func quote(s string) []byte { b, _ := json.Marshal(s); return b }

func userMessage() string {
	return `{"role": "user", "content": "` + sentinelUser + `"}`
}

func messages(ms ...string) json.RawMessage {
	b := []byte{'['}
	for i, m := range ms {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = append(b, m...)
	}
	return append(b, ']')
}

// probeCalls are the sentinel calls: one, or two in parallel.
func probeCalls(n int) []Call {
	calls := []Call{
		{ID: sentinelID1, Name: sentinelTool1, Arguments: argsObject(sentinelArgs1)},
		{ID: sentinelID2, Name: sentinelTool2, Arguments: argsObject(sentinelArgs2)},
	}
	return calls[:n]
}

// Probe names, as Probes returns them and derivation reads them.
const (
	probeCatalog   = "catalog"
	probeNoTools   = "no-tools"
	probeAnswer    = "answer"
	probeEmpty     = "empty"
	probeReasoning = "reasoning"
	// probeThinkingBlock gives the reasoning as a content block of type
	// thinking (Mistral's convention: Magistral renders [THINK]…[/THINK]
	// from it and ignores reasoning_content).
	probeThinkingBlock = "reasoning-block"
	probeNextUser      = "answer-then-user"
)

func probeCallName(n int, s Style) string { return fmt.Sprintf("calls-%d.%s", n, s.Name) }

// Probes returns the fixed probe set derivation renders, in order. It is a
// closed list (derivation asks for nothing else), so renders of it can be
// recorded once by a reference renderer and replayed.
func Probes() []Probe {
	tools := json.RawMessage(probeTools)
	user := userMessage()
	answer := `{"role": "assistant", "content": "` + sentinelAnswer + `"}`
	ps := []Probe{
		{probeCatalog, Request{Messages: messages(user), Tools: tools, AddGenerationPrompt: true}},
		{probeNoTools, Request{Messages: messages(user), AddGenerationPrompt: true}},
		{probeAnswer, Request{Messages: messages(user, answer), Tools: tools}},
		{probeNextUser, Request{Messages: messages(user, answer, `{"role": "user", "content": "`+sentinelUser2+`"}`), Tools: tools}},
		{probeEmpty, Request{Messages: messages(user, `{"role": "assistant", "content": ""}`), Tools: tools}},
		{probeReasoning, Request{Messages: messages(user, `{"role": "assistant", "content": "`+sentinelAnswer+
			`", "reasoning_content": "`+sentinelReasoning+`", "thinking": "`+sentinelReasoning+`"}`), Tools: tools}},
		{probeThinkingBlock, Request{Messages: messages(user, `{"role": "assistant", "content": [{"type": "thinking", "thinking": "`+
			sentinelReasoning+`"}, {"type": "text", "text": "`+sentinelAnswer+`"}]}`), Tools: tools}},
	}
	for _, s := range Styles {
		for n := 1; n <= 2; n++ {
			ps = append(ps, Probe{probeCallName(n, s), Request{
				Messages: messages(user, string(AssistantCalls(s, probeCalls(n)))), Tools: tools}})
		}
	}
	return ps
}

// Package derive learns how a model writes tool calls from its own chat
// template, by rendering probe conversations and diffing the renders (as
// llama.cpp's autoparser does), and describes the result as a parse.Syntax
// whose parser reads the template's own calls on its own; where a built-in
// format's parser reads them the same way, that format is named too.
//
// No template is looked up by name or fingerprint: every marker is read
// out of renders of sentinel conversations (the synthetic templates of the
// tests, with invented markers, are derived the same way). Two things are
// known in advance, and said here: the built-in formats' markers, which
// the derived syntax is compared with to name a format (builtin.go), and
// one id convention, functions.NAME:INDEX, that the named-ids probe style
// gives calls (Kimi K2's, published with its template): a template that
// writes the call's id where its name goes shows the name only if its ids
// carry it, and no render says how they do. That style is tried only when
// no other style shows the call's name and one shows its id there.
//
// # Probes
//
// [Probes] is the fixed probe set: a user turn with the probe catalog and
// without tools (does the template render the catalog?), an answer and an
// answer followed by another user turn (end-of-turn and stop strings), an
// empty assistant turn (the reference the call renders are diffed
// against), an answer with reasoning (reasoning_content and thinking) and
// one with a thinking content block (Mistral's convention; only special
// tokens count as its markers), and assistant turns with one call and
// with two calls in each input [Styles] (vllm: arguments as an object,
// content ""; hf: the same with no content; openai: arguments as a JSON string, content
// null; string-args: a JSON string, no content; named-ids: ids
// functions.NAME:INDEX, tried only when no other style showed the call's
// name but one showed its id where the call goes, as Kimi K2 Instruct
// 0905 writes the id as the call's head), since templates disagree on
// what a tool-call message looks like. The probe calls use sentinel names
// (probe_alpha, probe_beta) and arguments of several JSON types.
//
// # Diffs
//
// Renders are compared token by token (special tokens such as <|im_end|>
// or [TOOL_CALLS] are never split). The region where a call render differs
// from the empty turn holds the call; inside it the name and arguments are
// located (a JSON object or list holding both, a Python call, the name
// followed by a JSON object, or key/value pairs in the arguments' order),
// which gives the body shape. With two calls, what precedes the first core
// and what separates the two give, by common suffix and prefix, the call
// opener, the call closer, the separator and a section around all calls;
// gaps between name, id and arguments give their prefixes (an id is the
// probe's own id or a per-call index; a call's own id right before what
// precedes its name comes first: Syntax.IDFirst). Besides JSON, the arguments may be
// an object with bare keys whose strings sit between a quote token
// (FunctionGemma's <escape>, Gemma 4's <|"|>: Syntax.Quote), the name may
// be the call object's key ({"NAME": {…}}, Syntax.NameAsKey), and the text
// between a pair's key and value may carry an attribute saying whether the
// value is a string (DSML's string="true|false", Syntax.TypeAttr). An
// input style that only prints the arguments as a Python dict (a template
// given arguments in a shape it does not expect) loses to any other.
//
// # Checks
//
// The derived syntax's parser must read the probe calls back out of the
// template's own renders of them (Result.ParsesOwnCalls; `templates
// inspect` fails when it does not). A built-in format is named only when
// its parser reads them the same way: the mapping is a speed and repair
// choice, never a different reading.
//
// # API
//
//	func Derive(r Renderer, tok Tokens) (Result, error)
//	func Template(t *templates.Jinja, now time.Time, extra map[string]json.RawMessage) (Result, error)
//	func Family(t *templates.Jinja, now time.Time) (templates.Family, Result, error)
//	func Own(fam templates.Family) (templates.Family, *Result, error)   // a loaded family adopts its derived syntax
//	func Adopt(fam templates.Family, res Result) templates.Family
//	func (r Result) NewParser(opts parse.Options) (*parse.Parser, error)
//	func (r Result) NewOutputParser(opts parse.Options) (*OutputParser, error)
//	func Prime(p *parse.Parser, tail string) *OutputParser
//	func PromptTail(prompt, callRender, user string, newParser func() (*parse.Parser, error), tool string) string
//	func (r Result) Describe() []Field
//	func (r Result) StopStrings() []string   // Stop, then RoleStops
//
// A Result says whether the template renders the catalog and calls,
// whether it renders parallel calls, the built-in format (hermes,
// qwen3-coder, mistral, json, harmony, glm45, glm4, deepseek with V3.2's
// DSML, kimi-k2, minimax-m2, seed-oss, functiongemma, xml, pythonic) or
// the derived Syntax (also when a built-in format would read the calls but
// not the template's reasoning markers, which only <think> and harmony's
// channels are), the reasoning markers (and whether the generation prompt
// opens reasoning), the prompt tail (the end of the generation prompt that
// is already call syntax, such as functionary v3.2's ">>>"), the stop
// strings (the end-of-turn markers, the marker the template writes after
// its calls, EOS), the role stops (the template's own marker of a new
// user turn, "<|im_start|>user", where a model that runs past its turn
// starts inventing the next), whether the parser reads the template's own
// calls, and notes on what could not be derived. NewParser reads a whole
// turn; NewOutputParser reads the model's output after the generation
// prompt, fed the prompt tail first (the tail never shows in text, and
// offsets and Raw are the output's own). Family makes a loaded template a templates.Family whose native
// format is its own call syntax.
package derive

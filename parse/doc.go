// Package parse turns a model's raw text, arriving in arbitrary chunks, into
// text (the answer, reasoning and the markup around them, every byte kept)
// and tool calls: one streaming parser per tool-call format, typed error
// events, lenient repairs and schema-driven value decoding.
//
// It knows nothing of servers or prompts.
//
// # Formats
//
// [Formats] lists the names, which are part of the CLI contract:
//
//	xml          <function_calls><invoke name="T"><parameter name="p">v</parameter></invoke></function_calls>
//	hermes       <tool_call>{"name": …, "arguments": {…}}</tool_call>
//	json         bare {"name": …, "parameters": {…}} objects (Llama 3.x), optionally after <|python_tag|>
//	mistral      [TOOL_CALLS][{"name": …, "arguments": {…}}, …]   (also [TOOL_CALLS]name[ARGS]{…})
//	qwen3-coder  <tool_call><function=T><parameter=p>v</parameter></function></tool_call>
//	pythonic     [get_weather(city="Paris"), read(path="a.txt", limit=5)]
//	             (also LFM2's <|tool_call_start|>[…]<|tool_call_end|>)
//	harmony      <|channel|>commentary to=functions.T <|constrain|>json<|message|>{…}<|call|>
//	             (also <|start|>assistant to=functions.T<|channel|>commentary json<|message|>…)
//	tags         <read_file><path>a.txt</path></read_file>   (one tag per registered tool)
//	glm4         get_weather\n{"city": "Paris"}   (a name line, then a JSON object; GLM-4)
//	glm45        <tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Paris</arg_value></tool_call>
//	deepseek     <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>{…}<｜tool▁call▁end｜><｜tool▁calls▁end｜>
//	             (V3.1; V3 and R1 write function<｜tool▁sep｜>get_weather\n```json\n{…}\n```), and
//	             V3.2's <｜DSML｜function_calls><｜DSML｜invoke name="T"><｜DSML｜parameter name="p" string="true">v…
//	kimi-k2      <|tool_calls_section_begin|><|tool_call_begin|>functions.T:0<|tool_call_argument_begin|>{…}<|tool_call_end|>…
//	functionary  >>>get_weather\n{"city": "Paris"}   (v3.2; >>>all\n is content)
//	functiongemma <start_function_call>call:get_weather{city:<escape>Paris<escape>}<end_function_call>
//	minimax-m2   <minimax:tool_call><invoke name="T"><parameter name="p">v</parameter></invoke></minimax:tool_call>
//	seed-oss     <seed:tool_call><function=T><parameter=p>v</parameter></function></seed:tool_call>
//	auto         any of the above, detected from the text itself, and also
//	             <|tool_call|>[…]<|/tool_call|> (Phi-4-mini; Granite 3.x leaves out the close)
//	             and <tool_calls>[…]</tool_calls> (Apriel)
//
// # API
//
//	func Formats() []string
//	func New(format string, opts Options) (*Parser, error)   // errors.Is(err, ErrUnknownFormat)
//	func NewSyntax(s Syntax, opts Options) (*Parser, error)  // errors.Is(err, ErrBadSyntax)
//	func (p *Parser) Feed(chunk string, emit func(Event))
//	func (p *Parser) Close(emit func(Event))
//	func (p *Parser) Reset()
//	func (p *Parser) Format() string
//	func String(format, text string, opts Options) (Result, error)
//	func NewCatalog(tools []chat.Tool) *Catalog  // Options.Catalog: a session's tools, read once
//	func StopSequences(format string) []string
//	func TurnMarkers() []string    // the markers of another turn the turn ends at
//	func StopStrings() []string    // the plain-text ones, as stop strings
//	func Kinds() []Kind            // the closed list of error kinds
//	func RepairKinds() []string    // every repair a call can carry
//	func Answer(evs []Event) string     // the text of the content parts
//	func Reasoning(evs []Event) string  // the text of the reasoning parts
//
//	type Options struct { Tools []chat.Tool; Catalog *Catalog; Strict bool; ThinkOpen bool; TurnMarkers []string }
//	type Event struct { Type EventType; Part Part; Text string; Call chat.ToolCall; Err *Error }
//	type Part uint8                // PartContent (0), PartReasoning, PartFraming
//	type Error struct { Kind Kind; Offset int; Message string; Raw string }
//	type Result struct { Content, Answer, Reasoning string; Calls []Call; Errors []*Error; EndTurn *Error }
//	type Call struct { chat.ToolCall; Err *Error }
//
// Feed allocates nothing while streaming prose; the memory a Parser
// keeps is the held-back marker prefix plus the call block being
// assembled, never the whole output.
//
// Call-dense output is cheap too: once a plain call has been read, the
// calls after it in the same framing are matched against that framing
// byte for byte (the quick cycle, quick.go), and anything else hands over
// to the general path, with the same events either way.
//
// A Parser is used by one goroutine at a time. Feed any chunking of the
// model's output, then Close once at end of stream; after Close (or Reset)
// the Parser can be reused for the next turn. emit is called synchronously,
// in order, with:
//
//   - EventText: text outside calls, as soon as it cannot be the start of a
//     marker, with the Part of the reply it is (see Parts of the reply).
//     Only a suffix that is a prefix of some marker is held back. Adjacent
//     text events of one part may be split differently for different
//     chunkings; their concatenation is the same.
//   - EventCallStart: a call block was recognised and its tool name is known
//     (Call.ID, Call.Name and Call.Offset are set), so a UI can show it early.
//     A JSON call object that does not start with its name (the arguments
//     first) has its call start when the object ends.
//   - EventCall: a call is complete (its closing marker arrived). Call holds
//     ID, Name, Arguments (a JSON object, keys in the model's order), Raw (the
//     exact span, markers included), Offset and Repairs. A call that was
//     recognised but names an unknown tool or has malformed arguments is
//     still an EventCall, with what could be decoded, and Err set.
//   - EventError: a problem not attached to a call (such as a block that was
//     never closed); Err.Raw holds the bytes concerned, so nothing is lost.
//   - EventEndTurn: the model went on past its turn with a marker of
//     another turn (see Invented turns); Err (kind overran_turn) says
//     where. Everything after it is PartOverrun text.
//
// Apart from the splitting of text, the events of every chunking equal those
// of a one-shot parse, parts included (fuzzed by FuzzChunkInvariance). Text
// is coalesced: the first three pieces of text of one Feed are emitted as
// they are (no copy), the rest is gathered into one event before the next
// call, the next part or the end of the Feed, so a megabyte of '[' is a few
// events, not a million. Framing is always gathered, so that a marker or a
// harmony header comes in one event.
//
// Calls without any marker are only looked for where the reply starts
// (after whitespace and a leading reasoning block): bare Python calls in
// pythonic and auto, GLM-4's name line in glm4 (and auto). After a code
// fence gave the turn's calls, later tentative blocks stay text: models
// that answer in a fence go on to explain it with code that repeats it.
//
// Call IDs are "call_0", "call_1", … by position in the turn, unless the
// model wrote one (mistral with ids; the call-start event still carries the
// positional ID). Calls read from one block (a mistral list, several
// <invoke> elements) share the block's Raw and Offset.
//
// Tentative blocks: bare JSON objects and lists, code fences, the
// <function_call>/<tools> wrappers, pythonic lists and tool tags are only
// calls when their first bytes look like one (a call key such as "name",
// an identifier followed by '(', …) and they name a registered tool (any
// name without a catalog); otherwise they stay content. In auto, bare JSON
// is native syntax (the json format), so strict auto accepts it.
//
// # Derived syntaxes
//
// NewSyntax builds a parser from a [Syntax]: a declarative description of
// how a model writes calls (markers, body shape, name and argument
// affixes), typically derived from the model's chat template. It runs on
// the same scanner, blocks and decoders as the named formats and keeps
// their contract (events, repairs, error kinds, schema-driven values,
// chunk invariance). Markers are matched piece by piece: whitespace
// inside a marker ("</function>\n</tool_call>") may differ in the
// model's output. A marker that is not a special token (">>>",
// "functools", "Action:") opens a tentative block, which stays text
// unless it holds a call naming a registered tool. parse/testdata/syntax
// holds the renders of 25 real templates the tests parse back.
//
// The named formats deepseek, kimi-k2, functionary, functiongemma,
// minimax-m2 and seed-oss are Syntaxes described in the package
// (families.go), with what their models need besides: DeepSeek's two call
// bodies in one format, Kimi K2's call IDs (functions.T:0, kept as
// Call.ID), DSML's typed values (string="false": JSON), FunctionGemma's
// argument notation. auto reads all of them; functionary's >>> only when a
// tool name follows it directly (no space: ">>> " is a Python prompt),
// then a line break and a JSON object.
//
// # Reasoning blocks
//
// A <think>…</think> block at the start of the output (after optional
// whitespace) is the model's reasoning, split off the way servers do it
// (vLLM's reasoning parsers, Ollama's thinking) in every format, strict or
// lenient: its bytes are emitted as PartReasoning text (the tags as
// PartFraming) as they stream (only a possible </think> prefix is held
// back), and are never scanned for calls, so a call the model quotes
// while reasoning is not a call. Families with markers of their own are
// split the same way: Seed-OSS's <seed:think>…</seed:think> (its budget
// reflections, <seed:cot_budget_reflect>…</seed:cot_budget_reflect>, are
// reasoning inside it) in seed-oss and auto, Magistral's and Devstral's
// [THINK]…[/THINK] in mistral and auto; gpt-oss's analysis channel is
// reasoning too (see Parts of the reply). With
// Options.ThinkOpen the prompt already opened the block (Qwen3
// "Thinking-2507" and DeepSeek-R1 templates end the generation prompt with
// "<think>\n") and the output is reasoning up to the first bare </think>
// (</seed:think> in seed-oss).
// Without ThinkOpen a bare </think> is plain text: recognising it after the
// fact would mean holding back the whole output, and only the caller that
// rendered the prompt knows where the block opened. A block that is never
// closed is reasoning to the end of the output (Ollama's and vLLM's
// streaming behaviour), so it holds no call. A <think> later in the answer
// is prose. When a registered tool is named "think" (tags and auto), its
// tag is a call and nothing is split.
//
// # Parts of the reply
//
// Every byte outside calls is text, so that text plus the calls' Raw give
// back the output and the agent can re-render the turn from it; Event.Part
// says which of it is the answer, as Ollama, vLLM and llama.cpp split
// thinking from content:
//
//	PartContent    the answer (the zero value: a consumer that ignores
//	               parts sees every text event as before)
//	PartReasoning  a leading reasoning block's inside (<think>, <seed:think>,
//	               [THINK]; the block ThinkOpen says the prompt opened,
//	               too); harmony's analysis channel
//	PartFraming    the reasoning block's markers; harmony's <|start|>assistant,
//	               <|channel|>C<|message|> headers, <|end|>, <|return|>,
//	               and a <|call|> outside a call
//	PartOverrun    an invented next turn, from its marker on (see Invented
//	               turns)
//
// In harmony and auto, the final channel's messages are content, and so
// are commentary messages without a recipient (preambles to calls); a
// header that names a recipient is a call block, its bytes in the call's
// Raw. An analysis message, like a header that names no recipient, is
// scanned for the harmony markers alone: a call the model quotes there
// (<|channel|>analysis<|message|>I could call <tool_call>{…}</tool_call>)
// is reasoning text, as in a <think> block, and the next harmony header
// or <|end|> ends the message as usual. A <|channel|> or <|start|> not
// followed by <|message|> within 512 bytes is framing itself, the text
// after it content; one cut off by the end of the output is framing to
// the end. Text before any marker, and
// after <|end|>, <|return|> or a harmony call, is content. In the other formats
// harmony markup is content. Answer and Reasoning give a turn's text by
// part, as do Result.Answer and Result.Reasoning (Result.Content is all
// text).
//
// # Error kinds
//
// Error.Kind is one of this closed list:
//
//	unclosed_block  (strict) a parameter or invoke element inside a call block
//	                was not closed; lenient parsing repairs it (missing_close_tag)
//	bad_json        the call's JSON (or Python literal) could not be read
//	bad_arguments   arguments were read but are not an object
//	unknown_tool    the call names a tool that is not in Options.Tools
//	missing_name    a call block without a tool name
//	bad_value       a raw-text parameter value does not fit its JSON Schema type
//	truncated       the stream ended inside a call block that cannot be completed
//	unexpected_tag  an element that has no place in the format (unknown
//	                parameter tag, stray element inside a call block)
//	input           (CLI batch mode only) an input line that is not a record
//	overran_turn    (EventEndTurn only) the reply went on with another turn
//
// Every Error has a byte Offset into the turn's text and a short Message a
// model can act on; Error() prefixes it with "parse: ".
//
// # Repairs
//
// By default the parsers accept what real models write around the format and
// record each fix by kind in chat.ToolCall.Repairs: code_fence, missing_open_tag,
// wrapper_tag (<function_call>, <tools>), arguments_key ("parameters", "args",
// "input" for "arguments"), arguments_string (arguments as a JSON string),
// array_wrapped (one call in a list), python_literals (True/False/None),
// single_quotes, trailing_comma, flattened_arguments (arguments as sibling keys
// of "name"), nested_call ({"function": {...}} / {"tool_call": {...}}),
// missing_braces, pythonic_call (name(args) where JSON was expected),
// positional_arguments (pythonic positional values mapped to the schema's
// parameters), name_key ("function"/"tool_name"/"tool" for "name"),
// missing_close_tag (a block or element that was not closed, where what
// follows shows it ended), missing_brackets (Python calls at the start of
// a reply without their list brackets), markdown_escape (calculate\_BMI),
// quoted_call (['f(a=1)']), bare_identifier (an unquoted variable name as
// a Python argument value, kept as a string; a bare word as a
// FunctionGemma value), marker_spelling (a family's marker in a spelling
// other than its template's: DeepSeek's with ASCII bars, Kimi K2's
// section marker in the singular), quoted_string (a FunctionGemma string
// or key in JSON quotes instead of between <escape> markers); and in
// Python calls what an AST decoder reads: tuple_value ((52.5, 13.4) as a
// list), expression_value (df['age'] as its source text; a bare name
// anywhere is bare_identifier), unescaped_quotes ('f(a='x')': a quoted
// call whose inner quotes are of the same kind), quoted_name
// ('f'(a=1)), tuple_list ((f(a=1), g(b=2))), line_continuation (a
// backslash at the end of a line between calls or arguments);
// json_call (JSON call objects where the syntax writes Python calls:
// LFM2's markers around a JSON list). A quoted call alone at the start
// of a reply is quoted_call and missing_brackets. A call object a
// bracket or two short or over before its closing tag, or before the
// ']' of its list, is closed there (missing_braces). With a
// catalog, a repaired block is only taken as a call when it names a
// registered tool; otherwise it stays content. Options.Strict disables
// every repair.
//
// A block whose closing marker never arrives is accepted when its content is
// complete, because the closing marker is usually a stop sequence
// ([StopSequences]) that the server removed.
//
// # Invented turns
//
// A model its server does not stop at the end of its turn may go on
// writing the next ones itself: an invented user question, then another
// answer with more calls. Those calls are not this turn's. At the first
// marker of another turn ([TurnMarkers]: <|im_start|>user,
// <|start|>user, <|start_header_id|>user, and at the start of a line
// ### Instruction, ### Response, Human:, User:; Options.TurnMarkers adds
// a template's own), in every format, strict or lenient, outside call
// blocks and reasoning, the parser emits an EventEndTurn and the rest of
// the output is PartOverrun text, never calls. [StopStrings] gives the
// plain-text markers for a backend to stop at.
//
// # Values
//
// For xml, qwen3-coder and tags, parameter values are raw text. With a
// catalog they are decoded by the parameter's JSON Schema type (string,
// integer, number, boolean, null, array, object, anyOf/oneOf/type lists);
// a value that fits none of them is a bad_value error. Without a schema the
// value is kept as a string.
package parse

// Package render writes what the model reads about tools: catalogs, call
// results, model-facing errors and system reminders in every tool format,
// and the prompt prefix of a session, with a check that each turn's prompt
// extends the previous one byte for byte. It also keeps untrusted text
// (user input, tool output) from forging structure.
//
// It uses package templates for the per-family chat wrapping and knows
// nothing of servers.
//
// # Formats
//
// Format names are those of package parse: xml, hermes, json, mistral,
// qwen3-coder, pythonic, harmony, tags. [Formats] lists them.
//
// # API
//
//	// Catalog is the tool catalog and call instructions in format, JSON in
//	// each schema's own key order (Python separators where the format's
//	// native template prints JSON that way).
//	func Catalog(format string, tools []chat.Tool) (string, error)
//	// FormatCall writes one call exactly as the catalog instructs; the
//	// registry uses it for the corrected example in model-facing errors.
//	func FormatCall(format string, call chat.ToolCall) (string, error)
//	// FormatCalls writes the calls of one assistant turn.
//	func FormatCalls(format string, calls []chat.ToolCall) (string, error)
//	// Results writes the results of one turn, matched to calls by id (a
//	// result without a matching call is an error), framing-safe unless
//	// verbatim.
//	func Results(format string, calls []chat.ToolCall, results []chat.ToolResult, verbatim bool) (string, error)
//	// ErrorResult is the model-facing error result for a bad call: what was
//	// wrong and a corrected example in the session's format.
//	func ErrorResult(format string, call chat.ToolCall, problem string, example *chat.ToolCall) chat.ToolResult
//	// Reminder wraps text in <system-reminder>…</system-reminder>.
//	func Reminder(text string) string
//	// WithReminders returns msgs with the reminders prepended to the newest
//	// user message (never the system message).
//	func WithReminders(msgs []chat.Message, reminders ...string) ([]chat.Message, error)
//	// Neutralize makes untrusted text inert for a family and format.
//	func Neutralize(fam templates.Family, format, text string, tools []chat.Tool) string
//
//	// Request is one rendering: family, format ("" = the family's native
//	// format), messages, tools, reminders, clock, options.
//	type Request struct{ … }
//	// Prompt is raw mode: the whole prompt string, special tokens included.
//	func Prompt(req Request) (string, error)
//	// ChatMessages is chat mode: the message list for a chat endpoint, the
//	// catalog as text in the system message, tool results as text messages.
//	func ChatMessages(req Request) ([]chat.Message, error)
//
//	// Session is the prefix builder: the system block is rendered once,
//	// the transcript only grows, assistant turns come from the model's raw
//	// output.
//	func NewSession(cfg SessionConfig) (*Session, error)
//	func (s *Session) AddUser(text string)
//	func (s *Session) AddAssistant(raw string, calls []chat.ToolCall)
//	func (s *Session) AddResults(results []chat.ToolResult) error
//	func (s *Session) Prompt(reminders ...string) (string, error)
//
//	// Diverge compares two consecutive prompts: nil when next starts with
//	// prev, otherwise the first diverging byte with context either side.
//	func Diverge(prev, next string) *Divergence
//
// # Native and text formats
//
// In a family's native format the family's template places the catalog,
// calls and results itself, byte-identical to the official template. In any
// other format (and in chat mode) the catalog goes as text at the end of the
// system message, an assistant turn is its raw text, and the results of a
// turn travel as one user message.
//
// # Framing safety
//
// On by default. In untrusted text (user messages, tool results) every
// control token of the family and every framing marker of the format (for
// example <|im_end|>, </tool_response>, <tool_call>, [TOOL_CALLS],
// </function_results>, <system-reminder>) is broken by inserting U+2060 WORD
// JOINER after its first character. The text reads the same, but neither a
// tokenizer's special-token matching nor the parser sees the marker. Only
// such markers are touched; Request.Verbatim turns it off, and the output is
// then byte-identical to the official template.
package render

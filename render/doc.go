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
//	// each schema's own key order with Python's separators.
//	func Catalog(format string, tools []chat.Tool) (string, error)
//	// FormatCall / FormatCalls write calls exactly as the catalog instructs;
//	// the registry uses FormatCall for the corrected example of an error.
//	func FormatCall(format string, call chat.ToolCall) (string, error)
//	func FormatCalls(format string, calls []chat.ToolCall) (string, error)
//	// MatchResults orders a turn's results as its calls (by id, else by
//	// position); Results writes them in format, framing-safe unless verbatim.
//	func MatchResults(calls []chat.ToolCall, results []chat.ToolResult) ([]chat.ToolResult, error)
//	func Results(format string, calls []chat.ToolCall, results []chat.ToolResult, verbatim bool) (string, error)
//	// ErrorResult is the model-facing error result for a bad call: what was
//	// wrong and, given example, the call written correctly in format.
//	func ErrorResult(format string, call chat.ToolCall, problem string, example *chat.ToolCall) chat.ToolResult
//	// Reminder wraps text in <system-reminder>…</system-reminder>;
//	// WithReminders puts reminders at the start of the newest user message.
//	func Reminder(text string) string
//	func WithReminders(msgs []chat.Message, reminders ...string) ([]chat.Message, error)
//	// Neutralize makes untrusted text inert for a family and format.
//	func Neutralize(fam templates.Family, format, text string, tools []chat.Tool) string
//
//	// Request is one rendering: family, format ("" = the family's default,
//	// its native format where it has one), messages, tools, reminders,
//	// clock (required for date-printing families), Verbatim.
//	type Request struct{ … }
//	// Prompt is raw mode: the whole prompt string, special tokens included.
//	func Prompt(req Request) (string, error)
//	// ChatMessages is chat mode: the message list for a chat endpoint, the
//	// catalog as text in the system message (Request.OwnCatalog: the
//	// template's own tool section), results as user messages.
//	func ChatMessages(req Request) ([]chat.Message, error)
//	// TemplateTools is a template's own tool section and where a chat-mode
//	// list carries it, proved by rendering (ErrNoTemplateTools,
//	// ErrToolsOutsideSystem when there is none to send).
//	func TemplateTools(fam templates.Family, system string, tools []chat.Tool, now time.Time) (ToolSection, error)
//	// TemplateTurn is an assistant message as the template writes it.
//	func TemplateTurn(fam templates.Family, m chat.Message) (string, error)
//
//	// ChatSession is chat mode's list builder of one session: each turn
//	// converts only the new messages and appends them to the list sent.
//	func NewChatSession(cfg SessionConfig) (*ChatSession, error)
//	func (s *ChatSession) AddUser(text string)
//	func (s *ChatSession) AddAssistant(m chat.Message) error
//	func (s *ChatSession) AddResults(results []chat.ToolResult) error
//	func (s *ChatSession) Messages(reminders ...string) ([]chat.Message, error)
//
//	// Session is the raw-mode prefix builder of one session.
//	func NewSession(cfg SessionConfig) (*Session, error)
//	func (s *Session) AddUser(text string)
//	func (s *Session) AddAssistant(raw string, calls []chat.ToolCall)
//	func (s *Session) AddResults(results []chat.ToolResult) error
//	func (s *Session) Prompt(reminders ...string) (string, error)
//	func (s *Session) Messages() []chat.Message
//
//	// Diverge compares the previous prompt plus the model's raw output with
//	// the next prompt: nil when next extends it, else the first diverging
//	// byte with context either side (a *Divergence is an error).
//	func Diverge(prev, next string) *Divergence
//	func CheckPrefix(prev, next string) error // the same as an error value
//
// # Prefix builder
//
// The first prompt of a Session is rendered by the family template. Every
// later prompt is the previous prompt, the model's exact raw output, and
// the tail: the template renders the history, a sentinel in place of the
// reply and the new messages, and everything after the sentinel is kept
// (the turn's closing token, results or user text, the generation prompt).
// Nothing sent is re-rendered, so templates that move tools to the last
// user message (Mistral), drop earlier reasoning (Qwen3, gpt-oss) or print
// "\n" depending on position (Hermes) still give append-only prompts; the
// clock is frozen for the session. Where the official template is itself
// prefix-stable and the model wrote calls as the template writes them, the
// session's prompt equals the template's rendering of the whole
// conversation (tested for qwen2.5, qwen3-coder, llama3.1, llama3.2 and
// chatml). Reminders go into the new part only (the newest new user
// message, or the results) and are not kept for later turns.
//
// # Native and text formats
//
// In a family's native format the family's template places the catalog,
// calls and results itself, byte-identical to the official template (a
// loaded template that renders no tool messages gets each turn's results
// as text in a user message, which it renders, rather than none). In any
// other format (and in chat mode) the catalog goes as text at the end of the
// system message, an assistant turn is its raw text, and the results of a
// turn travel as one user message. Chat mode with Request.OwnCatalog (or
// SessionConfig.OwnCatalog) sends the template's own tool section instead,
// where TemplateTools places it: at the end of the system text, or as a
// system message of its own before it, whichever the template renders,
// without tools, exactly as it renders the conversation with tools; the
// results are then tool messages, which the template renders its own way
// as in raw mode.
//
// # Framing safety
//
// On by default. In user text every control token of the family, every
// call and result marker of the format and the <system-reminder> tags (for
// example <|im_end|>, </tool_response>, <tool_call>, [TOOL_CALLS],
// </function_results>) are broken by inserting U+2060 WORD JOINER
// ([Breaker]) after their first character. The text reads the same, but
// neither a tokenizer's special-token matching nor the parser sees a marker.
// In tool results the same is done for control tokens, result markers and
// reminder tags; call markers stay, because inside a result block that
// cannot be closed they are data, and the corrected example of a
// model-facing error must reach the model intact. Nothing else is touched
// and nothing is removed (deleting the breakers gives the input back).
// Request.Verbatim turns it off; the output is then byte-identical to the
// official template.
package render

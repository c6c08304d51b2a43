package agent

import (
	"context"
	"time"

	"github.com/toolharness/toolharness/chat"
	"github.com/toolharness/toolharness/parse"
)

// EventKind says what a parse event carries.
type EventKind string

// The parse events the loop consumes.
const (
	EventText      EventKind = "text"
	EventCallStart EventKind = "call_start"
	EventCall      EventKind = "call"
	EventError     EventKind = "error"
	// EventEndTurn: the model went on past its turn with an invented
	// next one; Err says where (kind overran_turn). What follows is
	// overrun text, not calls.
	EventEndTurn EventKind = "end_turn"
)

// Event is one event of a streaming parse, in the loop's own terms (the
// adapter in wire.go translates package parse's events).
type Event struct {
	Kind EventKind `json:"type"`
	Text string    `json:"text,omitempty"`
	// Part says what part of the reply a text event is: the answer
	// (parse.PartContent, the zero value), reasoning or framing markup.
	Part parse.Part `json:"part,omitempty"`
	// Call is set for call and call_start events (only the name for the
	// latter).
	Call *chat.ToolCall `json:"call,omitempty"`
	Err  *ParseError    `json:"error,omitempty"`
}

// ParseError is a malformed call as the parser reported it.
type ParseError struct {
	Kind    string `json:"kind"`
	Offset  int    `json:"offset"`
	Message string `json:"message"`
	// attached is true for the error of a recognised call.
	attached bool
}

// StreamParser turns chunks of model output into events. Feed and Close
// return the events that became certain with that chunk.
type StreamParser interface {
	Feed(chunk string) []Event
	Close() []Event
}

// System is the fixed part of a session's prompt: the system text and the
// core tools whose catalog the renderer places after it, and the session's
// frozen clock for families that print a date.
type System struct {
	Text  string
	Tools []chat.Tool
	Now   time.Time
}

// Transcript renders the requests of one growing conversation. Every call
// gets the whole history so far, which only ever grows; the rendering of
// what was already sent never changes.
type Transcript interface {
	// Prompt is the next raw prompt (raw mode).
	Prompt(hist []Msg) (string, error)
	// Messages is the next message list (chat mode).
	Messages(hist []Msg) ([]chat.Message, error)
}

// Renderer is what the loop needs from the template and format of a
// session: prompts in raw mode, message lists in chat mode, stop sequences,
// a parser, reminders and model-facing error results.
type Renderer interface {
	// Format is the tool-call format name (hermes, xml, …).
	Format() string
	// Stop are the stop sequences of a generation.
	Stop() []string
	// NewParser returns a fresh streaming parser for one generation.
	NewParser(tools []chat.Tool) (StreamParser, error)
	// Transcript starts the prefix builder of one session: each prompt is
	// the previous one, the model's exact output and what came after it.
	Transcript(sys System) (Transcript, error)
	// Prompt renders a whole conversation at once, ending with the
	// generation prompt (benchmark cases, the langchaingo adapter).
	// Assistant turns are rendered from Message.Raw where set.
	Prompt(sys System, history []Msg) (string, error)
	// Messages renders a whole conversation as a chat-mode message list.
	Messages(sys System, history []Msg) ([]chat.Message, error)
	// Diverge reports where next stops extending prev (nil when it does).
	Diverge(prev, next string) *Divergence
	// ErrorResult is the model-facing result for a call that could not run
	// (parse or validation problem).
	ErrorResult(call chat.ToolCall, problem string) chat.ToolResult
	// Catalog renders tool definitions in the session's format (for
	// tool_search results).
	Catalog(tools []chat.Tool) (string, error)
	// FormatCall writes a call the way the catalog asks the model to (for
	// corrected examples in model-facing errors).
	FormatCall(call chat.ToolCall) (string, error)
}

// Msg is one message of a session's history. Reminders are trusted
// <system-reminder> texts that precede a user message's content; they are
// stored with the message so every later prompt renders them identically.
type Msg struct {
	chat.Message
	Reminders []string
	// Tokens are the ids the model generated for an assistant turn,
	// exactly covering Message.Raw, when the backend returned them
	// (token-exact history); nil otherwise.
	Tokens []int
}

// Divergence is where a prompt stopped extending the previous prompt plus
// the model's output: the byte offset and a little context either side.
type Divergence struct {
	Offset int    `json:"offset"`
	Want   string `json:"want"`
	Got    string `json:"got"`
}

// Outcome is what became of one call.
type Outcome struct {
	Call   chat.ToolCall
	Result chat.ToolResult
	// Mistake is the kind of model mistake (unknown_tool,
	// invalid_arguments, …) when the call was refused before running;
	// empty when it ran (even when the tool itself failed).
	Mistake string
	// Ran is true when a handler was invoked.
	Ran bool
}

// Toolbox is what the loop needs from the tool registry.
type Toolbox interface {
	// Core is the catalog of the system block.
	Core() []chat.Tool
	// Reminder names deferred tools ("" when none).
	Reminder() string
	// Validate checks a call; problem is the model-facing text and kind
	// the mistake kind when the call is invalid.
	Validate(call chat.ToolCall) (fixed chat.ToolCall, kind, problem string)
	// Execute validates and runs one call, at most once per call ID.
	Execute(ctx context.Context, call chat.ToolCall) Outcome
}

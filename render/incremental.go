package render

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/toolharness/toolharness/chat"
	"github.com/toolharness/toolharness/templates"
)

// A session's prompt after the model's reply is what the template writes
// after it: the reply's closing, the new messages, the generation prompt.
// A chat template's output there depends on the messages around it, not on
// the whole history, for every template that neither counts messages nor
// numbers calls across the conversation. So the tail is rendered from a
// window of the history: its head (up to the first user message: system
// text, catalog placement, a first user turn that some templates treat
// apart) and its last windowTurns assistant turns with what followed them.
// Whether a template renders alike through the window is probed
// once per session (incremental) on a conversation long enough to leave
// messages out; a template that does not falls back to full renders.

// windowTurns is how many of the latest assistant turns a window keeps.
const windowTurns = 2

// windowOf splits a history into its head and its recent messages, leaving
// out what lies between; it returns the history whole (as head) when
// nothing can be left out. What is left out is whole exchanges (an
// assistant turn and what followed it), so templates that check that
// roles alternate see them alternate.
func windowOf(h []chat.Message) (head, recent []chat.Message) {
	first := -1
	for i, m := range h {
		if m.Role == chat.RoleUser {
			first = i
			break
		}
	}
	if first < 0 || first+1 >= len(h) || h[first+1].Role != chat.RoleAssistant {
		return h, nil
	}
	headEnd, assistants := first+1, 0
	for start := len(h) - 1; start > headEnd; start-- {
		if h[start].Role != chat.RoleAssistant {
			continue
		}
		if assistants++; assistants == windowTurns {
			return h[:headEnd], h[start:]
		}
	}
	return h, nil
}

// Incremental reports whether a session renders fam's prompts in format
// from a window of the conversation (each turn then costs what it adds),
// and, when not, why: the template renders the probe conversation
// differently through a window than in full (it counts messages or looks
// at the whole conversation), or the probe does not render. format ""
// means the family's default.
func Incremental(fam templates.Family, format string) (bool, string) {
	if format == "" {
		format = fam.DefaultFormat
	}
	return incremental(fam, format)
}

// probeNow is the probe's clock, for families that print the date.
var probeNow = time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)

func incremental(fam templates.Family, format string) (bool, string) {
	tools, err := chat.ParseTools([]byte(probeToolsJSON))
	if err != nil {
		return false, "the probe tools do not parse: " + err.Error()
	}
	cfg := SessionConfig{Family: fam, Format: format, System: "Probe system text.", Tools: tools, Now: probeNow}
	ok, why, rendered := probeWindow(cfg, format, probeScript, false)
	if !rendered {
		// Some templates refuse parallel calls: probe with one call a turn.
		ok, why, _ = probeWindow(cfg, format, probeScript, true)
	}
	return ok, why
}

// probeWindow plays script in full and through a window; rendered is
// false when the full rendering fails.
func probeWindow(cfg SessionConfig, format string, script []probeStep, single bool) (ok bool, why string, rendered bool) {
	var sessions [2]*Session
	for i := range sessions {
		s, err := newSession(cfg)
		if err != nil {
			return false, "the probe session does not start: " + err.Error(), false
		}
		s.window = i == 1
		sessions[i] = s
	}
	for turn, step := range script {
		if single && len(step.calls) > 1 {
			step.calls = step.calls[:1]
		}
		var prompts [2]string
		for i, s := range sessions {
			err := step.add(s, format)
			if err == nil {
				prompts[i], err = s.Prompt(step.reminders...)
			}
			if err != nil {
				return false, fmt.Sprintf("the probe conversation does not render (turn %d): %v", turn, err), i == 1
			}
		}
		if prompts[0] != prompts[1] {
			return false, fmt.Sprintf("the template renders turn %d of the probe differently from a window of the conversation (it counts messages or reads the whole conversation)", turn), true
		}
	}
	return true, "", true
}

const probeToolsJSON = `[
 {"type":"function","function":{"name":"probe_read","description":"Read a file.","parameters":{"type":"object","properties":{"path":{"type":"string","description":"The path."},"limit":{"type":"integer"}},"required":["path"]}}},
 {"type":"function","function":{"name":"probe_search","description":"Search the files.","parameters":{"type":"object","properties":{"pattern":{"type":"string"},"glob":{"type":"string"}},"required":["pattern"]}}},
 {"type":"function","function":{"name":"probe_write","description":"Write a file.","parameters":{"type":"object","properties":{"path":{"type":"string"},"text":{"type":"string"}},"required":["path","text"]}}}
]`

// probeStep is one turn of the probe conversation: the model's reply
// (calls, or an answer followed by a user message) and what follows it.
type probeStep struct {
	content   string
	calls     []string // tool names; arguments follow from the turn
	user      string   // after an answer
	reminders []string
}

// probeScript is long enough for a window to leave messages out several
// times, with answers, parallel calls and reminders among plain calls, and
// a window of answers alone after calls.
var probeScript = []probeStep{
	{user: "First question."},
	{calls: []string{"probe_read"}},
	{calls: []string{"probe_search", "probe_read"}, content: "Looking at both."},
	{content: "An answer.", user: "A second question.", reminders: []string{"probe reminder"}},
	{calls: []string{"probe_write"}},
	{calls: []string{"probe_read"}, reminders: []string{"probe reminder 2"}},
	{calls: []string{"probe_search"}},
	{content: "Another answer.", user: "A third question."},
	{calls: []string{"probe_read"}},
	{calls: []string{"probe_write", "probe_search"}},
	{calls: []string{"probe_read"}},
	// Answers only in the window, calls before it: a template that keeps
	// state from the first call or result of the whole conversation shows.
	{content: "Third answer.", user: "A fourth question."},
	{content: "Fourth answer.", user: "A fifth question."},
	{content: "Fifth answer.", user: "A sixth question."},
	{calls: []string{"probe_search"}},
	{calls: []string{"probe_read"}},
}

// add plays the step into s: the first step is the opening user message,
// every later one the model's reply and what follows it.
func (p probeStep) add(s *Session, format string) error {
	if s.prompt.Len() == 0 {
		s.AddUser(p.user)
		return nil
	}
	var calls []chat.ToolCall
	for i, name := range p.calls {
		args, _ := json.Marshal(map[string]any{"path": fmt.Sprintf("dir/file%d.txt", len(s.msgs)+i), "pattern": "x", "text": "y"})
		// Nine alphanumerics: what Mistral's templates require of an id.
		calls = append(calls, chat.ToolCall{ID: fmt.Sprintf("c%06d%02d", len(s.msgs), i), Name: name, Arguments: args})
	}
	raw := p.content
	if len(calls) > 0 {
		written, err := FormatCalls(format, calls)
		if err != nil {
			written = "probe calls" // a format only the template writes
		}
		if raw != "" {
			raw += "\n"
		}
		raw += written
	}
	s.msgs = append(s.msgs, chat.Message{Role: chat.RoleAssistant, Content: p.content, Raw: raw, ToolCalls: calls})
	if len(calls) == 0 {
		s.AddUser(p.user)
		return nil
	}
	var results []chat.ToolResult
	for _, c := range calls {
		results = append(results, chat.ToolResult{CallID: c.ID, Name: c.Name, Content: "result of " + c.ID})
	}
	return s.AddResults(results)
}

package render_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"github.com/google/go-cmp/cmp"
	"math/rand"
	"os"
	"path/filepath"
	"testing"

	"github.com/toolharness/toolharness/chat"
	"github.com/toolharness/toolharness/derive"
	"github.com/toolharness/toolharness/render"
	"github.com/toolharness/toolharness/templates"
)

// windowCase is a template and format a session is played in.
type windowCase struct {
	name        string
	family      templates.Family
	format      string
	incremental bool // render.Incremental
}

// windowCases are the built-in families in their default formats and every
// template of the conformance set, in its default format and, where a call
// syntax derives from it, in that one.
func windowCases(t *testing.T) []windowCase {
	t.Helper()
	fams, err := templates.Families()
	if err != nil {
		t.Fatal(err)
	}
	var out []windowCase
	for _, f := range fams {
		out = append(out, windowCase{name: f.Name, family: f, format: f.DefaultFormat})
	}
	dir := filepath.Join("..", "templates", "testdata", "conformance")
	var m struct {
		Templates []struct {
			ID            string             `json:"id"`
			File          string             `json:"file"`
			SpecialTokens map[string]*string `json:"special_tokens"`
		}
	}
	data, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	for _, e := range m.Templates {
		src, err := os.ReadFile(filepath.Join(dir, e.File))
		if err != nil {
			t.Fatal(err)
		}
		var tok templates.SpecialTokens
		if s := e.SpecialTokens["bos_token"]; s != nil {
			tok.BOS = *s
		}
		if s := e.SpecialTokens["eos_token"]; s != nil {
			tok.EOS = *s
		}
		j, err := templates.CompileJinja(e.ID, string(src), tok)
		if err != nil {
			continue // the conformance test reports what does not compile
		}
		f, err := templates.FamilyOf(j)
		if err != nil {
			continue
		}
		out = append(out, windowCase{name: e.ID, family: f, format: f.DefaultFormat})
		if own, res, err := derive.Own(f); err == nil && res != nil && own.NativeFormat != f.DefaultFormat {
			out = append(out, windowCase{name: e.ID + "/derived", family: own, format: own.NativeFormat})
		}
	}
	for i := range out {
		out[i].incremental, _ = render.Incremental(out[i].family, out[i].format)
	}
	return out
}

// sessionPair is the same session rendered through a window (where the
// template allows it) and in full.
type sessionPair struct {
	win, full *render.Session
	format    string
}

func newPair(t *testing.T, c windowCase, system string, tools []chat.Tool) (sessionPair, bool) {
	if !c.incremental {
		return sessionPair{}, false
	}
	cfg := render.SessionConfig{Family: c.family, Format: c.format, System: system, Tools: tools, Now: benchNow}
	win, err := render.NewSessionWindowed(cfg, true)
	if err != nil {
		return sessionPair{}, false
	}
	full, err := render.NewSessionWindowed(cfg, false)
	if err != nil {
		t.Fatalf("%s: %v", c.name, err)
	}
	return sessionPair{win: win, full: full, format: c.format}, true
}

func (p sessionPair) user(text string) {
	p.win.AddUser(text)
	p.full.AddUser(text)
}

func (p sessionPair) reply(content string, calls []chat.ToolCall) {
	raw := content
	if written, err := render.FormatCalls(p.format, calls); err == nil && written != "" {
		if raw != "" {
			raw += "\n"
		}
		raw += written
	}
	p.win.AddAssistant(raw, calls)
	p.full.AddAssistant(raw, calls)
}

// results adds the results; false when the template cannot take them.
func (p sessionPair) results(rs []chat.ToolResult) bool {
	return p.win.AddResults(rs) == nil && p.full.AddResults(rs) == nil
}

// prompt renders both; it fails the test when they differ, and returns
// false when the full rendering fails (the template refuses the session).
func (p sessionPair) prompt(t *testing.T, what string, reminders ...string) bool {
	t.Helper()
	full, err := p.full.Prompt(reminders...)
	if err != nil {
		return false
	}
	win, err := p.win.Prompt(reminders...)
	if err != nil {
		t.Fatalf("%s: the full rendering works, the windowed one fails: %v", what, err)
	}
	if win != full {
		t.Fatalf("%s: the windowed prompt differs from the full one: %v", what, render.Diverge(full, win))
	}
	return true
}

// TestWindowMatchesFull plays sessions through a window and in full, and
// requires every prompt to be byte-identical: 1,000 random tool sessions,
// each in a template picked at random, and every conformance conversation
// in every template.
func TestWindowMatchesFull(t *testing.T) {
	cases := windowCases(t)
	t.Run("random", func(t *testing.T) { windowRandom(t, cases) })
	t.Run("conformance", func(t *testing.T) { windowConformance(t, cases) })
}

func windowRandom(t *testing.T, cases []windowCase) {
	tools := benchTools(t, 6)
	rng := rand.New(rand.NewSource(21))
	compared := 0
	for n := 0; n < 1000; n++ {
		c := cases[rng.Intn(len(cases))]
		p, ok := newPair(t, c, "System text of session "+fmt.Sprint(n), tools)
		if !ok {
			continue
		}
		p.user(fmt.Sprintf("Question %d?", n))
	turns:
		for turn := 0; turn < 4+rng.Intn(10); turn++ {
			var reminders []string
			if rng.Intn(4) == 0 {
				reminders = []string{fmt.Sprintf("reminder %d", turn)}
			}
			if !p.prompt(t, fmt.Sprintf("session %d (%s), turn %d", n, c.name, turn), reminders...) {
				break
			}
			compared++
			switch k := rng.Intn(6); {
			case k == 0:
				p.reply(fmt.Sprintf("Answer %d.", turn), nil)
				p.user(fmt.Sprintf("Follow-up %d <b>?</b>", turn))
			default:
				var calls []chat.ToolCall
				for i := 0; i < 1+rng.Intn(2)*rng.Intn(3); i++ {
					calls = append(calls, benchCall(tools, rng.Intn(1000)))
					calls[i].ID = fmt.Sprintf("c%04d%04d", turn, i)
				}
				content := ""
				if k == 1 {
					content = "Let me look."
				}
				p.reply(content, calls)
				var rs []chat.ToolResult
				for i, call := range calls {
					rs = append(rs, benchResult(call, turn*10+i))
				}
				if !p.results(rs) {
					break turns
				}
			}
		}
	}
	if compared < 2000 {
		t.Fatalf("only %d prompts compared: too few sessions render through a window", compared)
	}
}

// windowConformance plays every conversation of the conformance set as a
// session in every template of the set.
func windowConformance(t *testing.T, cases []windowCase) {
	data, err := os.ReadFile(filepath.Join("..", "templates", "testdata", "conformance", "conversations.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Conversations []struct {
			ID       string          `json:"id"`
			Tools    json.RawMessage `json:"tools"`
			Messages json.RawMessage `json:"messages"`
		} `json:"conversations"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	compared := 0
	for _, c := range cases {
		for _, conv := range doc.Conversations {
			body, _ := json.Marshal(map[string]json.RawMessage{"messages": conv.Messages, "tools": conv.Tools})
			cv, err := chat.ParseConversation(body)
			if err != nil || len(cv.Messages) == 0 {
				continue // content parts and the like: not a session's shape
			}
			compared += playConversation(t, c, conv.ID, cv)
		}
	}
	if compared < 500 {
		t.Fatalf("only %d prompts compared", compared)
	}
}

// playConversation plays conv as a session; it returns the prompts compared.
func playConversation(t *testing.T, c windowCase, id string, conv chat.Conversation) int {
	msgs := conv.Messages
	system := ""
	if msgs[0].Role == chat.RoleSystem {
		system, msgs = msgs[0].Content, msgs[1:]
	}
	p, ok := newPair(t, c, system, conv.Tools)
	if !ok {
		return 0
	}
	what := c.name + "/" + id
	compared := 0
	for i := 0; i < len(msgs); {
		m := msgs[i]
		switch m.Role {
		case chat.RoleUser:
			p.user(m.Content)
			i++
		case chat.RoleAssistant:
			if compared == 0 && i == 0 {
				return 0 // a session starts with the user
			}
			if !p.prompt(t, fmt.Sprintf("%s before message %d", what, i)) {
				return compared
			}
			compared++
			p.reply(m.Content, m.ToolCalls)
			i++
		case chat.RoleTool:
			var rs []chat.ToolResult
			for ; i < len(msgs) && msgs[i].Role == chat.RoleTool; i++ {
				rs = append(rs, chat.ToolResult{CallID: msgs[i].ToolCallID, Name: msgs[i].Name, Content: msgs[i].Content})
			}
			if !p.results(rs) {
				return compared
			}
		default:
			return compared
		}
	}
	if p.prompt(t, what+" at the end") {
		compared++
	}
	return compared
}

// TestVerifyEvery checks the run-time check: a template forced through a
// window it does not render alike (Mistral's catalog sits by the last user
// message) fails the turn with an *IncrementalMismatch, and one that does
// (qwen3) passes every checked turn.
func TestVerifyEvery(t *testing.T) {
	tools := benchTools(t, 5)
	for _, c := range []struct {
		family   string
		mismatch bool
	}{{"qwen3", false}, {"mistral-small3", true}} {
		f, err := templates.Lookup(c.family)
		if err != nil {
			t.Fatal(err)
		}
		s, err := render.NewSessionWindowed(render.SessionConfig{Family: f, Tools: tools, Now: benchNow, VerifyEvery: 1}, true)
		if err != nil {
			t.Fatal(err)
		}
		s.AddUser("First question.")
		var got error
		for turn := 0; turn < 8 && got == nil; turn++ {
			if _, got = s.Prompt(); got != nil {
				break
			}
			s.AddAssistant(fmt.Sprintf("Answer %d.", turn), nil)
			s.AddUser(fmt.Sprintf("Question %d.", turn))
		}
		var mm *render.IncrementalMismatch
		if errors.As(got, &mm) != c.mismatch {
			t.Errorf("%s: got %v, want a mismatch: %v", c.family, got, c.mismatch)
		}
	}
}

// TestPreparedChatMessages checks that prepared requests give the same
// chat-mode list as unprepared ones, in a family's native format and in a
// prompted one.
func TestPreparedChatMessages(t *testing.T) {
	tools := benchTools(t, 4)
	for _, c := range []struct{ family, format string }{{"qwen3", "hermes"}, {"qwen3", "xml"}, {"gpt-oss", ""}, {"llama3.1", "json"}} {
		f, err := templates.Lookup(c.family)
		if err != nil {
			t.Fatal(err)
		}
		format := c.format
		if format == "" {
			format = f.DefaultFormat
		}
		msgs, err := chatConversation(tools, format, 4)
		if err != nil {
			t.Fatal(err)
		}
		req := render.Request{Family: f, Format: c.format, Tools: tools, Messages: msgs, Now: benchNow, Reminders: []string{"r"}}
		want, err := render.ChatMessages(req)
		if err != nil {
			t.Fatal(err)
		}
		if req.Prepared, err = render.Prepare(req); err != nil {
			t.Fatal(err)
		}
		got, err := render.ChatMessages(req)
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("%s/%s: prepared differs (-unprepared +prepared):\n%s", c.family, format, d)
		}
	}
}

package render_test

import (
	"errors"
	"fmt"
	"math/rand"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/toolharness/toolharness/chat"
	"github.com/toolharness/toolharness/render"
	"github.com/toolharness/toolharness/templates"
)

// chatCase is a template and format a chat-mode session is played in, and
// whether the template's own tool section is sent.
type chatCase struct {
	name   string
	family templates.Family
	format string
	own    bool
}

// chatCases are the window cases chat mode can play: in a format package
// render writes (its catalog), and, where the template's own tool section
// goes in a system message, with that section.
func chatCases(t *testing.T, tools []chat.Tool) []chatCase {
	t.Helper()
	var out []chatCase
	for _, c := range windowCases(t) {
		if isWritten(c.format) {
			out = append(out, chatCase{name: c.name, family: c.family, format: c.format})
		}
		if c.family.Jinja() != nil && c.format == c.family.NativeFormat {
			if _, err := render.TemplateTools(c.family, "System.", tools, benchNow); err == nil {
				out = append(out, chatCase{name: c.name + "/own", family: c.family, format: c.format, own: true})
			}
		}
	}
	return out
}

func isWritten(format string) bool {
	_, err := render.Catalog(format, nil)
	return err == nil
}

// TestChatSessionMatchesChatMessages plays chat-mode sessions incrementally
// and requires the list of every turn to equal ChatMessages of the whole
// conversation: 300 random tool sessions, each in a case picked at random,
// assistant turns with raw text and without (written in the format, or by
// the template for a syntax only it writes).
func TestChatSessionMatchesChatMessages(t *testing.T) {
	tools := benchTools(t, 5)
	cases := chatCases(t, tools)
	rng := rand.New(rand.NewSource(22))
	compared, owned := 0, 0
	for n := 0; n < 300; n++ {
		c := cases[rng.Intn(len(cases))]
		system := ""
		if rng.Intn(4) > 0 {
			system = fmt.Sprintf("System text of session %d.", n)
		}
		cfg := render.SessionConfig{Family: c.family, Format: c.format, System: system, Tools: tools, Now: benchNow, OwnCatalog: c.own}
		s, err := render.NewChatSession(cfg)
		if errors.Is(err, render.ErrToolsOutsideSystem) || errors.Is(err, render.ErrNoTemplateTools) {
			continue // placed with one system text, not with none (Phi-4-mini)
		}
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		conv := []chat.Message{}
		if system != "" {
			conv = append(conv, chat.Message{Role: chat.RoleSystem, Content: system})
		}
		user := func(text string) {
			s.AddUser(text)
			conv = append(conv, chat.Message{Role: chat.RoleUser, Content: text})
		}
		user(fmt.Sprintf("Question %d <tool_call>?", n))
		for turn := 0; turn < 3+rng.Intn(8); turn++ {
			got, err := s.Messages()
			if err != nil {
				t.Fatalf("%s, session %d turn %d: %v", c.name, n, turn, err)
			}
			want, err := render.ChatMessages(render.Request{Family: c.family, Format: c.format, Messages: conv, Tools: tools, Now: benchNow, OwnCatalog: c.own})
			if err != nil {
				t.Fatalf("%s, session %d turn %d: ChatMessages: %v", c.name, n, turn, err)
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Fatalf("%s, session %d turn %d: the incremental list differs (-full +incremental):\n%s", c.name, n, turn, d)
			}
			compared++
			if c.own {
				owned++
			}
			if rng.Intn(5) == 0 {
				m := chat.Message{Role: chat.RoleAssistant, Raw: fmt.Sprintf("Answer %d.", turn), Content: fmt.Sprintf("Answer %d.", turn)}
				if err := s.AddAssistant(m); err != nil {
					t.Fatal(err)
				}
				conv = append(conv, m)
				user(fmt.Sprintf("Follow-up %d <b>?</b>", turn))
				continue
			}
			var calls []chat.ToolCall
			for i := 0; i < 1+rng.Intn(2); i++ {
				call := benchCall(tools, rng.Intn(1000))
				call.ID = fmt.Sprintf("c%04d%04d", turn, i)
				calls = append(calls, call)
			}
			m := chat.Message{Role: chat.RoleAssistant, ToolCalls: calls}
			if rng.Intn(2) == 0 && isWritten(c.format) {
				m.Raw, _ = render.FormatCalls(c.format, calls)
			}
			if err := s.AddAssistant(m); err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			conv = append(conv, m)
			conv = addChatResults(t, s, calls, turn, conv)
		}
	}
	if compared < 1000 || owned < 100 {
		t.Fatalf("only %d lists compared, %d with a template's own section", compared, owned)
	}
}

// TestChatSessionReminders: a reminder goes at the start of the newest new
// user message (the results message after tool results) and stays there;
// none may be given when no user message is new.
func TestChatSessionReminders(t *testing.T) {
	fam, err := templates.Lookup("qwen3")
	if err != nil {
		t.Fatal(err)
	}
	tools := benchTools(t, 2)
	s, err := render.NewChatSession(render.SessionConfig{Family: fam, System: "S.", Tools: tools, Now: benchNow})
	if err != nil {
		t.Fatal(err)
	}
	s.AddUser("first")
	first, err := s.Messages("r1")
	if err != nil {
		t.Fatal(err)
	}
	call := benchCall(tools, 1)
	if err := s.AddAssistant(chat.Message{Role: chat.RoleAssistant, Raw: "x", ToolCalls: []chat.ToolCall{call}}); err != nil {
		t.Fatal(err)
	}
	if err := s.AddResults([]chat.ToolResult{benchResult(call, 1)}); err != nil {
		t.Fatal(err)
	}
	second, err := s.Messages("r2")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := second[1].Content, render.Reminder("r1")+"\nfirst"; got != want {
		t.Errorf("first user message = %q, want %q", got, want)
	}
	if d := cmp.Diff(first, second[:len(first)]); d != "" {
		t.Errorf("the second list does not extend the first:\n%s", d)
	}
	if got := second[3].Content; got[:len(render.Reminder("r2"))] != render.Reminder("r2") {
		t.Errorf("results message = %q, want reminder r2 first", got)
	}
	if _, err := s.Messages("r3"); !errors.Is(err, render.ErrNoUserMessage) {
		t.Errorf("a reminder with no new user message: got %v, want ErrNoUserMessage", err)
	}
}

// TestChatSessionOwnReminders: with a template's own tool section the
// results are tool messages, and a reminder given after them goes at the
// end of the last one, as raw mode's Session puts it; a user message new
// since the last list takes it at its start.
func TestChatSessionOwnReminders(t *testing.T) {
	tools := benchTools(t, 2)
	var c chatCase
	for _, cc := range chatCases(t, tools) {
		if cc.own && cc.name == "zai-org-GLM-4.5/derived/own" {
			c = cc
		}
	}
	if c.name == "" {
		t.Fatal("no GLM-4.5 case with its own section")
	}
	s, err := render.NewChatSession(render.SessionConfig{Family: c.family, Format: c.format, System: "S.", Tools: tools, Now: benchNow, OwnCatalog: true})
	if err != nil {
		t.Fatal(err)
	}
	s.AddUser("first")
	if _, err := s.Messages("r1"); err != nil {
		t.Fatal(err)
	}
	calls := []chat.ToolCall{benchCall(tools, 1), benchCall(tools, 2)}
	if err := s.AddAssistant(chat.Message{Role: chat.RoleAssistant, Raw: "x", ToolCalls: calls}); err != nil {
		t.Fatal(err)
	}
	// Out of order: they go in the order of the calls.
	if err := s.AddResults([]chat.ToolResult{benchResult(calls[1], 2), benchResult(calls[0], 1)}); err != nil {
		t.Fatal(err)
	}
	msgs, err := s.Messages("r2")
	if err != nil {
		t.Fatal(err)
	}
	n := len(msgs)
	first, last := msgs[n-2], msgs[n-1]
	if first.Role != chat.RoleTool || first.ToolCallID != calls[0].ID || first.Name != calls[0].Name || first.Content != benchResult(calls[0], 1).Content {
		t.Errorf("first result message = %+v, want the tool message of call %s", first, calls[0].ID)
	}
	if want := benchResult(calls[1], 2).Content + "\n" + render.Reminder("r2"); last.Role != chat.RoleTool || last.Content != want {
		t.Errorf("last result message = %q, want its result and then reminder r2", last.Content)
	}
	s.AddUser("next")
	msgs, err = s.Messages("r3")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := msgs[len(msgs)-1].Content, render.Reminder("r3")+"\nnext"; got != want {
		t.Errorf("new user message = %q, want %q", got, want)
	}
}

// addChatResults gives s the results of turn's calls (benchResult) and
// returns conv with them as tool messages.
func addChatResults(t *testing.T, s *render.ChatSession, calls []chat.ToolCall, turn int, conv []chat.Message) []chat.Message {
	t.Helper()
	var rs []chat.ToolResult
	for i, call := range calls {
		r := benchResult(call, turn*10+i)
		rs = append(rs, r)
		conv = append(conv, r.Message())
	}
	if err := s.AddResults(rs); err != nil {
		t.Fatal(err)
	}
	return conv
}

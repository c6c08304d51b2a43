package render_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolharness/toolharness/chat"
	"github.com/toolharness/toolharness/derive"
	"github.com/toolharness/toolharness/render"
	"github.com/toolharness/toolharness/templates"
)

// TestTemplateToolsRendersBack proves the chat-mode list of every
// template whose tool section TemplateTools places: the template renders
// that list without tools exactly as it renders the conversation with
// tools, with a system text and without, with a user message that is not
// the probe's. Named templates must place as stated.
func TestTemplateToolsRendersBack(t *testing.T) {
	tools := benchTools(t, 3)
	want := map[string]struct {
		place render.ToolPlace
		err   error
	}{
		"zai-org-GLM-4.5":                     {place: render.OwnSystem},
		"qwen3-0.6b":                          {place: render.AfterSystem},
		"qwen2.5-7b-instruct":                 {place: render.AfterSystem},
		"llama-3.1-8b-instruct":               {err: render.ErrToolsOutsideSystem},
		"mistral-small-3.2-24b-instruct-2506": {err: render.ErrToolsOutsideSystem},
		"mistral-nemo-instruct-2407":          {err: render.ErrToolsOutsideSystem},
		"HuggingFaceTB-SmolLM3-3B":            {err: render.ErrNoTemplateTools},
	}
	placed, seen := 0, 0
	for _, c := range windowCases(t) {
		if c.family.Jinja() == nil || c.format != c.family.NativeFormat && c.family.NativeFormat != "" {
			continue
		}
		const system = "You are a coding agent. Use the tools to answer."
		sec, err := render.TemplateTools(c.family, system, tools, benchNow)
		if w, ok := want[c.name]; ok {
			seen++
			switch {
			case w.err != nil && !errors.Is(err, w.err):
				t.Errorf("%s: got %v, want %v", c.name, err, w.err)
			case w.err == nil && (err != nil || sec.Place != w.place):
				t.Errorf("%s: got place %d (%v), want %d", c.name, sec.Place, err, w.place)
			}
		}
		for _, sys := range []string{system, ""} {
			if rendersBack(t, c.family, sys, tools) {
				placed++
			}
		}
	}
	if seen != len(want) || placed < 20 {
		t.Fatalf("%d of the %d named templates seen; %d placements proved", seen, len(want), placed)
	}
}

// rendersBack checks the chat-mode list of a system text and a user
// message against the template; false when the section is not placed.
func rendersBack(t *testing.T, fam templates.Family, system string, tools []chat.Tool) bool {
	t.Helper()
	var conv []chat.Message
	if system != "" {
		conv = append(conv, chat.Message{Role: chat.RoleSystem, Content: system})
	}
	conv = append(conv, chat.Message{Role: chat.RoleUser, Content: "Which files log the request path?"})
	msgs, err := render.ChatMessages(render.Request{Family: fam, Messages: conv, Tools: tools, Now: benchNow, Verbatim: true, OwnCatalog: true})
	if err != nil {
		if !errors.Is(err, render.ErrNoTemplateTools) && !errors.Is(err, render.ErrToolsOutsideSystem) {
			t.Logf("%s: %v", fam.Name, err) // a template that refuses a system message, say
		}
		return false
	}
	want, err := fam.Render(templates.Input{Messages: conv, Tools: tools, AddGenerationPrompt: true, Now: benchNow})
	if err != nil {
		t.Fatal(err)
	}
	got, err := fam.Render(templates.Input{Messages: msgs, AddGenerationPrompt: true, Now: benchNow})
	if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Errorf("%s (system %q): the list renders without tools differently from the conversation with tools: %v", fam.Name, system, render.Diverge(want, got))
	}
	return true
}

// TestChatOwnResults proves chat mode's results with a template's own
// tool section: for every template whose section is placed, the chat-mode
// list of a session with single and parallel calls and their results,
// rendered by the template without tools (what a server applying the
// template does), is the template's rendering of the conversation with
// tools, byte for byte. The results are tool messages the template renders
// its own way, never a format of this package.
func TestChatOwnResults(t *testing.T) {
	tools := benchTools(t, 3)
	proved := 0
	for _, c := range chatCases(t, tools) {
		if !c.own {
			continue
		}
		const system = "You are a coding agent."
		cs, err := render.NewChatSession(render.SessionConfig{Family: c.family, Format: c.format, System: system, Tools: tools,
			Now: benchNow, Verbatim: true, OwnCatalog: true})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		conv := []chat.Message{{Role: chat.RoleSystem, Content: system}, {Role: chat.RoleUser, Content: "Find the handlers."}}
		cs.AddUser(conv[1].Content)
		for turn, n := range []int{1, 2} {
			var calls []chat.ToolCall
			for i := 0; i < n; i++ {
				call := benchCall(tools, turn*10+i)
				call.ID = fmt.Sprintf("call_%d_%d", turn, i)
				calls = append(calls, call)
			}
			// The model's text: the calls in the format, written by the
			// template where only it writes them.
			raw, err := render.FormatCalls(c.format, calls)
			if !isWritten(c.format) {
				raw, err = render.TemplateTurn(c.family, chat.Message{Role: chat.RoleAssistant, ToolCalls: calls})
			}
			if err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			if err := cs.AddAssistant(chat.Message{Role: chat.RoleAssistant, Raw: raw, ToolCalls: calls}); err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			conv = append(conv, chat.Message{Role: chat.RoleAssistant, Content: raw})
			conv = addChatResults(t, cs, calls, turn, conv)
		}
		msgs, err := cs.Messages()
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		for _, m := range msgs {
			if m.Role == chat.RoleUser && strings.Contains(m.Content, "func handler") {
				t.Errorf("%s: results sent as a user message: %q", c.name, m.Content)
			}
		}
		want, err := c.family.Render(templates.Input{Messages: conv, Tools: tools, AddGenerationPrompt: true, Now: benchNow})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		got, err := c.family.Render(templates.Input{Messages: msgs, AddGenerationPrompt: true, Now: benchNow})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got != want {
			t.Errorf("%s: the chat-mode list renders otherwise than the conversation with tools: %v", c.name, render.Diverge(want, got))
			continue
		}
		proved++
	}
	if proved < 10 {
		t.Fatalf("only %d templates proved", proved)
	}
	t.Logf("%d cases with a template's own section render their results as with tools", proved)
}

// TestTemplateToolsToolMessages: a template that renders no tool messages
// (the synthetic pipe-pairs template) still sends its own tool section in
// chat mode, but its results go as text in a user message, which it
// renders, never as tool messages it would drop; GLM-4.5's go as tool
// messages. Raw mode's prompt holds the results the same way.
func TestTemplateToolsToolMessages(t *testing.T) {
	tools := benchTools(t, 2)
	for _, c := range []struct {
		path, result string
		toolMessages bool
	}{
		{"../templates/testdata/conformance/templates/zai-org-GLM-4.5.jinja", "<|observation|>\n<tool_response>\nline 0: func", true},
		{"../derive/testdata/synthetic/pipe-pairs.jinja", `[[user]] <tool_result name="tool_001" id="call_00001">` + "\nline 0: func", false},
	} {
		src, err := os.ReadFile(c.path)
		if err != nil {
			t.Fatal(err)
		}
		j, err := templates.CompileJinja(filepath.Base(c.path), string(src), templates.SpecialTokens{EOS: "<stop>"})
		if err != nil {
			t.Fatal(err)
		}
		loaded, err := templates.FamilyOf(j)
		if err != nil {
			t.Fatal(err)
		}
		fam, _, err := derive.Own(loaded)
		if err != nil {
			t.Fatal(err)
		}
		sec, err := render.TemplateTools(fam, "Be brief.", tools, benchNow)
		if err != nil || sec.ToolMessages != c.toolMessages {
			t.Fatalf("%s: tool messages %v (%v), want %v", c.path, sec.ToolMessages, err, c.toolMessages)
		}
		s, err := render.NewChatSession(render.SessionConfig{Family: fam, System: "Be brief.", Tools: tools, Now: benchNow, OwnCatalog: true})
		if err != nil {
			t.Fatal(err)
		}
		s.AddUser("Find the handlers.")
		call := benchCall(tools, 1)
		turn, err := render.TemplateTurn(fam, chat.Message{Role: chat.RoleAssistant, ToolCalls: []chat.ToolCall{call}})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.AddAssistant(chat.Message{Role: chat.RoleAssistant, Raw: turn, ToolCalls: []chat.ToolCall{call}}); err != nil {
			t.Fatal(err)
		}
		addChatResults(t, s, []chat.ToolCall{call}, 0, nil)
		msgs, err := s.Messages()
		if err != nil {
			t.Fatal(err)
		}
		got, err := fam.Render(templates.Input{Messages: msgs, AddGenerationPrompt: true, Now: benchNow})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(got, c.result) {
			t.Errorf("%s: the result does not render as %q:\n%s", c.path, c.result, got)
		}
		raw, err := render.NewSession(render.SessionConfig{Family: fam, System: "Be brief.", Tools: tools, Now: benchNow})
		if err != nil {
			t.Fatal(err)
		}
		raw.AddUser("Find the handlers.")
		if _, err := raw.Prompt(); err != nil {
			t.Fatal(err)
		}
		raw.AddAssistant(turn, []chat.ToolCall{call})
		if err := raw.AddResults([]chat.ToolResult{benchResult(call, 0)}); err != nil {
			t.Fatal(err)
		}
		if got, err = raw.Prompt("Be brief."); err != nil || !strings.Contains(got, c.result) {
			t.Errorf("%s: raw mode: the result does not render as %q (%v):\n%s", c.path, c.result, err, got)
		}
	}
}

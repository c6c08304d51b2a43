package render_test

import (
	"errors"
	"testing"

	"github.com/toolharness/toolharness/chat"
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

package agent

import (
	"context"
	"strings"
	"testing"
)

func TestSkillsInstructionsAndSubagent(t *testing.T) {
	skills, err := LoadSkills("testdata/skills")
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, []reply{
		{text: hermesCall("skill", `{"name": "review", "arguments": "b.go"}`)},
		{text: hermesCall("task", `{"description": "peek", "prompt": "read x and report"}`)},
		{text: hermesCall("read_file", `{"path": "x"}`)}, // the sub-agent
		{text: "x says hi"}, // the sub-agent's answer
		{text: "done"},
	}, func(c *Config) {
		c.Skills = skills
		c.Instructions, c.InstructionsSource = "Indent with tabs.", "AGENTS.md"
		sub := *c // the sub-agent gets the plain registry tools
		c.Subagent = &SubagentConfig{Tools: sub.Tools}
	})
	ex, err := h.s.Send(context.Background(), "/review a.go")
	if err != nil {
		t.Fatal(err)
	}
	if ex.Answer != "done" {
		t.Fatalf("answer %q", ex.Answer)
	}
	reqs := h.b.reqs()
	if len(reqs) != 5 {
		t.Fatalf("%d requests", len(reqs))
	}
	p0 := reqs[0].Prompt
	for _, want := range []string{"<system-reminder>", "- review: Review a file", "Indent with tabs.", "Read the file a.go with read_file"} {
		if !strings.Contains(p0, want) {
			t.Errorf("first prompt lacks %q", want)
		}
	}
	sys := p0[:strings.Index(p0, "<|im_start|>user")]
	if strings.Contains(sys, "Indent with tabs.") || !strings.Contains(sys, `"name": "task"`) || !strings.Contains(sys, `"name": "skill"`) {
		t.Errorf("system block: reminders must not be in it, the task and skill tools must:\n%s", sys)
	}
	if !strings.Contains(reqs[1].Prompt, "Read the file b.go") {
		t.Error("the skill tool's result is not in the second prompt")
	}
	subPrompt := reqs[2].Prompt
	if !strings.Contains(subPrompt, "You are a sub-agent") || strings.Contains(subPrompt, `"name": "task"`) || !strings.Contains(subPrompt, "read x and report") {
		t.Errorf("sub-agent prompt:\n%s", subPrompt)
	}
	if strings.Contains(subPrompt, "Indent with tabs") {
		t.Error("the sub-agent saw the main conversation")
	}
	if !strings.Contains(reqs[4].Prompt, "x says hi") || strings.Contains(reqs[4].Prompt, "contents of x") {
		t.Error("the main agent must see only the sub-agent's final text")
	}
	if h.runs.n("x") != 1 {
		t.Errorf("read_file ran %d times", h.runs.n("x"))
	}
	// A second message carries no repeated reminders.
	h.b.replies = []reply{{text: "ok"}}
	if _, err := h.s.Send(context.Background(), "thanks"); err != nil {
		t.Fatal(err)
	}
	last := h.b.reqs()[5].Prompt
	if strings.Count(last, "<system-reminder>") != strings.Count(p0, "<system-reminder>") {
		t.Error("reminders were repeated in the second message")
	}
	// The trace tells the sub-agent's steps apart.
	subs := 0
	for _, l := range h.traceLines(t) {
		if l["agent"] == "sub1" && l["type"] == "step" {
			subs++
		}
	}
	if subs != 2 {
		t.Errorf("%d sub-agent steps in the trace", subs)
	}
}

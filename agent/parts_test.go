package agent

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/toolharness/toolharness/chat"
	"github.com/toolharness/toolharness/parse"
)

// TestAnswerIsTheContent: a thinking model's reply (a leading <think>
// block, gpt-oss's analysis channel and harmony markup) gives as the
// answer only its content, and the reasoning apart; the hooks stream them
// apart. The history still holds the exact output, so every prompt
// extends the previous one plus what the model wrote.
func TestAnswerIsTheContent(t *testing.T) {
	harmonyCall := `<|channel|>analysis<|message|>I need the file.<|end|><|start|>assistant<|channel|>commentary to=functions.read_file <|constrain|>json<|message|>{"path": "a.txt"}<|call|>`
	for _, c := range []struct {
		name, template, format string
		replies                []string
		answer, reasoning      string
	}{
		{"think", "qwen2.5", "hermes",
			[]string{"<think>\nI need the file.\n</think>\n\n" + hermesCall("read_file", `{"path": "a.txt"}`),
				"<think>\nIt says hello.\n</think>\n\nIt says hello."},
			"It says hello.", "I need the file.\n\nIt says hello."},
		{"harmony", "gpt-oss", "",
			[]string{harmonyCall,
				"<|channel|>analysis<|message|>The file says hello.<|end|><|start|>assistant<|channel|>final<|message|>It says hello.<|return|>"},
			"It says hello.", "I need the file.\n\nThe file says hello."},
		{"harmony preamble", "gpt-oss", "",
			[]string{"<|channel|>commentary<|message|>Reading a.txt.<|end|><|start|>assistant<|channel|>commentary to=functions.read_file <|constrain|>json<|message|>{\"path\": \"a.txt\"}<|call|>",
				"<|channel|>final<|message|>It says hello.<|return|>"},
			"It says hello.", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			var text, reasoning strings.Builder
			var replies []reply
			for _, r := range c.replies {
				replies = append(replies, reply{text: r})
			}
			h := newHarness(t, replies, func(cfg *Config) {
				r, err := NewRenderer(RendererOptions{Template: c.template, Format: c.format})
				if err != nil {
					t.Fatal(err)
				}
				cfg.Renderer = r
				cfg.Hooks.OnText = func(s string) { text.WriteString(s) }
				cfg.Hooks.OnReasoning = func(s string) { reasoning.WriteString(s) }
			})
			ex, err := h.s.Send(context.Background(), "What is in a.txt?")
			if err != nil {
				t.Fatal(err)
			}
			if c.format == "" && ex.Steps[0].Format != "harmony" {
				t.Fatalf("%s parsed as %s", c.template, ex.Steps[0].Format)
			}
			if ex.Answer != c.answer || ex.Reasoning != c.reasoning || ex.Calls != 1 || ex.Stop != StopAnswered {
				t.Fatalf("exchange: answer %q, reasoning %q, %d calls, stop %s", ex.Answer, ex.Reasoning, ex.Calls, ex.Stop)
			}
			var wantText, wantReasoning strings.Builder
			for _, st := range ex.Steps {
				wantText.WriteString(st.Answer)
				wantReasoning.WriteString(st.Reasoning)
				for _, m := range []string{"<think>", "</think>", "<|channel|>", "<|message|>", "<|end|>", "<|return|>"} {
					if strings.Contains(st.Answer, m) || strings.Contains(st.Reasoning, m) {
						t.Errorf("step %d: %s in answer %q or reasoning %q", st.Step, m, st.Answer, st.Reasoning)
					}
				}
			}
			if text.String() != wantText.String() || reasoning.String() != wantReasoning.String() {
				t.Errorf("hooks: text %q, reasoning %q; steps: %q, %q", text.String(), reasoning.String(), wantText.String(), wantReasoning.String())
			}
			// The history is the exact output, whatever is shown.
			var raws []string
			for _, m := range h.s.hist {
				if m.Role == chat.RoleAssistant {
					raws = append(raws, m.Raw)
				}
			}
			if d := cmp.Diff(c.replies, raws); d != "" {
				t.Errorf("history raw (-want +got):\n%s", d)
			}
			checkPrefix(t, h.b.reqs(), c.replies)
			for _, st := range ex.Steps {
				if st.Divergence != nil {
					t.Errorf("step %d diverged: %+v", st.Step, st.Divergence)
				}
			}
			lines := h.traceLines(t)
			last := lines[len(lines)-1]
			if last["type"] != "exchange" || last["answer"] != c.answer || (c.reasoning != "" && last["reasoning"] != c.reasoning) {
				t.Errorf("trace exchange %v", last)
			}
			step := lines[len(lines)-2]
			if step["raw"] != c.replies[len(c.replies)-1] || step["answer"] != ex.Steps[len(ex.Steps)-1].Answer {
				t.Errorf("trace step: raw %q, answer %q", step["raw"], step["answer"])
			}
		})
	}
}

// TestReasoningOnlyReply: a reply cut off inside its reasoning has no
// answer, and the user is told.
func TestReasoningOnlyReply(t *testing.T) {
	h := newHarness(t, []reply{{text: "<think>Let me think about a.txt and"}}, nil)
	ex, err := h.s.Send(context.Background(), "What is in a.txt?")
	if err != nil {
		t.Fatal(err)
	}
	if ex.Answer != "" || ex.Reasoning != "Let me think about a.txt and" {
		t.Errorf("answer %q, reasoning %q", ex.Answer, ex.Reasoning)
	}
	if len(h.notes) != 1 || !strings.Contains(h.notes[0], "no answer") {
		t.Errorf("notices %q", h.notes)
	}
}

func TestAnswerOfEvents(t *testing.T) {
	evs := []Event{{Kind: EventText, Text: "<think>", Part: parse.PartFraming}, {Kind: EventText, Text: "hm", Part: parse.PartReasoning},
		{Kind: EventText, Text: "</think>", Part: parse.PartFraming}, {Kind: EventText, Text: "It is "}, {Kind: EventCall, Call: &chat.ToolCall{Name: "x"}},
		{Kind: EventText, Text: "3."}}
	if a, r := Answer(evs), Reasoning(evs); a != "It is 3." || r != "hm" {
		t.Errorf("answer %q, reasoning %q", a, r)
	}
}

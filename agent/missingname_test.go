package agent

import (
	"context"
	"strings"
	"testing"

	"github.com/toolharness/toolharness/parse"
)

// TestMissingNameShowsTheSyntax: when a call in a syntax derived from a
// loaded template has no readable name, the message the model gets back
// shows a call written in that syntax by the template itself, not only a
// description of where the name goes.
func TestMissingNameShowsTheSyntax(t *testing.T) {
	r := loadedRenderer(t, "../derive/testdata/synthetic/pipe-pairs.jinja")
	nameless := "<|acts|><|act|><|k|>path<|v|>a.txt<|/v|><|/act|><|/acts|>"
	h := newHarness(t, []reply{{text: nameless}, {text: "Done."}}, func(c *Config) { c.Renderer = r })
	ex, err := h.s.Send(context.Background(), "What is in a.txt?")
	if err != nil {
		t.Fatal(err)
	}
	var msg string
	for _, m := range ex.Steps[0].Mistakes {
		if m.Kind == string(parse.KindMissingName) {
			msg = m.Message
		}
	}
	if want := "<|acts|><|act|>NAME"; !strings.Contains(msg, want) {
		t.Fatalf("missing_name message %q lacks a call in the template's syntax (%q)", msg, want)
	}
}

// TestResultsReachTemplateWithoutToolMessages: a loaded template that
// renders no tool messages (the synthetic pipe-pairs template) would drop
// every result in raw mode; the results go as text in a user turn, and
// the model's next prompt holds them.
func TestResultsReachTemplateWithoutToolMessages(t *testing.T) {
	r := loadedRenderer(t, "../derive/testdata/synthetic/pipe-pairs.jinja")
	call := "<|acts|><|act|>read_file<|k|>path<|v|>a.txt<|/v|><|/act|><|/acts|>"
	h := newHarness(t, []reply{{text: call}, {text: "Done."}}, func(c *Config) { c.Renderer = r })
	ex, err := h.s.Send(context.Background(), "What is in a.txt?")
	if err != nil || ex.Answer != "Done." {
		t.Fatalf("answer %q, %v", ex.Answer, err)
	}
	reqs := h.b.reqs()
	if len(reqs) != 2 || !strings.Contains(reqs[1].Prompt, "[[user]] <tool_result name=\"read_file\"") || !strings.Contains(reqs[1].Prompt, "contents of a.txt") {
		t.Errorf("the second prompt lacks the result:\n%v", reqs)
	}
}

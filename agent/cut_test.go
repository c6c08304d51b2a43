package agent

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/toolharness/toolharness/backend"
	"github.com/toolharness/toolharness/chat"
)

// TestLengthCutIsALimit: a reply cut by the token limit is not an answer.
func TestLengthCutIsALimit(t *testing.T) {
	h := newHarness(t, []reply{{text: "The files are a, b and", stop: "length"}}, func(c *Config) { c.Options.MaxTokens = 40 })
	ex, err := h.s.Send(context.Background(), "list")
	var le *LimitError
	if !errors.As(err, &le) || le.Stop != StopLength || ex.Stop != StopLength {
		t.Fatalf("err %v, stop %q: want a length limit", err, ex.Stop)
	}
	if !strings.Contains(err.Error(), "token limit (40 tokens)") {
		t.Errorf("the error does not name the limit: %v", err)
	}
	lines := h.traceLines(t)
	if last := lines[len(lines)-1]; last["type"] != "exchange" || last["stop"] != "length" {
		t.Errorf("trace's last line %v", last)
	}
}

// TestConstrainedCutNamesTheLimit: a constrained call cut by the limit
// says so to the model and in the notice the user sees.
func TestConstrainedCutNamesTheLimit(t *testing.T) {
	h := newHarness(t, []reply{{text: `{"name":"read_file","argu`, stop: "length"}, {text: `{"answer":"done"}`}}, func(c *Config) {
		c.Constrained = true
		c.Options.MaxTokens = 40
		c.Backend.(*scriptBackend).constrain = true
	})
	if _, err := h.s.Send(context.Background(), "k?"); err != nil {
		t.Fatal(err)
	}
	reqs := h.b.reqs()
	if len(reqs) != 2 || !strings.Contains(reqs[1].Prompt, "cut off by the token limit (40 tokens)") {
		t.Errorf("the retry prompt does not name the limit:\n%s", reqs[len(reqs)-1].Prompt)
	}
	named := false
	for _, n := range h.notes {
		named = named || (strings.Contains(n, "unexpected end of JSON input") && strings.Contains(n, "token limit (40 tokens)"))
	}
	if !named {
		t.Errorf("no notice names the limit: %q", h.notes)
	}
}

// TestRunCaseRecordsTheCut: a benchmark attempt keeps the stop reason, and
// the error fed back names the limit.
func TestRunCaseRecordsTheCut(t *testing.T) {
	b := &scriptBackend{constrain: true, replies: []reply{{text: `{"name":"read_file","argu`, stop: "length"}, {text: `{"name":"read_file","arguments":{"path":"a"}}`}}}
	tools := []chat.Tool{{Name: "read_file", Parameters: []byte(`{"type":"object","properties":{"path":{"type":"string"}}}`)}}
	res, err := RunCase(context.Background(), b, Case{Model: "m", Template: "qwen2.5", Mode: backend.ModeRaw, Constrained: true,
		Messages: []chat.Message{{Role: chat.RoleUser, Content: "read a"}}, Tools: tools, MaxRetries: 1, Options: backend.Options{MaxTokens: 40}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Attempts) != 2 || res.Attempts[0].StopReason != "length" || res.Attempts[1].StopReason != "stop" {
		t.Fatalf("attempts %+v", res.Attempts)
	}
	if !strings.Contains(b.reqs()[1].Prompt, "token limit (40 tokens)") {
		t.Errorf("the retry prompt does not name the limit:\n%s", b.reqs()[1].Prompt)
	}
}

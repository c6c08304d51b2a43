package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/toolharness/toolharness/agent"
	"github.com/toolharness/toolharness/chat"
)

func TestCallLine(t *testing.T) {
	tests := []struct {
		call chat.ToolCall
		want string
	}{
		{chat.ToolCall{Name: "read_file", Arguments: json.RawMessage(`{"path":"a.go"}`)}, `read_file(path="a.go")`},
		{chat.ToolCall{Name: "grep", Arguments: json.RawMessage(`{"pattern":"<a & b>","n":3,"opts":{"i":true}}`)}, `grep(pattern="<a & b>", n=3, opts={"i":true})`},
		{chat.ToolCall{Name: "list_dir", Arguments: json.RawMessage(`{}`)}, `list_dir()`},
		{chat.ToolCall{Name: "bad", Arguments: json.RawMessage(`not json`)}, `bad(not json)`},
		{chat.ToolCall{Name: "w", Arguments: json.RawMessage(`{"text":"` + strings.Repeat("x", 200) + `"}`)}, `w(text="` + strings.Repeat("x", 111) + `…`},
	}
	for _, tt := range tests {
		if got := callLine(tt.call); got != tt.want {
			t.Errorf("got  %s\nwant %s", got, tt.want)
		}
	}
}

func TestResultLine(t *testing.T) {
	tests := []struct {
		o    agent.Outcome
		want string
	}{
		{agent.Outcome{Result: chat.ToolResult{Content: "one line"}}, "one line"},
		{agent.Outcome{Result: chat.ToolResult{Content: "a\nb\nc\n"}}, "a … (3 lines)"},
		{agent.Outcome{Result: chat.ToolResult{Content: "no such file", IsError: true}}, "✗ no such file"},
		{agent.Outcome{Mistake: "unknown_tool", Result: chat.ToolResult{Content: "there is no tool x", IsError: true}}, "✗ refused (unknown_tool): there is no tool x"},
		{agent.Outcome{}, "(empty)"},
	}
	for _, tt := range tests {
		if got := resultLine(tt.o); got != tt.want {
			t.Errorf("got %q want %q", got, tt.want)
		}
	}
}

func TestConsoleLines(t *testing.T) {
	var b bytes.Buffer
	c := newConsole(&b)
	h := c.hooks()
	h.OnText("Looking")
	h.OnCall(chat.ToolCall{Name: "list_dir", Arguments: json.RawMessage(`{"path":"."}`)})
	h.OnResult(agent.Outcome{Result: chat.ToolResult{Content: "a.go\nb.go"}})
	h.OnText("Done.")
	c.endExchange()
	want := "Looking\n● list_dir(path=\".\")\n  ⎿ a.go … (2 lines)\nDone.\n"
	if b.String() != want {
		t.Errorf("got %q\nwant %q", b.String(), want)
	}
}

// TestConsoleReasoning: reasoning is shown between "Thinking..." and
// "...done thinking.", faint on a terminal, before the answer or a call.
func TestConsoleReasoning(t *testing.T) {
	var b bytes.Buffer
	c := newConsole(&b)
	h := c.hooks()
	h.OnReasoning("\nI need ")
	h.OnReasoning("the file.\n")
	h.OnCall(chat.ToolCall{Name: "read_file", Arguments: json.RawMessage(`{"path":"a"}`)})
	h.OnResult(agent.Outcome{Result: chat.ToolResult{Content: "hello"}})
	h.OnReasoning("It says hello.")
	h.OnText("\n\nHello.")
	c.endExchange()
	want := "Thinking...\nI need the file.\n...done thinking.\n\n● read_file(path=\"a\")\n  ⎿ hello\nThinking...\nIt says hello.\n...done thinking.\n\nHello.\n"
	if b.String() != want {
		t.Errorf("got %q\nwant %q", b.String(), want)
	}
	b.Reset()
	c.dim = true
	h.OnReasoning("hm")
	h.OnText("Yes.")
	c.endExchange()
	if want := faint + "Thinking...\n" + normal + faint + "hm" + normal + "\n" + faint + "...done thinking.\n\n" + normal + "Yes.\n"; b.String() != want {
		t.Errorf("dim: got %q\nwant %q", b.String(), want)
	}
}

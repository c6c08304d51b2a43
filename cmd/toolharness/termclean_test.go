package main

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/toolharness/toolharness/agent"
	"github.com/toolharness/toolharness/chat"
)

func TestCtlFilter(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"\x1b[2J\x1b]0;pwned\aHello", "Hello"},
		{"a\tb\nc\r\x07\x00\x7fd", "a\tb\ncd"},
		{"\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\", "link"},
		{"\x1b(Bplain\x1bcreset", "plainreset"},
		{"C1: \u009b2Jx \u009d0;t\u0007y \u0085z", "C1: x y z"},
		{"é Â \u00a0 ü 日本", "é Â \u00a0 ü 日本"},
		{"\x1b]0;never closed\nnext line", "\nnext line"},
		{"\x1b[31mred\x1b[0m", "red"},
	} {
		if got := withoutControls(tc.in); got != tc.want {
			t.Errorf("%q: got %q, want %q", tc.in, got, tc.want)
		}
		// Cut anywhere, as a stream: the same.
		var f ctlFilter
		var b bytes.Buffer
		for i := 0; i < len(tc.in); i++ {
			b.WriteString(f.filter(tc.in[i : i+1]))
		}
		b.WriteString(f.flush())
		if b.String() != tc.want {
			t.Errorf("%q byte by byte: got %q, want %q", tc.in, b.String(), tc.want)
		}
	}
}

// TestConsoleDropsControls: on a terminal, escape sequences in a reply or
// a tool result never reach it, even cut between chunks; --raw keeps them.
func TestConsoleDropsControls(t *testing.T) {
	attack := "\x1b[2J\x1b]0;pwned\a"
	for _, clean := range []bool{true, false} {
		var b bytes.Buffer
		c := newConsole(&b)
		c.clean = clean
		h := c.hooks()
		h.OnText("Hi " + attack[:5])
		h.OnText(attack[5:] + "there")
		h.OnCall(chat.ToolCall{ID: "1", Name: "read_file", Arguments: json.RawMessage(`{"path":"` + `\u001b[2J` + `"}`)})
		h.OnResult(agent.Outcome{Call: chat.ToolCall{ID: "1"}, Result: chat.ToolResult{Content: attack + "file text"}})
		c.endExchange()
		got := b.String()
		if clean && got != "Hi there\n● read_file(path=\"\\u001b[2J\")\n  ⎿ file text\n" {
			t.Errorf("terminal: %q", got)
		}
		if !clean && !bytes.Contains(b.Bytes(), []byte("Hi "+attack+"there")) {
			t.Errorf("--raw lost the reply's bytes: %q", got)
		}
	}
}

// TestConsoleParallelCalls: with two calls, each result is shown under
// its own call, whatever order the results come in.
func TestConsoleParallelCalls(t *testing.T) {
	var b bytes.Buffer
	c := newConsole(&b)
	h := c.hooks()
	a := chat.ToolCall{ID: "call_0", Name: "read_file", Arguments: json.RawMessage(`{"path":"a"}`)}
	bb := chat.ToolCall{ID: "call_1", Name: "read_file", Arguments: json.RawMessage(`{"path":"b"}`)}
	h.OnCall(a)
	h.OnCall(bb)
	h.OnResult(agent.Outcome{Call: bb, Result: chat.ToolResult{Content: "text of b"}})
	h.OnResult(agent.Outcome{Call: a, Result: chat.ToolResult{Content: "text of a"}})
	c.endExchange()
	want := "● read_file(path=\"a\")\n  ⎿ text of a\n● read_file(path=\"b\")\n  ⎿ text of b\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}

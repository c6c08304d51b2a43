package agent

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/toolharness/toolharness/chat"
)

func TestLocalTools(t *testing.T) {
	var runs atomic.Int64
	echo := LocalTool{
		Tool: chat.Tool{Name: "echo", Parameters: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"},"n":{"type":"integer"}},"required":["text"]}`)},
		Run: func(_ context.Context, a map[string]any) (string, error) {
			runs.Add(1)
			if a["text"] == "boom" {
				panic("boom")
			}
			if a["text"] == "fail" {
				return "", errors.New("it failed")
			}
			return a["text"].(string), nil
		},
	}
	reg, counts := newCountingRegistry()
	tb, err := addLocal(RegistryTools(reg), []LocalTool{echo})
	if err != nil {
		t.Fatal(err)
	}
	if names := toolNames(tb.Core()); names != "read_file,write_file,echo" {
		t.Errorf("core %s", names)
	}
	tests := []struct {
		id, args  string
		mistake   string
		content   string
		isError   bool
		ran       bool
		wantCount int64
	}{
		{id: "1", args: `{"text":"hi"}`, content: "hi", ran: true, wantCount: 1},
		{id: "1", args: `{"text":"hi"}`, content: "hi", ran: true, wantCount: 1}, // same ID: not run again
		{id: "2", args: `{"n":1}`, mistake: "invalid_arguments", content: "missing the required parameter(s) text", isError: true, wantCount: 1},
		{id: "3", args: `{"text":5}`, mistake: "invalid_arguments", content: `parameter "text" must be a string`, isError: true, wantCount: 1},
		{id: "4", args: `{"text":"x","zz":1}`, mistake: "invalid_arguments", content: `unknown parameter "zz"`, isError: true, wantCount: 1},
		{id: "5", args: `[1]`, mistake: "invalid_arguments", content: "not a JSON object", isError: true, wantCount: 1},
		{id: "6", args: `{"text":"boom"}`, content: "panicked: boom", isError: true, ran: true, wantCount: 2},
		{id: "7", args: `{"text":"fail"}`, content: "error: it failed", isError: true, ran: true, wantCount: 3},
	}
	for _, tt := range tests {
		o := tb.Execute(context.Background(), chat.ToolCall{ID: tt.id, Name: "echo", Arguments: json.RawMessage(tt.args)})
		if o.Mistake != tt.mistake || o.Result.IsError != tt.isError || o.Ran != tt.ran || !strings.Contains(o.Result.Content, tt.content) || o.Result.CallID != tt.id {
			t.Errorf("%s %s: %+v", tt.id, tt.args, o)
		}
		if runs.Load() != tt.wantCount {
			t.Errorf("%s: %d runs, want %d", tt.id, runs.Load(), tt.wantCount)
		}
	}
	// Everything else goes to the registry.
	if o := tb.Execute(context.Background(), chat.ToolCall{ID: "r", Name: "read_file", Arguments: json.RawMessage(`{"path":"p"}`)}); !o.Ran || counts.n("p") != 1 {
		t.Errorf("registry call %+v", o)
	}
	if _, kind, problem := tb.Validate(chat.ToolCall{Name: "nosuch", Arguments: json.RawMessage(`{}`)}); kind != "unknown_tool" || problem == "" {
		t.Errorf("unknown tool: %q %q", kind, problem)
	}
}

func TestSubset(t *testing.T) {
	reg, counts := newCountingRegistry()
	sub := Subset(RegistryTools(reg), func(n string) bool { return n == "read_file" })
	if names := toolNames(sub.Core()); names != "read_file" {
		t.Errorf("core %s", names)
	}
	o := sub.Execute(context.Background(), chat.ToolCall{ID: "w", Name: "write_file", Arguments: json.RawMessage(`{"path":"w"}`)})
	if o.Mistake != "unknown_tool" || o.Ran || counts.n("w") != 0 || !strings.Contains(o.Result.Content, "read_file") {
		t.Errorf("write_file through the subset: %+v", o)
	}
	if o := sub.Execute(context.Background(), chat.ToolCall{ID: "r", Name: "read_file", Arguments: json.RawMessage(`{"path":"r"}`)}); !o.Ran || counts.n("r") != 1 {
		t.Errorf("read_file: %+v", o)
	}
}

func toolNames(ts []chat.Tool) string {
	var n []string
	for _, t := range ts {
		n = append(n, t.Name)
	}
	return strings.Join(n, ",")
}

package agent

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/toolharness/toolharness/backend"
	"github.com/toolharness/toolharness/chat"
)

func serverCall(id, name, args string) chat.ToolCall {
	c := chat.ToolCall{ID: id, Name: name, Arguments: json.RawMessage(args)}
	if !json.Valid(c.Arguments) {
		c.Arguments, c.Raw = nil, args
	}
	return c
}

// TestServerMode: the tools go in the tools field, the system message has
// no catalog, the server's calls are validated (an invalid one is
// retried with the model-facing error) and run, and the history sends
// them back as structures.
func TestServerMode(t *testing.T) {
	h := newHarness(t, []reply{
		{calls: []chat.ToolCall{serverCall("s1", "read_file", `{"path": 5}`)}},
		{text: "Reading.", calls: []chat.ToolCall{serverCall("s2", "read_file", `{"path": "c"}`)}},
		{text: "done"},
	}, func(c *Config) { c.Mode = backend.ModeServer })
	ex, err := h.s.Send(context.Background(), "read c")
	if err != nil {
		t.Fatal(err)
	}
	if ex.Answer != "done" || ex.Retries != 1 || ex.Calls != 2 || h.runs.n("c") != 1 {
		t.Fatalf("answer %q, %d retries, %d calls, %d runs of c", ex.Answer, ex.Retries, ex.Calls, h.runs.n("c"))
	}
	reqs := h.b.reqs()
	if len(reqs) != 3 {
		t.Fatalf("%d requests", len(reqs))
	}
	first := reqs[0]
	if first.Mode != backend.ModeServer || len(first.Tools) != 2 || first.Stop != nil || first.Prompt != "" {
		t.Errorf("first request: mode %s, %d tools, stop %q, prompt %q", first.Mode, len(first.Tools), first.Stop, first.Prompt)
	}
	if sys := first.Messages[0]; sys.Role != chat.RoleSystem || strings.Contains(sys.Content, "read_file") {
		t.Errorf("the system message carries the catalog in server mode: %q", sys.Content)
	}
	// Request 2: user, the invalid call as a structure, its error result.
	m := reqs[1].Messages
	last := m[len(m)-2:]
	if last[0].Role != chat.RoleAssistant || len(last[0].ToolCalls) != 1 || last[0].ToolCalls[0].ID != "s1" || last[0].Raw != "" ||
		last[1].Role != chat.RoleTool || last[1].ToolCallID != "s1" || !last[1].IsError {
		t.Errorf("retry history: %+v", last)
	}
	m = reqs[2].Messages
	if a := m[len(m)-2]; a.Content != "Reading." || a.ToolCalls[0].Name != "read_file" || string(a.ToolCalls[0].Arguments) != `{"path": "c"}` {
		t.Errorf("assistant turn %+v", a)
	}
	if r := m[len(m)-1]; r.Role != chat.RoleTool || r.Content != "contents of c" || r.IsError {
		t.Errorf("result %+v", r)
	}
	for _, st := range ex.Steps {
		if st.Divergence != nil || st.Mode != backend.ModeServer {
			t.Errorf("step %d: mode %s, divergence %+v", st.Step, st.Mode, st.Divergence)
		}
	}
}

// TestServerModeMalformedArguments: arguments the server sent as
// something other than a JSON object are the call's parse error, told
// to the model, never run.
func TestServerModeMalformedArguments(t *testing.T) {
	h := newHarness(t, []reply{
		{calls: []chat.ToolCall{serverCall("", "read_file", `{"path": `)}},
		{text: "gave up"},
	}, func(c *Config) { c.Mode = backend.ModeServer })
	ex, err := h.s.Send(context.Background(), "read c")
	if err != nil {
		t.Fatal(err)
	}
	st := ex.Steps[0]
	if len(st.Mistakes) != 1 || st.Mistakes[0].Kind != "bad_arguments" || len(st.Ran) != 0 || st.Calls[0].ID == "" {
		t.Fatalf("mistakes %+v, ran %v, calls %+v", st.Mistakes, st.Ran, st.Calls)
	}
	if ex.Retries != 1 || ex.Answer != "gave up" {
		t.Errorf("retries %d answer %q", ex.Retries, ex.Answer)
	}
}

func TestServerModeRefusals(t *testing.T) {
	r, err := NewRenderer(RendererOptions{Template: "qwen2.5", Chat: true})
	if err != nil {
		t.Fatal(err)
	}
	reg, _ := newCountingRegistry()
	cfg := Config{Backend: &scriptBackend{constrain: true}, Model: "m", Mode: backend.ModeServer, Renderer: r, Tools: RegistryTools(reg), Env: testEnv, Constrained: true}
	if _, err := New(context.Background(), cfg); err == nil || !strings.Contains(err.Error(), "server mode") {
		t.Errorf("constrained server mode: err %v", err)
	}
	cfg.Constrained, cfg.Backend = false, &rawOnly{}
	if _, err := New(context.Background(), cfg); err == nil || !strings.Contains(err.Error(), "cannot complete in server mode") {
		t.Errorf("backend without server tools: err %v", err)
	}
}

type rawOnly struct{ scriptBackend }

func (*rawOnly) Capabilities() backend.Capabilities { return backend.Capabilities{Raw: true} }

// TestRunCaseServerMode: a benchmark case in server mode validates the
// server's calls and retries an invalid one with its error.
func TestRunCaseServerMode(t *testing.T) {
	b := &scriptBackend{replies: []reply{
		{calls: []chat.ToolCall{serverCall("x", "get_weather", `{"city": 3}`)}},
		{calls: []chat.ToolCall{serverCall("y", "get_weather", `{"city": "Paris"}`)}},
	}}
	tool := chat.Tool{Name: "get_weather", Parameters: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`)}
	res, err := RunCase(context.Background(), b, Case{Model: "m", Template: "qwen2.5", Mode: backend.ModeServer, MaxRetries: 2,
		Tools: []chat.Tool{tool}, Messages: []chat.Message{{Role: chat.RoleSystem, Content: "sys"}, {Role: chat.RoleUser, Content: "weather?"}}})
	if err != nil {
		t.Fatal(err)
	}
	if !res.OK || len(res.Attempts) != 2 || len(res.Attempts[0].Invalid) != 1 || len(res.Attempts[1].Calls) != 1 {
		t.Fatalf("%+v", res)
	}
	reqs := b.reqs()
	if len(reqs[0].Tools) != 1 || reqs[0].Messages[0].Content != "sys" || reqs[0].Stop != nil {
		t.Errorf("request %+v", reqs[0])
	}
	if m := reqs[1].Messages; m[2].ToolCalls[0].ID != "x" || m[3].ToolCallID != "x" || !m[3].IsError {
		t.Errorf("retry messages %+v", m)
	}
	if _, err := RunCase(context.Background(), b, Case{Model: "m", Template: "qwen2.5", Mode: backend.ModeServer, Constrained: true,
		Tools: []chat.Tool{tool}, Messages: []chat.Message{{Role: chat.RoleUser, Content: "x"}}}); err == nil {
		t.Error("constrained server-mode case ran")
	}
	var be *backend.Error
	if _, err := RunCase(context.Background(), b, Case{Model: "m", Template: "qwen2.5", Mode: backend.ModeServer,
		Tools: []chat.Tool{tool}, Messages: []chat.Message{{Role: chat.RoleUser, Content: "x"}}}); !errors.As(err, &be) {
		t.Errorf("exhausted script: err %v", err)
	}
}

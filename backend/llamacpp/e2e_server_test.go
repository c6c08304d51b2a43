package llamacpp

import (
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/toolharness/toolharness/backend"
	"github.com/toolharness/toolharness/chat"
	"github.com/toolharness/toolharness/internal/llamacpptest"
)

// qwenTemplate is Qwen2.5's own chat template: from it the server's
// autoparser learns the hermes call syntax (<tool_call>{…}</tool_call>)
// that its own parser then reads.
func qwenTemplate(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("../../templates/testdata/official/Qwen-Qwen2.5-7B-Instruct.jinja")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// cityTool has one argument with one allowed value: under the server's
// own tool-call grammar (tool_choice "required") the random model can
// write only this call.
var cityTool = chat.Tool{Name: "get_weather", Description: "Current weather of a city.",
	Parameters: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string","enum":["Paris"]}},"required":["city"]}`)}

// callPrefill opens the assistant's reply with the call marker: the
// server continues a final assistant message (its prefill_assistant),
// and its tool-call grammar, which admits any text before the marker,
// then admits only a call. Without it the random model writes text and
// never the marker.
var callPrefill = chat.Message{Role: chat.RoleAssistant, Content: "<tool_call>\n"}

// TestE2EServerMode sends a server-mode conversation to a real
// llama-server (--jinja is its default): the tools go in the tools field,
// the server's own grammar forces the call (tool_choice "required", the
// reply opened with the call marker), and its
// own parser returns it as tool_calls; the call then goes back as a
// structure with its result, and a grammar (allowed with tool_choice
// "none") scripts the final answer.
func TestE2EServerMode(t *testing.T) {
	srv := llamacpptest.Start(t, llamacpptest.WithChatTemplate(qwenTemplate(t)))
	c := e2eClient(t, srv)
	ctx := e2eCtx(t)
	zero, no := 0.0, false
	opts := backend.Options{Temperature: &zero, MaxTokens: 400}
	msgs := []chat.Message{{Role: chat.RoleSystem, Content: "You are terse."}, {Role: chat.RoleUser, Content: "Weather in Paris?"}}
	resp, err := c.Generate(ctx, backend.Request{Mode: backend.ModeServer, Messages: append(msgs, callPrefill), Tools: []chat.Tool{cityTool},
		ToolChoice: "required", ParallelToolCalls: &no, Stop: []string{"</tool_call>"}, Options: opts}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("first answer: text %q, calls %+v, stop %q, usage %+v", resp.Text, resp.ToolCalls, resp.StopReason, resp.Usage)
	if len(resp.ToolCalls) != 1 {
		t.Fatalf("%d calls; want the one the grammar forces", len(resp.ToolCalls))
	}
	got := resp.ToolCalls[0]
	if got.ID == "" || got.Name != "get_weather" {
		t.Errorf("call %+v", got)
	}
	var args map[string]any
	if err := json.Unmarshal(got.Arguments, &args); err != nil || !cmp.Equal(args, map[string]any{"city": "Paris"}) {
		t.Errorf("arguments %s (%v)", got.Arguments, err)
	}
	if resp.StopReason != "stop" || resp.Usage.PromptTokens == 0 || !resp.Usage.CachedKnown {
		t.Errorf("stop %q usage %+v", resp.StopReason, resp.Usage)
	}
	msgs = append(msgs, chat.Message{Role: chat.RoleAssistant, Content: resp.Text, ToolCalls: resp.ToolCalls},
		chat.ToolResult{CallID: got.ID, Name: got.Name, Content: "18°C, sunny"}.Message())
	// The final answer streams: its text reaches the callback in pieces
	// as the server sends them, and they make up the whole.
	var chunks []string
	final, err := c.Generate(ctx, backend.Request{Mode: backend.ModeServer, Messages: msgs, Tools: []chat.Tool{cityTool},
		ToolChoice: "none", Grammar: llamacpptest.Exactly("Sunny, 18°C."), Options: opts},
		func(s string) error { chunks = append(chunks, s); return nil })
	if err != nil {
		t.Fatal(err)
	}
	if final.Text != "Sunny, 18°C." || len(final.ToolCalls) != 0 || len(chunks) < 2 || strings.Join(chunks, "") != final.Text {
		t.Errorf("final answer %q in chunks %q, calls %+v", final.Text, chunks, final.ToolCalls)
	}
	// The second request extends the first: the server reuses its prefix.
	if !final.Usage.CachedKnown || final.Usage.CachedTokens < resp.Usage.PromptTokens/2 {
		t.Errorf("second request reused %d of %d prompt tokens (first prompt %d)", final.Usage.CachedTokens, final.Usage.PromptTokens, resp.Usage.PromptTokens)
	}
	t.Logf("final: %q, usage %+v", final.Text, final.Usage)
}

// TestE2EServerModeStream: the call of TestE2EServerMode, asked streamed
// and whole of the same server: the stream's call pieces put together
// are the call the whole answer holds (the server's ids are random, so
// they are compared apart), with the usage and the reused prefix read
// from the stream's last event.
func TestE2EServerModeStream(t *testing.T) {
	srv := llamacpptest.Start(t, llamacpptest.WithChatTemplate(qwenTemplate(t)))
	c := e2eClient(t, srv)
	ctx := e2eCtx(t)
	zero, no := 0.0, false
	req := backend.Request{Mode: backend.ModeServer, Tools: []chat.Tool{cityTool}, ToolChoice: "required", ParallelToolCalls: &no,
		Stop: []string{"</tool_call>"}, Options: backend.Options{Temperature: &zero, MaxTokens: 400},
		Messages: []chat.Message{{Role: chat.RoleUser, Content: "Weather in Paris?"}, callPrefill}}
	whole, err := c.Generate(ctx, req, nil)
	if err != nil {
		t.Fatal(err)
	}
	chunks := 0
	streamed, err := c.Generate(ctx, req, func(string) error { chunks++; return nil })
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("whole: %+v %+v; streamed (%d text chunks): %+v %+v", whole.ToolCalls, whole.Usage, chunks, streamed.ToolCalls, streamed.Usage)
	if len(whole.ToolCalls) != 1 || len(streamed.ToolCalls) != 1 {
		t.Fatalf("calls: whole %+v, streamed %+v", whole.ToolCalls, streamed.ToolCalls)
	}
	w, s := whole.ToolCalls[0], streamed.ToolCalls[0]
	if s.ID == "" || s.Name != w.Name || string(s.Arguments) != string(w.Arguments) || streamed.Text != whole.Text || streamed.StopReason != "stop" {
		t.Errorf("streamed call %+v text %q stop %q; whole %+v text %q", s, streamed.Text, streamed.StopReason, w, whole.Text)
	}
	// The same prompt again: the server reuses all of it but the last
	// token (n_past == prompt length is evaluated once more).
	u := streamed.Usage
	if u.PromptTokens != whole.Usage.PromptTokens || !u.CachedKnown || u.CachedTokens != u.PromptTokens-1 || u.GeneratedTokens == 0 || u.TimeToFirstChunk <= 0 {
		t.Errorf("streamed usage %+v; whole %+v", u, whole.Usage)
	}
}

// TestE2EServerModeNoJinja: a llama-server started with --no-jinja
// refuses tools; the refusal is a server error (HTTP 500, its own
// message), never an answer.
func TestE2EServerModeNoJinja(t *testing.T) {
	srv := llamacpptest.Start(t, llamacpptest.WithArgs("--no-jinja"))
	c := e2eClient(t, srv)
	_, err := c.Generate(e2eCtx(t), backend.Request{Mode: backend.ModeServer, Tools: []chat.Tool{cityTool},
		Messages: []chat.Message{{Role: chat.RoleUser, Content: "Weather in Paris?"}}}, nil)
	var be *backend.Error
	if !errors.As(err, &be) || be.Kind != backend.KindServer || be.Status != 500 || be.Message != "tools param requires --jinja flag" {
		t.Fatalf("err %v", err)
	}
}

package llamacpp

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/toolharness/toolharness/backend"
	"github.com/toolharness/toolharness/chat"
)

var weatherTool = chat.Tool{Name: "get_weather", Description: "Weather of a city",
	Parameters: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`)}

// TestServerMode checks the shape of a server-mode exchange against a
// recorded answer: a caller without a callback asks /v1/chat/completions
// unstreamed, tools in the tools field, the history's calls as
// structures; the server's calls come back in ToolCalls.
func TestServerMode(t *testing.T) {
	fs := newFixtureServer(t, map[string][]reply{"/v1/chat/completions": {{status: 200, file: "chat_tool_calls.json"}}})
	c := newClient(t, fs, Config{})
	if !c.Capabilities().ServerTools {
		t.Fatal("ServerTools is false")
	}
	req := backend.Request{Mode: backend.ModeServer, Tools: []chat.Tool{weatherTool}, Stop: []string{"</s>"},
		Options: backend.Options{MaxTokens: 64, Seed: ptr(1)},
		Messages: []chat.Message{
			{Role: chat.RoleSystem, Content: "be brief"},
			{Role: chat.RoleUser, Content: "weather in Rome?"},
			{Role: chat.RoleAssistant, ToolCalls: []chat.ToolCall{{ID: "a1", Name: "get_weather", Arguments: json.RawMessage(`{"city":"Rome"}`)}}},
			{Role: chat.RoleTool, ToolCallID: "a1", Name: "get_weather", Content: "rain"},
			{Role: chat.RoleUser, Content: "and Paris?"},
		}}
	resp, err := c.Generate(t.Context(), req, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []chat.ToolCall{{ID: "cYZmyZb4TqEh1FMxM2plYi1uyKQZJBvv", Name: "get_weather", Arguments: json.RawMessage(`{"city":"Paris"}`)}}
	if diff := cmp.Diff(want, resp.ToolCalls); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
	if resp.Text != "" || resp.StopReason != "stop" || resp.Usage.PromptTokens != 221 || !resp.Usage.CachedKnown {
		t.Errorf("text %q, stop %q, usage %+v", resp.Text, resp.StopReason, resp.Usage)
	}
	if len(fs.reqs) != 1 {
		t.Fatalf("%d requests, want 1 (no /props, /tokenize: the server's template makes the prompt)", len(fs.reqs))
	}
	wantBody := `{"messages":[{"role":"system","content":"be brief"},{"role":"user","content":"weather in Rome?"},` +
		`{"role":"assistant","content":null,"tool_calls":[{"id":"a1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Rome\"}"}}]},` +
		`{"role":"tool","content":"rain","name":"get_weather","tool_call_id":"a1"},{"role":"user","content":"and Paris?"}],` +
		`"tools":[{"type":"function","function":{"name":"get_weather","description":"Weather of a city","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}}],` +
		`"stream":false,"cache_prompt":true,"max_tokens":64,"stop":["</s>"],"seed":1}`
	if got := fs.reqs[0].Body; got != wantBody {
		t.Errorf("request body:\n got %s\nwant %s", got, wantBody)
	}
}

// TestServerModeStream reads a streamed server-mode answer: the request
// asks for SSE with the usage at the end, the content's deltas reach the
// callback one by one as they come, the calls' pieces (id and name on the
// first, arguments in parts, a second call by its index) are put
// together, and the usage and cache figures of the last event are kept.
func TestServerModeStream(t *testing.T) {
	fs := newFixtureServer(t, map[string][]reply{"/v1/chat/completions": {{status: 200, file: "chat_stream_tool_calls.sse"}}})
	c := newClient(t, fs, Config{})
	var chunks []string
	resp, err := c.Generate(t.Context(), backend.Request{Mode: backend.ModeServer, Tools: []chat.Tool{weatherTool},
		Messages: []chat.Message{{Role: chat.RoleUser, Content: "weather in Paris and Rome?"}}},
		func(s string) error { chunks = append(chunks, s); return nil })
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"Checking", " now."}, chunks); diff != "" || resp.Text != "Checking now." {
		t.Errorf("text %q, chunks (-want +got):\n%s", resp.Text, diff)
	}
	want := []chat.ToolCall{
		{ID: "Xr3aP0", Name: "get_weather", Arguments: json.RawMessage(`{"city": "Paris"}`)},
		{ID: "Yb7cQ2", Name: "get_weather", Arguments: json.RawMessage(`{"city": "Rome"}`)},
	}
	if diff := cmp.Diff(want, resp.ToolCalls); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
	u := resp.Usage
	if resp.StopReason != "stop" || u.PromptTokens != 221 || u.GeneratedTokens != 40 || !u.CachedKnown || u.CachedTokens != 180 ||
		u.PromptDuration != 12500*time.Microsecond || u.TimeToFirstChunk <= 0 || u.Total < u.TimeToFirstChunk {
		t.Errorf("stop %q, usage %+v", resp.StopReason, u)
	}
	if body := fs.reqs[0].Body; !strings.Contains(body, `"stream":true,"stream_options":{"include_usage":true},"cache_prompt":true`) {
		t.Errorf("request body %s", body)
	}
}

// TestServerModeNonStreaming: a client configured NonStreaming asks for
// the whole answer even with a callback, which gets its content as one
// chunk.
func TestServerModeNonStreaming(t *testing.T) {
	fs := newFixtureServer(t, map[string][]reply{"/v1/chat/completions": {{status: 200,
		body: `{"choices":[{"finish_reason":"stop","index":0,"message":{"role":"assistant","content":"Sunny."}}],"usage":{"completion_tokens":3,"prompt_tokens":20}}`}}})
	c := newClient(t, fs, Config{NonStreaming: true})
	var chunks []string
	resp, err := c.Generate(t.Context(), backend.Request{Mode: backend.ModeServer, Tools: []chat.Tool{weatherTool},
		Messages: []chat.Message{{Role: chat.RoleUser, Content: "hi"}}}, func(s string) error { chunks = append(chunks, s); return nil })
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text != "Sunny." || !cmp.Equal(chunks, []string{"Sunny."}) || !strings.Contains(fs.reqs[0].Body, `"stream":false`) {
		t.Errorf("text %q chunks %q body %s", resp.Text, chunks, fs.reqs[0].Body)
	}
}

// TestServerModeStreamRecorded reads a stream the pinned llama-server
// sent (TestE2EServerModeStream's request, captured): the call's id and
// name on the first of 10 pieces of its arguments, finish_reason
// tool_calls, then the usage and timings in an event with no choices.
func TestServerModeStreamRecorded(t *testing.T) {
	fs := newFixtureServer(t, map[string][]reply{"/v1/chat/completions": {{status: 200, file: "chat_stream_recorded.sse"}}})
	c := newClient(t, fs, Config{})
	resp, err := c.Generate(t.Context(), backend.Request{Mode: backend.ModeServer, Tools: []chat.Tool{weatherTool},
		Messages: []chat.Message{{Role: chat.RoleUser, Content: "Weather in Paris?"}}}, func(string) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	want := []chat.ToolCall{{ID: "ypeF2tpVhLSTxohcQykT8jAyHMPRQ7D1", Name: "get_weather", Arguments: json.RawMessage("{\"city\"\n                    :\"Paris\" }")}}
	if diff := cmp.Diff(want, resp.ToolCalls); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
	u := resp.Usage
	if resp.Text != "" || resp.StopReason != "stop" || u.PromptTokens != 185 || u.GeneratedTokens != 58 || !u.CachedKnown || u.CachedTokens != 0 {
		t.Errorf("text %q stop %q usage %+v", resp.Text, resp.StopReason, u)
	}
}

// TestServerModeStreamFaults: a stream cut inside a call is a cut (with
// the text that arrived, consumed), a mid-stream error event is the
// server's error, and a callback's error ends the request as it is.
func TestServerModeStreamFaults(t *testing.T) {
	req := backend.Request{Mode: backend.ModeServer, Tools: []chat.Tool{weatherTool}, Messages: []chat.Message{{Role: chat.RoleUser, Content: "hi"}}}
	for _, tc := range []struct {
		name, file string
		kind       backend.Kind
		msg        string
	}{
		{"cut inside a call", "chat_stream_cut.sse", backend.KindStreamCut, "stream ended after 3 events without finish_reason or [DONE]"},
		{"error event", "chat_stream_error.sse", backend.KindServer, "Failed to parse tool call arguments as JSON"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs := newFixtureServer(t, map[string][]reply{"/v1/chat/completions": {{status: 200, file: tc.file}}})
			c := newClient(t, fs, Config{Retries: -1})
			resp, err := c.Generate(t.Context(), req, func(string) error { return nil })
			var be *backend.Error
			if !errors.As(err, &be) || be.Kind != tc.kind || be.Message != tc.msg || !be.Consumed {
				t.Fatalf("err %#v; want kind %s, %q, consumed", err, tc.kind, tc.msg)
			}
			if !strings.HasPrefix(resp.Text, "Check") {
				t.Errorf("text %q: what arrived is kept", resp.Text)
			}
		})
	}
	fs := newFixtureServer(t, map[string][]reply{"/v1/chat/completions": {{status: 200, file: "chat_stream_tool_calls.sse"}}})
	c := newClient(t, fs, Config{})
	stop := errors.New("enough")
	if _, err := c.Generate(t.Context(), req, func(string) error { return stop }); err != stop {
		t.Errorf("callback error: got %v", err)
	}
}

func TestServerModeErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		rep  reply
		kind backend.Kind
	}{
		{"server without --jinja", reply{status: 500, body: `{"error":{"code":500,"message":"tools param requires --jinja flag","type":"server_error"}}`}, backend.KindServer},
		{"prompt too long", reply{status: 400, file: "error_context.json"}, backend.KindContextOverflow},
		{"not JSON", reply{status: 200, body: `<html>`}, backend.KindBadResponse},
		{"no choices", reply{status: 200, body: `{"choices":[]}`}, backend.KindBadResponse},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs := newFixtureServer(t, map[string][]reply{"/v1/chat/completions": {tc.rep}})
			c := newClient(t, fs, Config{Retries: -1})
			_, err := c.Generate(t.Context(), backend.Request{Mode: backend.ModeServer, Tools: []chat.Tool{weatherTool},
				Messages: []chat.Message{{Role: chat.RoleUser, Content: "hi"}}}, nil)
			var be *backend.Error
			if !errors.As(err, &be) || be.Kind != tc.kind {
				t.Fatalf("err %v; want kind %s", err, tc.kind)
			}
		})
	}
	fs := newFixtureServer(t, nil)
	c := newClient(t, fs, Config{})
	_, err := c.Generate(t.Context(), backend.Request{Mode: backend.ModeRaw, Prompt: "p", Tools: []chat.Tool{weatherTool}}, nil)
	if !errors.Is(err, backend.ErrUnsupported) || len(fs.reqs) != 0 {
		t.Errorf("tools in raw mode: err %v after %d requests; want unsupported before any", err, len(fs.reqs))
	}
}

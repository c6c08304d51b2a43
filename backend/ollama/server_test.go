package ollama

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/toolharness/toolharness/backend"
	"github.com/toolharness/toolharness/chat"
)

var weatherTool = chat.Tool{Name: "get_weather", Description: "Weather of a city",
	Parameters: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`)}

// fakeChat answers /api/chat with status and body, and keeps the request.
func fakeChat(t *testing.T, status int, body string) (*Backend, *[]byte) {
	t.Helper()
	var got []byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/chat" {
			http.NotFound(w, r)
			return
		}
		got, _ = io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	b, err := New(Config{Host: srv.URL, Attempts: 1})
	if err != nil {
		t.Fatal(err)
	}
	b.models["tiny"] = ModelInfo{ContextLength: 4096}
	return b, &got
}

var serverReq = backend.Request{Model: "tiny", Mode: backend.ModeServer, Tools: []chat.Tool{weatherTool},
	Messages: []chat.Message{
		{Role: chat.RoleUser, Content: "weather in Rome?"},
		{Role: chat.RoleAssistant, ToolCalls: []chat.ToolCall{{ID: "call_0", Name: "get_weather", Arguments: json.RawMessage(`{"city":"Rome"}`)}}},
		{Role: chat.RoleTool, ToolCallID: "call_0", Name: "get_weather", Content: "rain"},
		{Role: chat.RoleUser, Content: "and Paris?"},
	}}

// TestServerMode: /api/chat unstreamed with the tools field; the calls of
// the answer (arguments an object, no id in v0.6.5) come back in
// ToolCalls.
func TestServerMode(t *testing.T) {
	b, sent := fakeChat(t, 200, `{"model":"tiny","created_at":"2026-12-02T17:00:00Z","message":{"role":"assistant","content":"",`+
		`"tool_calls":[{"function":{"name":"get_weather","arguments":{"city":"Paris","unit":"c"}}}]},`+
		`"done_reason":"stop","done":true,"total_duration":1000,"prompt_eval_count":40,"eval_count":9}`)
	if !b.Capabilities().ServerTools {
		t.Fatal("ServerTools is false")
	}
	resp, err := b.Generate(t.Context(), serverReq, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []chat.ToolCall{{Name: "get_weather", Arguments: json.RawMessage(`{"city":"Paris","unit":"c"}`)}}
	if diff := cmp.Diff(want, resp.ToolCalls); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
	if resp.StopReason != "stop" || resp.Usage.PromptTokens != 40 || resp.Usage.GeneratedTokens != 9 {
		t.Errorf("stop %q, usage %+v", resp.StopReason, resp.Usage)
	}
	var body struct {
		Stream   bool `json:"stream"`
		Messages []struct {
			Role      string          `json:"role"`
			ToolCalls json.RawMessage `json:"tool_calls"`
			ToolName  string          `json:"tool_name"`
		} `json:"messages"`
		Tools []struct {
			Function struct {
				Name string `json:"name"`
			} `json:"function"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(*sent, &body); err != nil {
		t.Fatalf("request %s: %v", *sent, err)
	}
	if body.Stream || len(body.Tools) != 1 || body.Tools[0].Function.Name != "get_weather" || len(body.Messages) != 4 ||
		string(body.Messages[1].ToolCalls) != `[{"id":"call_0","function":{"index":0,"name":"get_weather","arguments":{"city":"Rome"}}}]` ||
		body.Messages[2].ToolName != "get_weather" {
		t.Errorf("request body %s", *sent)
	}
}

// TestServerModeRefusal: Ollama answers a model without tool support in
// its template with HTTP 400; that is a server error, never an answer.
func TestServerModeRefusal(t *testing.T) {
	b, _ := fakeChat(t, 400, `{"error":"registry.ollama.ai/library/tiny:latest does not support tools"}`)
	_, err := b.Generate(t.Context(), serverReq, nil)
	var be *backend.Error
	if !errors.As(err, &be) || be.Kind != backend.KindServer || be.Status != 400 || be.Message != "registry.ollama.ai/library/tiny:latest does not support tools" {
		t.Fatalf("err %#v", err)
	}
	if backend.Retryable(err) {
		t.Error("a refusal is retryable")
	}
	req := serverReq
	req.Mode, req.Prompt = backend.ModeRaw, "p"
	if _, err := b.Generate(t.Context(), req, nil); !errors.Is(err, backend.ErrUnsupported) {
		t.Errorf("tools in raw mode: err %v", err)
	}
	req = serverReq
	req.ToolChoice = "required"
	if _, err := b.Generate(t.Context(), req, nil); !errors.Is(err, backend.ErrUnsupported) {
		t.Errorf("tool_choice required: err %v", err)
	}
}

// TestServerModeStream: a caller with a callback gets /api/chat streamed
// (NDJSON, recorded from Ollama v0.6.5's ChatHandler with tools: a
// message with the calls its parser found once they parse, content
// cleared, then the done message with the metrics; text that is no call
// held back to the done message). The calls of every message are kept in
// order, the text reaches the callback, the metrics come from the done
// message. A constructed stream with two calls in two messages and text
// in two pieces checks the order and the pieces.
func TestServerModeStream(t *testing.T) {
	read := func(name string) string {
		b, err := os.ReadFile("testdata/" + name)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	for _, tc := range []struct {
		name         string
		body         string
		text         string
		chunks       []string
		calls        []chat.ToolCall
		prompt, eval int
	}{
		{"recorded call", read("chat-tools-call.ndjson"), "", nil,
			[]chat.ToolCall{{Name: "get_weather", Arguments: json.RawMessage(`{"city":"Paris"}`)}}, 217, 61},
		{"recorded text", read("chat-tools-text.ndjson"), `"Sunny." `, []string{`"Sunny." `}, nil, 217, 10},
		{"two calls, text in pieces", `{"model":"tiny","created_at":"2026-12-06T01:00:00Z","message":{"role":"assistant","content":"","tool_calls":[{"function":{"name":"get_weather","arguments":{"city":"Paris"}}}]},"done":false}` + "\n" +
			`{"model":"tiny","created_at":"2026-12-06T01:00:00Z","message":{"role":"assistant","content":"","tool_calls":[{"function":{"index":1,"name":"get_weather","arguments":{"city":"Rome"}}}]},"done":false}` + "\n" +
			`{"model":"tiny","created_at":"2026-12-06T01:00:00Z","message":{"role":"assistant","content":"Sun"},"done":false}` + "\n" +
			`{"model":"tiny","created_at":"2026-12-06T01:00:01Z","message":{"role":"assistant","content":"ny."},"done_reason":"stop","done":true,"total_duration":1000,"prompt_eval_count":40,"eval_count":9}` + "\n",
			"Sunny.", []string{"Sun", "ny."},
			[]chat.ToolCall{{Name: "get_weather", Arguments: json.RawMessage(`{"city":"Paris"}`)}, {Name: "get_weather", Arguments: json.RawMessage(`{"city":"Rome"}`)}}, 40, 9},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, sent := fakeChat(t, 200, tc.body)
			var chunks []string
			resp, err := b.Generate(t.Context(), serverReq, func(s string) error { chunks = append(chunks, s); return nil })
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.calls, resp.ToolCalls); diff != "" {
				t.Errorf("calls (-want +got):\n%s", diff)
			}
			if resp.Text != tc.text || !cmp.Equal(chunks, tc.chunks) || resp.StopReason != "stop" || resp.Usage.PromptTokens != tc.prompt || resp.Usage.GeneratedTokens != tc.eval ||
				resp.Usage.TimeToFirstChunk <= 0 {
				t.Errorf("text %q chunks %q stop %q usage %+v", resp.Text, chunks, resp.StopReason, resp.Usage)
			}
			var body struct {
				Stream bool `json:"stream"`
			}
			if err := json.Unmarshal(*sent, &body); err != nil || !body.Stream {
				t.Errorf("request %s: not streamed (%v)", *sent, err)
			}
		})
	}
}

package openai

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/toolharness/toolharness/backend"
	"github.com/toolharness/toolharness/chat"
)

// TestServerMode: a caller without a callback asks /chat/completions
// unstreamed with tools and tool_choice; the answer's calls (arguments as
// a JSON string) come back in ToolCalls, its content as Text.
func TestServerMode(t *testing.T) {
	var sent []byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sent, _ = io.ReadAll(r.Body)
		if r.URL.Path != "/v1/chat/completions" {
			http.NotFound(w, r)
			return
		}
		io.WriteString(w, `{"choices":[{"index":0,"finish_reason":"tool_calls","message":{"role":"assistant","content":"Checking.",`+
			`"tool_calls":[{"id":"call_9","type":"function","function":{"name":"f","arguments":"{\"x\":1}"}},`+
			`{"id":"call_10","type":"function","function":{"name":"f","arguments":"{\"x\":"}}]}}],`+
			`"usage":{"prompt_tokens":12,"completion_tokens":5,"prompt_tokens_details":{"cached_tokens":8}}}`)
	}))
	t.Cleanup(srv.Close)
	b, err := New(Config{BaseURL: srv.URL + "/v1", Attempts: 1})
	if err != nil {
		t.Fatal(err)
	}
	if !b.Capabilities().ServerTools {
		t.Fatal("ServerTools is false")
	}
	tool := chat.Tool{Name: "f", Parameters: json.RawMessage(`{"type":"object"}`)}
	resp, err := b.Generate(t.Context(), backend.Request{Model: "m", Mode: backend.ModeServer, Tools: []chat.Tool{tool}, ToolChoice: "required",
		Messages: []chat.Message{{Role: chat.RoleUser, Content: "go"}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []chat.ToolCall{{ID: "call_9", Name: "f", Arguments: json.RawMessage(`{"x":1}`)}, {ID: "call_10", Name: "f", Raw: `{"x":`}}
	if diff := cmp.Diff(want, resp.ToolCalls); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
	if resp.Text != "Checking." || resp.StopReason != "stop" || resp.Usage.CachedTokens != 8 || !resp.Usage.CachedKnown {
		t.Errorf("text %q stop %q usage %+v", resp.Text, resp.StopReason, resp.Usage)
	}
	wantBody := `{"model":"m","messages":[{"role":"user","content":"go"}],"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object"}}}],"tool_choice":"required","stream":false}`
	if string(sent) != wantBody {
		t.Errorf("body\n got %s\nwant %s", sent, wantBody)
	}
}

// serverStreamSSE is a streamed server-mode answer in the OpenAI API's
// documented shape: role first, text deltas, a call's id and name with
// empty arguments, its arguments in pieces, finish_reason tool_calls,
// then the usage in an event of its own (stream_options.include_usage)
// and [DONE].
const serverStreamSSE = `data: {"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}

data: {"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"Check"},"finish_reason":null}]}

data: {"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"ing."},"finish_reason":null}]}

data: {"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_9","type":"function","function":{"name":"f","arguments":""}}]},"finish_reason":null}]}

data: {"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"x\""}}]},"finish_reason":null}]}

data: {"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":":1}"}}]},"finish_reason":null}]}

data: {"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}

data: {"id":"c","object":"chat.completion.chunk","choices":[],"usage":{"prompt_tokens":12,"completion_tokens":5,"total_tokens":17,"prompt_tokens_details":{"cached_tokens":8}}}

data: [DONE]

`

// TestServerModeStream: a caller with a callback gets the answer
// streamed: stream and stream_options in the body, each text delta to the
// callback as it comes, the call's pieces put together, the usage of the
// last event kept. A stream cut before its end is a cut, with the text
// that arrived.
func TestServerModeStream(t *testing.T) {
	body := serverStreamSSE
	var sent []byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sent, _ = io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	b, err := New(Config{BaseURL: srv.URL + "/v1", Attempts: 1})
	if err != nil {
		t.Fatal(err)
	}
	tool := chat.Tool{Name: "f", Parameters: json.RawMessage(`{"type":"object"}`)}
	req := backend.Request{Model: "m", Mode: backend.ModeServer, Tools: []chat.Tool{tool}, Messages: []chat.Message{{Role: chat.RoleUser, Content: "go"}}}
	var chunks []string
	resp, err := b.Generate(t.Context(), req, func(s string) error { chunks = append(chunks, s); return nil })
	if err != nil {
		t.Fatal(err)
	}
	want := []chat.ToolCall{{ID: "call_9", Name: "f", Arguments: json.RawMessage(`{"x":1}`)}}
	if diff := cmp.Diff(want, resp.ToolCalls); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
	if resp.Text != "Checking." || !cmp.Equal(chunks, []string{"Check", "ing."}) || resp.StopReason != "stop" ||
		resp.Usage.PromptTokens != 12 || resp.Usage.CachedTokens != 8 || !resp.Usage.CachedKnown || resp.Usage.TimeToFirstChunk <= 0 {
		t.Errorf("text %q chunks %q stop %q usage %+v", resp.Text, chunks, resp.StopReason, resp.Usage)
	}
	wantBody := `{"model":"m","messages":[{"role":"user","content":"go"}],"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object"}}}],"stream":true,"stream_options":{"include_usage":true}}`
	if string(sent) != wantBody {
		t.Errorf("body\n got %s\nwant %s", sent, wantBody)
	}
	// A recorded Ollama v0.6.5 stream: the call whole in one delta.
	data, err := os.ReadFile("testdata/ollama-v0.6.5-chat-tools.sse")
	if err != nil {
		t.Fatal(err)
	}
	body = string(data)
	resp, err = b.Generate(t.Context(), req, func(s string) error { chunks = append(chunks, s); return nil })
	if err != nil {
		t.Fatal(err)
	}
	want = []chat.ToolCall{{ID: "call_53jkjr0e", Name: "get_weather", Arguments: json.RawMessage(`{"city":"Paris"}`)}}
	if diff := cmp.Diff(want, resp.ToolCalls); diff != "" || resp.Text != "" || resp.StopReason != "stop" || resp.Usage.PromptTokens != 217 || resp.Usage.GeneratedTokens != 81 {
		t.Errorf("recorded Ollama stream: text %q stop %q usage %+v, calls (-want +got):\n%s", resp.Text, resp.StopReason, resp.Usage, diff)
	}
	body = serverStreamSSE[:strings.Index(serverStreamSSE, `data: {"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"`)]
	resp, err = b.Generate(t.Context(), req, func(string) error { return nil })
	var be *backend.Error
	if !errors.As(err, &be) || be.Kind != backend.KindStreamCut || !be.Consumed || resp.Text != "Checking." {
		t.Errorf("cut stream: err %v, text %q", err, resp.Text)
	}
}

func TestServerModeErrors(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(400)
		io.WriteString(w, `{"error":{"message":"tools are not supported by this model","type":"invalid_request_error"}}`)
	}))
	t.Cleanup(srv.Close)
	b, err := New(Config{BaseURL: srv.URL, Attempts: 1})
	if err != nil {
		t.Fatal(err)
	}
	req := backend.Request{Model: "m", Mode: backend.ModeServer, Messages: []chat.Message{{Role: chat.RoleUser, Content: "go"}}}
	_, err = b.Generate(t.Context(), req, nil)
	var be *backend.Error
	if !errors.As(err, &be) || be.Kind != backend.KindServer || be.Status != 400 || be.Message != "tools are not supported by this model" {
		t.Errorf("err %v", err)
	}
	req.Grammar = `root ::= "x"`
	if _, err := b.Generate(t.Context(), req, nil); !errors.Is(err, backend.ErrUnsupported) {
		t.Errorf("grammar: err %v", err)
	}
	if _, err := b.Generate(t.Context(), backend.Request{Model: "m", Mode: backend.ModeChat, Tools: req.Tools,
		ToolChoice: "auto", Messages: req.Messages}, nil); !errors.Is(err, backend.ErrUnsupported) {
		t.Errorf("tool_choice in chat mode: err %v", err)
	}
}

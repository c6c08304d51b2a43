package serve

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/ollama/ollama/api"
)

// TestOllamaChat drives /api/chat with Ollama's own Go client: a call,
// streamed and not, then the loop's answer.
func TestOllamaChat(t *testing.T) {
	var tools api.Tools
	if err := json.Unmarshal([]byte(`[`+okTool+`]`), &tools); err != nil {
		t.Fatal(err)
	}
	for _, stream := range []bool{false, true} {
		b := &scriptBackend{replies: []string{call("get_weather", `{"city": "Paris"}`), "It is sunny."}}
		srv := startServer(t, Config{}, testModel(t, b))
		u, _ := url.Parse(srv.URL)
		c := api.NewClient(u, http.DefaultClient)
		msgs := []api.Message{{Role: "user", Content: "Weather in Paris?"}}
		var last api.ChatResponse
		var text strings.Builder
		chat := func() {
			t.Helper()
			text.Reset()
			err := c.Chat(context.Background(), &api.ChatRequest{Model: "test-model", Messages: msgs, Tools: tools, Stream: &stream}, func(r api.ChatResponse) error {
				text.WriteString(r.Message.Content)
				last = r
				return nil
			})
			if err != nil {
				t.Fatalf("stream %v: %v", stream, err)
			}
		}
		chat()
		calls := last.Message.ToolCalls
		if len(calls) != 1 || calls[0].Function.Name != "get_weather" || calls[0].Function.Arguments.String() != `{"city":"Paris"}` || !last.Done {
			t.Fatalf("stream %v: reply %+v, want one get_weather call", stream, last)
		}
		msgs = append(msgs, api.Message{Role: "assistant", ToolCalls: calls}, api.Message{Role: "tool", ToolName: "get_weather", Content: "sunny"})
		chat()
		if text.String() != "It is sunny." || len(last.Message.ToolCalls) != 0 {
			t.Errorf("stream %v: answer %q %+v", stream, text.String(), last.Message)
		}
		reqs := b.reqs()
		if !strings.HasPrefix(reqs[1].Prompt, reqs[0].Prompt+call("get_weather", `{"city": "Paris"}`)) {
			t.Errorf("stream %v: the second prompt does not extend the first and its output", stream)
		}
	}
}

func TestMetricsAndHealth(t *testing.T) {
	b := &scriptBackend{replies: []string{call("nope", `{}`), call("nope", `{}`), call("nope", `{}`)}}
	srv := startServer(t, Config{Metrics: NewMetrics()}, testModel(t, b))
	post(t, srv.URL+"/v1/chat/completions", `{"model":"m","tools":[`+okTool+`],"messages":[{"role":"user","content":"hi"}]}`, nil)
	for path, want := range map[string][]string{
		"/healthz": {"ok"},
		"/metrics": {`toolharness_serve_requests_total{api="openai",model="test-model",outcome="invalid_dropped"} 1`,
			`toolharness_serve_retries_total{api="openai",model="test-model"} 2`,
			`toolharness_serve_invalid_calls_dropped_total{api="openai",model="test-model"} 1`,
			`toolharness_serve_request_seconds_count{api="openai",model="test-model"} 1`},
	} {
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		for _, w := range want {
			if !strings.Contains(string(data), w) {
				t.Errorf("%s lacks %s:\n%s", path, w, data)
			}
		}
	}
}

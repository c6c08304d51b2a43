package serve

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
)

// post sends body to path and returns the status and the decoded body.
func post(t *testing.T, url, body string, header map[string]string) (int, map[string]any, http.Header) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	var out map[string]any
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatalf("body %q is not a JSON object: %v", data, err)
	}
	return resp.StatusCode, out, resp.Header
}

// errorText is the message of an error body in the API's shape, and
// whether the shape is the API's.
func errorText(api string, body map[string]any) (string, bool) {
	switch api {
	case apiAnthropic:
		e, ok := body["error"].(map[string]any)
		if body["type"] != "error" || !ok {
			return "", false
		}
		msg, _ := e["message"].(string)
		return msg, e["type"] != nil
	case apiOllama:
		msg, ok := body["error"].(string)
		return msg, ok
	}
	e, ok := body["error"].(map[string]any)
	if !ok {
		return "", false
	}
	msg, _ := e["message"].(string)
	return msg, e["type"] != nil
}

const okTool = `{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"}}}}}`

func manyTools(n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"type":"function","function":{"name":"tool_%d","description":"Tool number %d does one thing well.","parameters":{"type":"object","properties":{"path":{"type":"string","description":"A path."}}}}}`, i, i)
	}
	return b.String()
}

const (
	anOkTool        = `{"name":"get_weather","input_schema":{"type":"object","properties":{"city":{"type":"string"}}}}`
	anBadSchemaTool = `{"name":"f","input_schema":{"type":"object","properties":{"a":{"type":"strin"}}}}`
)

func manyAnTools(n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"name":"tool_%d","description":"Tool number %d does one thing well.","input_schema":{"type":"object","properties":{"path":{"type":"string","description":"A path."}}}}`, i, i)
	}
	return b.String()
}

func TestBadInput(t *testing.T) {
	user := `"messages":[{"role":"user","content":"hi"}]`
	tests := []struct {
		name, api, path, body string
		status                int
		// field must appear in the error message.
		field string
	}{
		{"malformed JSON", apiOpenAI, "/v1/chat/completions", `{"model":"m",`, 400, "body"},
		{"empty body", apiOpenAI, "/v1/chat/completions", ``, 400, "body"},
		{"wrong type", apiOpenAI, "/v1/chat/completions", `{"model":"m","messages":"hi"}`, 400, "messages"},
		{"wrong type of max_tokens", apiOpenAI, "/v1/chat/completions", `{"model":"m",` + user + `,"max_tokens":"ten"}`, 400, "max_tokens"},
		{"no messages", apiOpenAI, "/v1/chat/completions", `{"model":"m"}`, 400, "messages"},
		{"n>1", apiOpenAI, "/v1/chat/completions", `{"model":"m",` + user + `,"n":2}`, 400, "n"},
		{"logprobs", apiOpenAI, "/v1/chat/completions", `{"model":"m",` + user + `,"logprobs":true}`, 400, "logprobs"},
		{"schema that does not compile", apiOpenAI, "/v1/chat/completions", `{"model":"m",` + user + `,"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object","properties":{"a":{"type":"strin"}}}}}]}`, 400, "tools[0]"},
		{"colliding tool names", apiOpenAI, "/v1/chat/completions", `{"model":"m",` + user + `,"tools":[` + okTool + `,` + okTool + `]}`, 400, "tools[1]"},
		{"10,000 tools", apiOpenAI, "/v1/chat/completions", `{"model":"m",` + user + `,"tools":[` + manyTools(10000) + `]}`, 400, "tools"},
		{"unknown tool_call_id", apiOpenAI, "/v1/chat/completions", `{"model":"m","messages":[{"role":"user","content":"hi"},{"role":"tool","tool_call_id":"call_x","content":"r"}]}`, 400, "messages[1].tool_call_id"},
		{"unknown tool_choice", apiOpenAI, "/v1/chat/completions", `{"model":"m",` + user + `,"tools":[` + okTool + `],"tool_choice":{"type":"function","function":{"name":"nope"}}}`, 400, "tool_choice"},
		{"bad role", apiOpenAI, "/v1/chat/completions", `{"model":"m","messages":[{"role":"wizard","content":"hi"}]}`, 400, "messages[0]"},
		{"anthropic malformed", apiAnthropic, "/v1/messages", `{"model":`, 400, "body"},
		{"anthropic no max_tokens", apiAnthropic, "/v1/messages", `{"model":"m",` + user + `}`, 400, "max_tokens"},
		{"anthropic wrong type", apiAnthropic, "/v1/messages", `{"model":"m","max_tokens":"x",` + user + `}`, 400, "max_tokens"},
		{"anthropic unknown tool_use_id", apiAnthropic, "/v1/messages", `{"model":"m","max_tokens":10,"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_x","content":"r"}]}]}`, 400, "messages[0].content.tool_use_id"},
		{"anthropic server tool", apiAnthropic, "/v1/messages", `{"model":"m","max_tokens":10,` + user + `,"tools":[{"type":"web_search_20250305","name":"web_search"}]}`, 400, "tools[0].type"},
		{"anthropic image", apiAnthropic, "/v1/messages", `{"model":"m","max_tokens":10,"messages":[{"role":"user","content":[{"type":"image","source":{}}]}]}`, 400, "messages[0].content[0]"},
		{"anthropic bad tool_choice", apiAnthropic, "/v1/messages", `{"model":"m","max_tokens":10,` + user + `,"tool_choice":{"type":"maybe"}}`, 400, "tool_choice.type"},
		{"anthropic schema that does not compile", apiAnthropic, "/v1/messages", `{"model":"m","max_tokens":10,` + user + `,"tools":[` + anBadSchemaTool + `]}`, 400, "tools[0]"},
		{"anthropic colliding tool names", apiAnthropic, "/v1/messages", `{"model":"m","max_tokens":10,` + user + `,"tools":[` + anOkTool + `,` + anOkTool + `]}`, 400, "tools[1]"},
		{"anthropic 10,000 tools", apiAnthropic, "/v1/messages", `{"model":"m","max_tokens":10,` + user + `,"tools":[` + manyAnTools(10000) + `]}`, 400, "tools"},
		{"count_tokens malformed", apiAnthropic, "/v1/messages/count_tokens", `{"model":`, 400, "body"},
		{"count_tokens wrong type", apiAnthropic, "/v1/messages/count_tokens", `{"model":"m","messages":"hi"}`, 400, "messages"},
		{"count_tokens schema that does not compile", apiAnthropic, "/v1/messages/count_tokens", `{"model":"m",` + user + `,"tools":[` + anBadSchemaTool + `]}`, 400, "tools[0]"},
		{"count_tokens colliding tool names", apiAnthropic, "/v1/messages/count_tokens", `{"model":"m",` + user + `,"tools":[` + anOkTool + `,` + anOkTool + `]}`, 400, "tools[1]"},
		{"count_tokens unknown tool_use_id", apiAnthropic, "/v1/messages/count_tokens", `{"model":"m","messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_x","content":"r"}]}]}`, 400, "messages[0].content.tool_use_id"},
		{"ollama malformed", apiOllama, "/api/chat", `{`, 400, "body"},
		{"ollama wrong type", apiOllama, "/api/chat", `{"model":"m","messages":"hi"}`, 400, "messages"},
		{"ollama wrong type of num_predict", apiOllama, "/api/chat", `{"model":"m",` + user + `,"options":{"num_predict":"ten"}}`, 400, "num_predict"},
		{"ollama schema that does not compile", apiOllama, "/api/chat", `{"model":"m",` + user + `,"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object","properties":{"a":{"type":"strin"}}}}}]}`, 400, "tools[0]"},
		{"ollama colliding tool names", apiOllama, "/api/chat", `{"model":"m",` + user + `,"tools":[` + okTool + `,` + okTool + `]}`, 400, "tools[1]"},
		{"ollama 10,000 tools", apiOllama, "/api/chat", `{"model":"m",` + user + `,"tools":[` + manyTools(10000) + `]}`, 400, "tools"},
		{"ollama unknown tool_call_id", apiOllama, "/api/chat", `{"model":"m","messages":[{"role":"user","content":"hi"},{"role":"tool","tool_call_id":"call_x","content":"r"}]}`, 400, "messages[1].tool_call_id"},
		{"ollama logprobs", apiOllama, "/api/chat", `{"model":"m",` + user + `,"logprobs":true}`, 400, "logprobs"},
		{"ollama top_logprobs", apiOllama, "/api/chat", `{"model":"m",` + user + `,"top_logprobs":3}`, 400, "top_logprobs"},
		{"ollama format", apiOllama, "/api/chat", `{"model":"m",` + user + `,"format":"json"}`, 400, "format"},
		{"ollama orphan result", apiOllama, "/api/chat", `{"model":"m","messages":[{"role":"user","content":"hi"},{"role":"tool","content":"r","tool_name":"x"}]}`, 400, "messages[1]"},
	}
	b := &scriptBackend{}
	m := testModel(t, b)
	m.Window = 8192
	srv := startServer(t, Config{MaxBody: 8 << 20}, m)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, body, _ := post(t, srv.URL+tt.path, tt.body, nil)
			msg, shaped := errorText(tt.api, body)
			if status != tt.status || !shaped {
				t.Fatalf("status %d, body %v; want %d in %s's error shape", status, body, tt.status, tt.api)
			}
			if !strings.Contains(msg, tt.field) {
				t.Errorf("message %q does not name %s", msg, tt.field)
			}
		})
	}
	if n := len(b.reqs()); n != 0 {
		t.Errorf("bad requests reached the model %d times", n)
	}
}

// TestOversizedBody: a body past --max-body is 413 (Request Entity Too
// Large: the request is refused for its size, not its content) in the
// caller's error shape on every door.
func TestOversizedBody(t *testing.T) {
	b := &scriptBackend{}
	srv := startServer(t, Config{MaxBody: 1024}, testModel(t, b))
	big := `{"model":"m","max_tokens":10,"messages":[{"role":"user","content":"` + strings.Repeat("a", 4096) + `"}]}`
	for _, c := range []struct{ api, path string }{
		{apiOpenAI, "/v1/chat/completions"},
		{apiAnthropic, "/v1/messages"},
		{apiAnthropic, "/v1/messages/count_tokens"},
		{apiOllama, "/api/chat"},
	} {
		status, body, _ := post(t, srv.URL+c.path, big, nil)
		msg, shaped := errorText(c.api, body)
		if status != http.StatusRequestEntityTooLarge || !shaped || !strings.Contains(msg, "1024 bytes") {
			t.Errorf("%s: status %d, body %v; want 413 in %s's error shape naming the limit", c.path, status, body, c.api)
		}
	}
	if n := len(b.reqs()); n != 0 {
		t.Errorf("oversized requests reached the model %d times", n)
	}
}

// TestHarmlessFields: what real clients send and changes nothing is
// accepted.
func TestHarmlessFields(t *testing.T) {
	b := &scriptBackend{replies: []string{"Hi.", "Hi.", "Hi."}}
	srv := startServer(t, Config{}, testModel(t, b))
	for _, c := range []struct{ path, body string }{
		{"/v1/chat/completions", `{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}],"user":"u1","metadata":{"a":"b"},"store":false,"n":1,"parallel_tool_calls":true,"presence_penalty":0}`},
		{"/v1/messages", `{"model":"m","max_tokens":10,"messages":[{"role":"user","content":"hi"}],"metadata":{"user_id":"u"},"system":[{"type":"text","text":"s","cache_control":{"type":"ephemeral"}}]}`},
		{"/api/chat", `{"model":"m","messages":[{"role":"user","content":"hi"}],"stream":false,"keep_alive":"5m","options":{"num_ctx":4096}}`},
	} {
		status, body, _ := post(t, srv.URL+c.path, c.body, map[string]string{"anthropic-beta": "prompt-caching-2024-07-31", "anthropic-version": "2023-06-01"})
		if status != http.StatusOK {
			t.Errorf("%s: status %d %v", c.path, status, body)
		}
	}
}

func TestAPIKeyAndBusy(t *testing.T) {
	b := &scriptBackend{replies: []string{blockReply}, canceled: make(chan struct{})}
	srv := startServer(t, Config{APIKey: "sekrit", MaxConcurrent: 1}, testModel(t, b))
	body := `{"model":"m","messages":[{"role":"user","content":"hi"}]}`
	if status, _, _ := post(t, srv.URL+"/v1/chat/completions", body, map[string]string{"Authorization": "Bearer wrong"}); status != http.StatusUnauthorized {
		t.Errorf("a wrong key: status %d, want 401", status)
	}
	// One request holds the only slot; the next gets 429.
	held := make(chan struct{})
	go func() {
		defer close(held)
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/v1/chat/completions", strings.NewReader(`{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]}`))
		req.Header.Set("x-api-key", "sekrit")
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			buf := make([]byte, 1)
			_, _ = resp.Body.Read(buf)
			resp.Body.Close() // leaving cancels the generation
		}
	}()
	for range 200 {
		if len(b.reqs()) > 0 {
			break
		}
		sleepMS(10)
	}
	status, _, h := post(t, srv.URL+"/v1/chat/completions", body, map[string]string{"Authorization": "Bearer sekrit"})
	if status != http.StatusTooManyRequests || h.Get("Retry-After") == "" {
		t.Errorf("past the limit: status %d, Retry-After %q; want 429 with Retry-After", status, h.Get("Retry-After"))
	}
	<-held
}

func TestDecodersNeverPanic(t *testing.T) {
	for _, s := range fuzzSeeds {
		decodeAll([]byte(s))
	}
}

var fuzzSeeds = []string{
	`{"model":"m","messages":[{"role":"user","content":"hi"}],"tools":[` + okTool + `],"tool_choice":"required","stream":true,"stream_options":{"include_usage":true}}`,
	`{"model":"m","messages":[{"role":"user","content":"hi"},{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}]},{"role":"tool","tool_call_id":"call_1","content":"sunny"}]}`,
	`{"model":"m","max_tokens":10,"system":"s","messages":[{"role":"user","content":"hi"},{"role":"assistant","content":[{"type":"thinking","thinking":"t"},{"type":"tool_use","id":"toolu_1","name":"f","input":{"a":1}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":[{"type":"text","text":"r"}],"is_error":true}]}],"tool_choice":{"type":"tool","name":"f"}}`,
	`{"model":"m","messages":[{"role":"assistant","tool_calls":[{"function":{"name":"f","arguments":{"a":1}}}]},{"role":"tool","tool_name":"f","content":"r"}],"options":{"stop":["x"],"num_predict":5}}`,
	`{"stop":5,"tools":[1],"messages":[null]}`,
}

// decodeAll runs every API's decoder on data.
func decodeAll(data []byte) {
	_, _, _ = decodeOpenAI(data)
	_, _, _ = decodeAnthropic(data, true)
	_, _, _ = decodeOllama(data)
}

func FuzzDecoders(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		decodeAll(data)
	})
}

// TestCountTokensLargeCatalog: count_tokens counts a catalog too large for
// the model's window rather than refusing it: the count is what it asks.
func TestCountTokensLargeCatalog(t *testing.T) {
	m := testModel(t, &scriptBackend{})
	m.Window = 8192
	srv := startServer(t, Config{}, m)
	status, body, _ := post(t, srv.URL+"/v1/messages/count_tokens", `{"model":"m","messages":[{"role":"user","content":"hi"}],"tools":[`+manyAnTools(10000)+`]}`, nil)
	if n, _ := body["input_tokens"].(float64); status != http.StatusOK || int(n) <= m.Window {
		t.Errorf("status %d, body %v; want 200 and a count past the window of %d", status, body, m.Window)
	}
}

package serve

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolharness/toolharness/backend"
	"github.com/toolharness/toolharness/chat"
)

// TestDeadline: a request that outlasts the server's per-request deadline
// is cancelled upstream and answered, in the caller's shape, with an
// error that names the deadline: a 504 before anything was streamed, an
// in-band error after.
func TestDeadline(t *testing.T) {
	const timeout = 300 * time.Millisecond
	msgs := `"messages":[{"role":"user","content":"hi"}]`
	tests := []struct {
		api, path, body string
		status          int
		want            string // in the body
	}{
		{apiOpenAI, "/v1/chat/completions", `{"model":"m",` + msgs + `}`, http.StatusGatewayTimeout, `"type":"upstream_error"`},
		{apiOpenAI, "/v1/chat/completions", `{"model":"m","stream":true,` + msgs + `}`, http.StatusOK, `data: {"error":{`},
		{apiAnthropic, "/v1/messages", `{"model":"m","max_tokens":9,` + msgs + `}`, http.StatusGatewayTimeout, `"type":"api_error"`},
		{apiAnthropic, "/v1/messages", `{"model":"m","max_tokens":9,"stream":true,` + msgs + `}`, http.StatusOK, "event: error\n"},
		{apiOllama, "/api/chat", `{"model":"m","stream":false,` + msgs + `}`, http.StatusGatewayTimeout, `{"error":"`},
		{apiOllama, "/api/chat", `{"model":"m",` + msgs + `}`, http.StatusOK, `{"error":"`},
	}
	for _, tt := range tests {
		t.Run(tt.api+" "+tt.body, func(t *testing.T) {
			b := &scriptBackend{replies: []string{blockReply}, canceled: make(chan struct{})}
			srv := startServer(t, Config{Timeout: timeout}, testModel(t, b))
			start := time.Now()
			resp, err := http.Post(srv.URL+tt.path, "application/json", strings.NewReader(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			data, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("answered %v after a %v deadline", d, timeout)
			}
			if resp.StatusCode != tt.status || !strings.Contains(string(data), tt.want) || !strings.Contains(string(data), "deadline of 300ms") {
				t.Errorf("%d %s\nwant %d with %q and the deadline named", resp.StatusCode, data, tt.status, tt.want)
			}
			select {
			case <-b.canceled:
			case <-time.After(5 * time.Second):
				t.Error("the generation upstream was not cancelled at the deadline")
			}
		})
	}
}

// syncBuffer is a trace file the test reads while the server writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestTrace: --trace writes one JSON line per request, with every
// generation's raw output (a retried one included), the calls the client
// got and the finish.
func TestTrace(t *testing.T) {
	bad, good := call("get_wether", `{"city": "Paris"}`), call("get_weather", `{"city": "Paris"}`)
	b := &scriptBackend{replies: []string{bad, good, "It is sunny."}}
	var trace syncBuffer
	eng, err := NewEngine(EngineConfig{Models: []*Model{testModel(t, b)}, Trace: &trace})
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewServer(Config{Engine: eng})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s)
	defer srv.Close()
	for _, body := range []string{
		`{"model":"m","tools":[` + okTool + `],"messages":[{"role":"user","content":"Weather?"}]}`,
		`{"model":"m","max_tokens":50,"messages":[{"role":"user","content":"Weather?"}]}`,
	} {
		path := "/v1/chat/completions"
		if strings.Contains(body, "max_tokens") {
			path = "/v1/messages"
		}
		resp, err := http.Post(srv.URL+path, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: %s", path, resp.Status)
		}
	}
	type line struct {
		Type     string `json:"type"`
		API      string `json:"api"`
		Model    string `json:"model"`
		Attempts []struct {
			Raw string `json:"raw"`
		} `json:"attempts"`
		Calls []struct {
			Name string `json:"name"`
		} `json:"calls"`
		Finish string `json:"finish"`
	}
	var got []line
	sc := bufio.NewScanner(strings.NewReader(trace.String()))
	for sc.Scan() {
		var l line
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("trace line %q: %v", sc.Text(), err)
		}
		got = append(got, l)
	}
	if len(got) != 2 {
		t.Fatalf("%d trace lines, want 2:\n%s", len(got), trace.String())
	}
	first, second := got[0], got[1]
	if first.Type != "request" || first.API != apiOpenAI || first.Model != "test-model" || len(first.Attempts) != 2 ||
		first.Attempts[0].Raw != bad || first.Attempts[1].Raw != good || len(first.Calls) != 1 || first.Calls[0].Name != "get_weather" || first.Finish != "tool_calls" {
		t.Errorf("first line %+v: want the openai request, both raw attempts, the get_weather call", first)
	}
	if second.API != apiAnthropic || len(second.Attempts) != 1 || second.Attempts[0].Raw != "It is sunny." || len(second.Calls) != 0 || second.Finish != "stop" {
		t.Errorf("second line %+v: want the anthropic answer", second)
	}
}

// TestMemoryPerTurn: a remembered turn keeps its own bytes, not the
// parser's 16 KB arena block its call was read into (which made 17 KB a
// turn, 70 MB at the default 4,096 turns).
func TestMemoryPerTurn(t *testing.T) {
	const turns = 200
	sb := &scriptBackend{next: func(backend.Request) string {
		return "Checking the weather.\n" + call("get_weather", `{"city": "Paris"}`)
	}}
	eng, err := NewEngine(EngineConfig{Models: []*Model{testModel(t, sb)}})
	if err != nil {
		t.Fatal(err)
	}
	var tool chat.Tool
	if err := json.Unmarshal([]byte(okTool), &tool); err != nil {
		t.Fatal(err)
	}
	req := Request{API: apiOpenAI, Model: "m", Tools: []chat.Tool{tool}, Messages: []chat.Message{{Role: chat.RoleUser, Content: "Weather in Paris?"}}}
	before := liveHeap()
	for range turns {
		if _, err := eng.Turn(context.Background(), req, nil); err != nil {
			t.Fatal(err)
		}
	}
	per := (int(liveHeap()) - int(before)) / turns
	runtime.KeepAlive(eng)
	if per > 4096 {
		t.Errorf("%d bytes kept per remembered turn, want at most 4096", per)
	}
	t.Logf("%d bytes per remembered turn", per)
}

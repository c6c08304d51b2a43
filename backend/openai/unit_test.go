package openai

import (
	"encoding/json"
	"errors"
	"flag"
	"io"
	"path/filepath"
	"strings"
	"testing"

	goldenfile "github.com/toolharness/toolharness/internal/golden"

	"github.com/google/go-cmp/cmp"

	"github.com/toolharness/toolharness/backend"
	"github.com/toolharness/toolharness/backend/internal/chatwire"
	"github.com/toolharness/toolharness/chat"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	goldenfile.Check(t, *update, filepath.Join("testdata", name), string(got))
}

func TestRequestBodies(t *testing.T) {
	b, err := New(Config{BaseURL: "http://127.0.0.1:8000/v1"})
	if err != nil {
		t.Fatal(err)
	}
	temp, seed, topK := 0.2, 7, 40
	opts := backend.Options{Temperature: &temp, Seed: &seed, TopK: &topK, MaxTokens: 128}
	schema := json.RawMessage(`{"type":"object","properties":{"name":{"const":"f"}}}`)
	for _, tc := range []struct {
		name  string
		req   backend.Request
		path  string
		notes []string
	}{
		{"completions.json", backend.Request{Model: "m", Mode: backend.ModeRaw, Prompt: "<|im_start|>user\nx < y & z<|im_end|>\n",
			Stop: []string{"<|im_end|>"}, Options: opts}, "/completions", nil},
		{"chat.json", backend.Request{Model: "m", Mode: backend.ModeChat, Format: schema, Options: backend.Options{MaxTokens: 5},
			Messages: []chat.Message{
				{Role: chat.RoleDeveloper, Content: "Use tools."},
				{Role: chat.RoleUser, Content: "Weather?"},
				{Role: chat.RoleAssistant, Raw: `<tool_call>{"name":"f"}</tool_call>`, ToolCalls: []chat.ToolCall{{Name: "f"}}},
				{Role: chat.RoleTool, ToolCallID: "c1", Name: "f", Content: "18°C"},
			}}, "/chat/completions", []string{"sent 1 developer message(s) with role system: local servers' chat templates know system only"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path, body, notes, err := b.body(tc.req)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.notes, notes); diff != "" {
				t.Errorf("notes (-want +got):\n%s", diff)
			}
			if path != tc.path {
				t.Errorf("path %q, want %q", path, tc.path)
			}
			golden(t, tc.name, body)
		})
	}
}

func TestRequestRefusals(t *testing.T) {
	ollama, err := New(Config{BaseURL: "http://127.0.0.1:11434/v1", Quirks: OllamaQuirks()})
	if err != nil {
		t.Fatal(err)
	}
	schema := json.RawMessage(`{"type":"object"}`)
	for _, tc := range []struct {
		name string
		req  backend.Request
	}{
		{"no model", backend.Request{Mode: backend.ModeRaw, Prompt: "x"}},
		{"no prompt", backend.Request{Model: "m", Mode: backend.ModeRaw}},
		{"no messages", backend.Request{Model: "m", Mode: backend.ModeChat}},
		{"unknown mode", backend.Request{Model: "m", Mode: "fim", Prompt: "x"}},
		{"schema on a templated endpoint", backend.Request{Model: "m", Mode: backend.ModeRaw, Prompt: "x", Format: schema}},
		{"calls without raw text", backend.Request{Model: "m", Mode: backend.ModeChat,
			Messages: []chat.Message{{Role: chat.RoleAssistant, ToolCalls: []chat.ToolCall{{Name: "f"}}}}}},
		{"grammar", backend.Request{Model: "m", Mode: backend.ModeChat, Grammar: `root ::= "x"`,
			Messages: []chat.Message{{Role: chat.RoleUser, Content: "x"}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, _, _, err := ollama.body(tc.req); !errors.Is(err, backend.ErrUnsupported) {
				t.Errorf("err = %v, want unsupported", err)
			}
		})
	}
}

func TestReadEvents(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   string
		want []string
	}{
		{"ollama", "data: {\"a\":1}\n\ndata: [DONE]\n\n", []string{`{"a":1}`, "[DONE]"}},
		{"crlf and comments", ": keep-alive\r\n\r\nevent: message\r\ndata: x\r\n\r\n", []string{"x"}},
		{"multi-line data", "data: a\ndata: b\n\n", []string{"a\nb"}},
		{"no space, no final blank line", "data:x\n\ndata:y", []string{"x", "y"}},
		{"long line", "data: " + strings.Repeat("z", 200000) + "\n\n", []string{strings.Repeat("z", 200000)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			err := chatwire.ReadEvents(strings.NewReader(tc.in), func(d []byte) error { got = append(got, string(d)); return nil })
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
		})
	}
	stop := errors.New("stop")
	n := 0
	err := chatwire.ReadEvents(strings.NewReader("data: 1\n\ndata: 2\n\n"), func([]byte) error { n++; return stop })
	if err != stop || n != 1 {
		t.Errorf("err %v after %d events, want the callback's error after 1", err, n)
	}
	if err := chatwire.ReadEvents(iotestErr{}, func([]byte) error { return nil }); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("read error: %v", err)
	}
}

type iotestErr struct{}

func (iotestErr) Read([]byte) (int, error) { return 0, io.ErrUnexpectedEOF }

func TestServerMessage(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"error":{"message":"model \"x\" not found","type":"api_error"}}`, `model "x" not found`}, // OpenAI, Ollama /v1
		{`{"error":"boom"}`, "boom"},
		{`{"object":"error","message":"max_tokens too large","type":"BadRequestError","code":400}`, "max_tokens too large"}, // vLLM
		{`{"detail":"Not Found"}`, "Not Found"}, // FastAPI
		{"Bad Gateway\n", "Bad Gateway"},
	} {
		if got := serverMessage([]byte(tc.in)); got != tc.want {
			t.Errorf("serverMessage(%s) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestNewAndCapabilities(t *testing.T) {
	for _, u := range []string{"", "127.0.0.1:8000", "ftp://x/v1"} {
		if _, err := New(Config{BaseURL: u}); err == nil {
			t.Errorf("New(%q) succeeded", u)
		}
	}
	b, err := New(Config{BaseURL: "http://x/v1"})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(backend.Capabilities{Raw: true, Chat: true, Constrain: true, ServerTools: true}, b.Capabilities()); diff != "" {
		t.Error(diff)
	}
}

// TestUsage decodes usage objects in the shape of the OpenAI API reference
// (prompt_tokens_details.cached_tokens, also sent by vLLM with prefix
// caching) and Ollama's (no details).
func TestUsage(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want backend.Usage
	}{
		{`{"choices":[],"usage":{"prompt_tokens":2006,"completion_tokens":300,"total_tokens":2306,"prompt_tokens_details":{"cached_tokens":1920}}}`,
			backend.Usage{PromptTokens: 2006, GeneratedTokens: 300, CachedTokens: 1920, CachedKnown: true}},
		{`{"choices":[],"usage":{"prompt_tokens":36,"completion_tokens":6,"total_tokens":42}}`,
			backend.Usage{PromptTokens: 36, GeneratedTokens: 6}},
		{`{"choices":[],"usage":{"prompt_tokens":36,"completion_tokens":6,"prompt_tokens_details":{"cached_tokens":0}}}`,
			backend.Usage{PromptTokens: 36, GeneratedTokens: 6, CachedKnown: true}},
		{`{"choices":[{"text":"x"}]}`, backend.Usage{}},
		// llama-server: the finish event carries timings before the usage
		// event; builds before cached_tokens send only timings.cache_n.
		{`{"choices":[{"finish_reason":"stop","index":0,"delta":{}}],"timings":{"cache_n":295,"prompt_n":15,"predicted_n":21}}`,
			backend.Usage{PromptTokens: 310, CachedTokens: 295, CachedKnown: true}},
		{`{"choices":[],"usage":{"completion_tokens":21,"prompt_tokens":310,"total_tokens":331},"timings":{"cache_n":295,"prompt_n":15}}`,
			backend.Usage{PromptTokens: 310, GeneratedTokens: 21, CachedTokens: 295, CachedKnown: true}},
		{`{"choices":[],"usage":{"completion_tokens":21,"prompt_tokens":310,"total_tokens":331,"prompt_tokens_details":{"cached_tokens":295}},"timings":{"cache_n":295,"prompt_n":15}}`,
			backend.Usage{PromptTokens: 310, GeneratedTokens: 21, CachedTokens: 295, CachedKnown: true}},
	} {
		var c chunk
		if err := json.Unmarshal([]byte(tc.in), &c); err != nil {
			t.Fatal(err)
		}
		var got backend.Usage
		c.applyUsage(&got)
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.in, diff)
		}
	}
}

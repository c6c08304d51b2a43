package llamacpp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/toolharness/toolharness/backend"
	"github.com/toolharness/toolharness/chat"
)

const llama3Prompt = "<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nWhat is the weather in Paris?<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n"

func ptr[T any](v T) *T { return &v }

// outcome is what a Generate call produced, in the form the goldens keep.
// Client-measured times are left out (they vary); the test checks them.
type outcome struct {
	Chunks       []string
	Text         string
	StopReason   string
	StopSequence string `json:",omitempty"`
	Usage        backend.Usage
	Notes        []string `json:",omitempty"`
}

func newClient(t *testing.T, fs *fixtureServer, cfg Config) *Client {
	t.Helper()
	cfg.BaseURL = fs.srv.URL
	if cfg.Backoff == 0 {
		cfg.Backoff = time.Millisecond
	}
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func run(t *testing.T, c *Client, req backend.Request) (outcome, error) {
	t.Helper()
	var chunks []string
	resp, err := c.Generate(context.Background(), req, func(s string) error {
		chunks = append(chunks, s)
		return nil
	})
	if got := strings.Join(chunks, ""); got != resp.Text {
		t.Errorf("Text %q is not the concatenation of the chunks %q", resp.Text, got)
	}
	if len(chunks) > 0 && (resp.Usage.TimeToFirstChunk <= 0 || resp.Usage.Total < resp.Usage.TimeToFirstChunk) {
		t.Errorf("client times: first chunk %v, total %v", resp.Usage.TimeToFirstChunk, resp.Usage.Total)
	}
	resp.Usage.TimeToFirstChunk, resp.Usage.Total = 0, 0
	return outcome{Chunks: chunks, Text: resp.Text, StopReason: resp.StopReason, StopSequence: resp.StopSequence, Usage: resp.Usage, Notes: resp.Notes}, err
}

func TestGolden(t *testing.T) {
	format := json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`)
	tests := []struct {
		name   string
		routes map[string][]reply
		cfg    Config
		req    backend.Request
	}{
		{
			name:   "stream",
			routes: llama3(reply{file: "completion_stream.sse"}),
			req: backend.Request{Mode: backend.ModeRaw, Prompt: llama3Prompt, Stop: []string{"<|eot_id|>"},
				Options: backend.Options{Temperature: ptr(0.0), TopK: ptr(40), TopP: ptr(0.95), Seed: ptr(42), MaxTokens: 64}},
		},
		{
			name:   "stream_stop_word",
			routes: llama3(reply{file: "completion_stream_word.sse"}),
			req:    backend.Request{Mode: backend.ModeRaw, Prompt: llama3Prompt, Stop: []string{"</tool_call>", "<|eot_id|>"}},
		},
		{
			name:   "whole",
			routes: llama3(reply{file: "completion.json"}),
			cfg:    Config{NonStreaming: true},
			req:    backend.Request{Mode: backend.ModeRaw, Prompt: llama3Prompt, Options: backend.Options{MaxTokens: 8}},
		},
		{
			name:   "legacy_fields",
			routes: llama3(reply{file: "completion_legacy.json"}),
			cfg:    Config{NonStreaming: true},
			req:    backend.Request{Mode: backend.ModeRaw, Prompt: llama3Prompt, Stop: []string{"</tool_call>"}},
		},
		{
			name:   "json_schema",
			routes: llama3(reply{file: "completion_stream.sse"}),
			req:    backend.Request{Mode: backend.ModeRaw, Prompt: llama3Prompt, Format: format},
		},
		{
			name:   "grammar",
			routes: llama3(reply{file: "completion_stream.sse"}),
			req:    backend.Request{Mode: backend.ModeRaw, Prompt: llama3Prompt, Grammar: `root ::= "<tool_call>" [^<]* "</tool_call>"`},
		},
		{
			name: "no_server_bos",
			routes: map[string][]reply{
				"/tokenize#bos": {{file: "tokenize_empty.json"}},
				"/tokenize":     {{file: "tokenize.json"}},
				"/props":        {{file: "props.json"}},
				"/completion":   {{file: "completion_stream.sse"}},
			},
			req: backend.Request{Mode: backend.ModeRaw, Prompt: llama3Prompt},
		},
		{
			name:   "keep_bos",
			routes: llama3(reply{file: "completion_stream.sse"}),
			cfg:    Config{KeepBOS: true, NoContextCheck: true},
			req:    backend.Request{Mode: backend.ModeRaw, Prompt: llama3Prompt},
		},
		{
			name: "chat",
			routes: func() map[string][]reply {
				r := llama3(reply{file: "completion_stream.sse"})
				b, _ := json.Marshal(map[string]string{"prompt": llama3Prompt})
				r["/apply-template"] = []reply{{body: string(b)}}
				return r
			}(),
			req: backend.Request{Mode: backend.ModeChat, Messages: []chat.Message{
				{Role: chat.RoleSystem, Content: "Tools: get_weather(city)."},
				{Role: chat.RoleUser, Content: "Weather in Rome?"},
				{Role: chat.RoleAssistant, Raw: "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Rome\"}}\n</tool_call>",
					ToolCalls: []chat.ToolCall{{ID: "c1", Name: "get_weather", Arguments: json.RawMessage(`{"city":"Rome"}`)}}},
				{Role: chat.RoleTool, ToolCallID: "c1", Name: "get_weather", Content: "18°C & sunny"},
				{Role: chat.RoleUser, Content: "And in Paris?"},
			}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := newFixtureServer(t, tt.routes)
			c := newClient(t, fs, tt.cfg)
			got, err := run(t, c, tt.req)
			if err != nil {
				t.Fatalf("Generate: %v", err)
			}
			var out bytes.Buffer
			enc := json.NewEncoder(&out)
			enc.SetEscapeHTML(false)
			enc.SetIndent("", "  ")
			if err := enc.Encode(got); err != nil {
				t.Fatal(err)
			}
			golden(t, tt.name+".response.json", out.Bytes())
			var sent strings.Builder
			for _, r := range fs.requests("") {
				sent.WriteString(r.Method + " " + r.Path + "\n" + r.Body + "\n\n")
			}
			golden(t, tt.name+".requests.txt", []byte(sent.String()))
		})
	}
}

// TestStreamFigures checks the figures of the streamed fixture by hand, so
// a wrong golden cannot hide them.
func TestStreamFigures(t *testing.T) {
	fs := newFixtureServer(t, llama3(reply{file: "completion_stream.sse"}))
	c := newClient(t, fs, Config{})
	got, err := run(t, c, backend.Request{Mode: backend.ModeRaw, Prompt: llama3Prompt})
	if err != nil {
		t.Fatal(err)
	}
	want := outcome{
		Text:       "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>",
		StopReason: "stop",
		Usage: backend.Usage{PromptTokens: 236, GeneratedTokens: 22, CachedTokens: 235, CachedKnown: true, SlotTokens: 257,
			PromptDuration: 30958 * time.Microsecond, GenerateDuration: 415264 * time.Microsecond},
		Notes: []string{`stripped the rendered BOS "<|begin_of_text|>" from the prompt: the server adds its own`},
	}
	if len(got.Chunks) != 21 {
		t.Errorf("%d chunks, want 21", len(got.Chunks))
	}
	got.Chunks = nil
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	var body completionRequest
	reqs := fs.requests("/completion")
	if len(reqs) != 1 {
		t.Fatalf("%d /completion requests, want 1", len(reqs))
	}
	if err := json.Unmarshal([]byte(reqs[0].Body), &body); err != nil {
		t.Fatal(err)
	}
	prompt, _ := body.Prompt.(string)
	if !body.CachePrompt || !body.Stream || strings.HasPrefix(prompt, "<|begin_of_text|>") || !strings.HasPrefix(prompt, "<|start_header_id|>") {
		t.Errorf("sent cache_prompt=%v stream=%v prompt=%.40q; want cache_prompt, stream and the BOS text stripped", body.CachePrompt, body.Stream, body.Prompt)
	}
	if caps := c.Capabilities(); !caps.AddsBOS || !caps.Raw || !caps.Chat || !caps.Constrain {
		t.Errorf("capabilities %+v", caps)
	}
}

func TestNoServerBOS(t *testing.T) {
	fs := newFixtureServer(t, map[string][]reply{
		"/tokenize#bos": {{file: "tokenize_empty.json"}},
		"/tokenize":     {{file: "tokenize.json"}},
		"/props":        {{file: "props.json"}},
		"/completion":   {{file: "completion_stream.sse"}},
	})
	c := newClient(t, fs, Config{})
	if _, err := run(t, c, backend.Request{Mode: backend.ModeRaw, Prompt: llama3Prompt}); err != nil {
		t.Fatal(err)
	}
	if c.Capabilities().AddsBOS {
		t.Error("AddsBOS after a probe that found no BOS")
	}
	var body completionRequest
	json.Unmarshal([]byte(fs.requests("/completion")[0].Body), &body)
	if p, _ := body.Prompt.(string); p != llama3Prompt {
		t.Errorf("prompt changed although the server adds no BOS: %.40q", body.Prompt)
	}
}

func TestCountTokensAndContextSize(t *testing.T) {
	fs := newFixtureServer(t, map[string][]reply{
		"/tokenize": {{file: "tokenize.json"}},
		"/props":    {{file: "props.json"}},
	})
	c := newClient(t, fs, Config{})
	ctx := context.Background()
	n, err := c.CountTokens(ctx, "", "Hello world!")
	if err != nil || n != 3 {
		t.Errorf("CountTokens = %d, %v; want 3", n, err)
	}
	if got := fs.requests("/tokenize")[0].Body; got != `{"content":"Hello world!","add_special":false}` {
		t.Errorf("tokenize body %s", got)
	}
	for range 2 {
		n, err = c.ContextSize(ctx, "")
		if err != nil || n != 1024 {
			t.Errorf("ContextSize = %d, %v; want 1024", n, err)
		}
	}
	if got := len(fs.requests("/props")); got != 1 {
		t.Errorf("%d /props requests for two ContextSize calls, want 1 (cached)", got)
	}
}

func TestTokenPieces(t *testing.T) {
	for _, tt := range []struct {
		file string
		want []token
	}{
		{"tokenize.json", []token{{ID: 123}, {ID: 456}, {ID: 789}}},
		{"tokenize_pieces.json", []token{{123, "Hello"}, {456, " world"}, {789, "!"}}},
		{"tokenize_bytes.json", []token{{198, "\xc3"}, {164, "\xa1"}}},
		{"tokenize_bos.json", []token{{128000, "<|begin_of_text|>"}}},
	} {
		var got tokenizeResponse
		if err := json.Unmarshal(readFixture(t, tt.file), &got); err != nil {
			t.Fatalf("%s: %v", tt.file, err)
		}
		if diff := cmp.Diff(tt.want, got.Tokens); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.file, diff)
		}
	}
}

func TestContextOverflow(t *testing.T) {
	// props.json says n_ctx 1024 and tokenize.json counts 3 tokens.
	for _, tt := range []struct {
		max      int
		overflow bool
	}{{1021, false}, {1022, true}, {0, false}} {
		fs := newFixtureServer(t, llama3(reply{file: "completion_stream.sse"}))
		c := newClient(t, fs, Config{})
		_, err := run(t, c, backend.Request{Mode: backend.ModeRaw, Prompt: llama3Prompt, Options: backend.Options{MaxTokens: tt.max}})
		sent := len(fs.requests("/completion"))
		if tt.overflow {
			if !errors.Is(err, backend.ErrContextOverflow) || sent != 0 {
				t.Errorf("max %d: err %v, %d requests sent; want a context overflow and nothing sent", tt.max, err, sent)
			}
			if err != nil && !strings.Contains(err.Error(), "prompt of 3 tokens plus 1022 to generate exceeds the context window of 1024 tokens") {
				t.Errorf("message: %v", err)
			}
		} else if err != nil || sent != 1 {
			t.Errorf("max %d: err %v, %d requests sent", tt.max, err, sent)
		}
	}
}

func TestHealth(t *testing.T) {
	fs := newFixtureServer(t, map[string][]reply{"/health": {{status: 503, file: "error_loading.json"}, {file: "health_ok.json"}}})
	c := newClient(t, fs, Config{Retries: -1})
	err := c.Health(context.Background())
	var be *backend.Error
	if !errors.As(err, &be) || be.Kind != backend.KindServer || be.Status != 503 || be.Message != "Loading model" || !backend.Retryable(err) {
		t.Errorf("loading: %v", err)
	}
	if err := c.Health(context.Background()); err != nil {
		t.Errorf("ready: %v", err)
	}
}

func TestNew(t *testing.T) {
	for _, u := range []string{"", "  ", "localhost:8080", "ftp://x"} {
		if _, err := New(Config{BaseURL: u}); err == nil || !strings.HasPrefix(err.Error(), "llamacpp: ") {
			t.Errorf("New(%q) = %v; want a llamacpp: error", u, err)
		}
	}
	c, err := New(Config{BaseURL: "http://127.0.0.1:8080/"})
	if err != nil || c.cfg.BaseURL != "http://127.0.0.1:8080" || c.cfg.Retries != DefaultRetries {
		t.Errorf("New: %v %+v", err, c.cfg)
	}
}

package langchain

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/tmc/langchaingo/llms"

	"github.com/toolharness/toolharness/backend"
	"github.com/toolharness/toolharness/chat"
)

// scripted is a small llms.Model for the unit tests: it records what it
// was asked and answers with its script, streaming when asked to. The
// end-to-end tests use langchaingo's real Ollama provider.
type scripted struct {
	chunks  []string
	stream  bool    // honour WithStreamingFunc
	content *string // Content of the choice (the chunks joined when nil)
	stop    string
	info    map[string]any
	err     error // returned after the chunks
	// wrapCallback returns the streaming func's error wrapped, as
	// providers do.
	wrapCallback bool

	gotMsgs []llms.MessageContent
	gotOpts llms.CallOptions
}

func (s *scripted) Call(ctx context.Context, prompt string, options ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, s, prompt, options...)
}

func (s *scripted) GenerateContent(ctx context.Context, msgs []llms.MessageContent, options ...llms.CallOption) (*llms.ContentResponse, error) {
	s.gotMsgs = msgs
	for _, o := range options {
		o(&s.gotOpts)
	}
	if s.stream && s.gotOpts.StreamingFunc != nil {
		for _, c := range s.chunks {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			if err := s.gotOpts.StreamingFunc(ctx, []byte(c)); err != nil {
				if s.wrapCallback {
					return nil, errors.Join(errors.New("provider: streaming"), err)
				}
				return nil, err
			}
		}
	}
	if s.err != nil {
		return nil, s.err
	}
	content := strings.Join(s.chunks, "")
	if s.content != nil {
		content = *s.content
	}
	return &llms.ContentResponse{Choices: []*llms.ContentChoice{{Content: content, StopReason: s.stop, GenerationInfo: s.info}}}, nil
}

func ptr[T any](v T) *T { return &v }

func TestMessagesAndOptions(t *testing.T) {
	m := &scripted{chunks: []string{"ok"}, stream: true}
	b, err := New(m, Config{})
	if err != nil {
		t.Fatal(err)
	}
	req := backend.Request{Model: "qwen3:8b", Mode: backend.ModeChat, Stop: []string{"</tool_call>"},
		Options: backend.Options{Temperature: ptr(0.2), TopP: ptr(0.9), TopK: ptr(20), Seed: ptr(7), MaxTokens: 64, NumCtx: 8192},
		Messages: []chat.Message{
			{Role: chat.RoleSystem, Content: "sys"},
			{Role: chat.RoleDeveloper, Content: "dev"},
			{Role: chat.RoleUser, Content: "hi <b> & c"},
			{Role: chat.RoleAssistant, Content: "parsed", Raw: "<tool_call>{\"name\":\"f\"}</tool_call>",
				ToolCalls: []chat.ToolCall{{ID: "1", Name: "f", Arguments: json.RawMessage(`{}`)}}},
			{Role: chat.RoleAssistant, Content: "plain"},
			{Role: chat.RoleTool, ToolCallID: "1", Name: "f", Content: "result"},
		}}
	if _, err := b.Generate(context.Background(), req, nil); err != nil {
		t.Fatal(err)
	}
	want := []llms.MessageContent{
		llms.TextParts(llms.ChatMessageTypeSystem, "sys"),
		llms.TextParts(llms.ChatMessageTypeSystem, "dev"),
		llms.TextParts(llms.ChatMessageTypeHuman, "hi <b> & c"),
		llms.TextParts(llms.ChatMessageTypeAI, "<tool_call>{\"name\":\"f\"}</tool_call>"),
		llms.TextParts(llms.ChatMessageTypeAI, "plain"),
		llms.TextParts(llms.ChatMessageTypeTool, "result"),
	}
	if diff := cmp.Diff(want, m.gotMsgs); diff != "" {
		t.Errorf("messages (-want +got):\n%s", diff)
	}
	o := m.gotOpts
	if o.Model != "qwen3:8b" || o.Temperature != 0.2 || o.TopP != 0.9 || o.TopK != 20 || o.Seed != 7 || o.MaxTokens != 64 ||
		!cmp.Equal(o.StopWords, []string{"</tool_call>"}) || o.StreamingFunc == nil {
		t.Errorf("options %+v", o)
	}

	// Raw mode: one human message; tool results as human on request;
	// unset options stay unset.
	m2 := &scripted{chunks: []string{"x"}, stream: true}
	b2, _ := New(m2, Config{ToolResultsAsHuman: true})
	if _, err := b2.Generate(context.Background(), backend.Request{Mode: backend.ModeRaw, Prompt: "<|im_start|>user\nhi"}, nil); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "<|im_start|>user\nhi")}, m2.gotMsgs); diff != "" {
		t.Errorf("raw (-want +got):\n%s", diff)
	}
	if o := m2.gotOpts; o.Temperature != 0 || o.StopWords != nil || o.MaxTokens != 0 || o.Model != "" {
		t.Errorf("unset options were set: %+v", o)
	}
	b2.Generate(context.Background(), backend.Request{Mode: backend.ModeChat, Messages: []chat.Message{{Role: chat.RoleTool, Content: "r"}}}, nil)
	if m2.gotMsgs[0].Role != llms.ChatMessageTypeHuman {
		t.Errorf("tool result role %s with ToolResultsAsHuman", m2.gotMsgs[0].Role)
	}
}

func TestStreamingAndUsage(t *testing.T) {
	tests := []struct {
		name   string
		model  *scripted
		chunks []string
		text   string
		stop   string
		usage  backend.Usage
	}{
		{
			name:   "streamed",
			model:  &scripted{chunks: []string{"<tool", "_call>", "{}"}, stream: true, stop: "stop", info: map[string]any{"PromptTokens": 12, "CompletionTokens": 3}},
			chunks: []string{"<tool", "_call>", "{}"}, text: "<tool_call>{}", stop: "stop",
			usage: backend.Usage{PromptTokens: 12, GeneratedTokens: 3},
		},
		{
			name:   "not streamed",
			model:  &scripted{chunks: []string{"whole ", "answer"}, stop: "max_tokens", info: map[string]any{"input_tokens": int64(5), "output_tokens": float64(2), "CachedTokens": 4}},
			chunks: []string{"whole answer"}, text: "whole answer", stop: "length",
			usage: backend.Usage{PromptTokens: 5, GeneratedTokens: 2, CachedTokens: 4, CachedKnown: true},
		},
		{
			name:   "content longer than the stream",
			model:  &scripted{chunks: []string{"ab"}, stream: true, content: ptr("abc")},
			chunks: []string{"ab", "c"}, text: "abc",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, _ := New(tt.model, Config{})
			var chunks []string
			resp, err := b.Generate(context.Background(), backend.Request{Mode: backend.ModeRaw, Prompt: "p"}, func(s string) error {
				chunks = append(chunks, s)
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.chunks, chunks); diff != "" {
				t.Errorf("chunks (-want +got):\n%s", diff)
			}
			if resp.Text != tt.text || resp.Text != strings.Join(chunks, "") || resp.StopReason != tt.stop {
				t.Errorf("text %q stop %q; want %q %q", resp.Text, resp.StopReason, tt.text, tt.stop)
			}
			if resp.Usage.TimeToFirstChunk <= 0 || resp.Usage.Total < resp.Usage.TimeToFirstChunk {
				t.Errorf("client times %v %v", resp.Usage.TimeToFirstChunk, resp.Usage.Total)
			}
			resp.Usage.TimeToFirstChunk, resp.Usage.Total = 0, 0
			if diff := cmp.Diff(tt.usage, resp.Usage); diff != "" {
				t.Errorf("usage (-want +got):\n%s", diff)
			}
		})
	}
}

func TestErrors(t *testing.T) {
	stop := errors.New("caller: stop")
	tests := []struct {
		name     string
		model    *scripted
		req      backend.Request
		onChunk  func(string) error
		kind     backend.Kind
		status   int
		consumed bool
		same     error // the exact error expected instead of a kind
		text     string
	}{
		{name: "callback error", model: &scripted{chunks: []string{"a", "b"}, stream: true}, onChunk: func(string) error { return stop }, same: stop, text: "a"},
		{name: "callback error wrapped by the provider", model: &scripted{chunks: []string{"a", "b"}, stream: true, wrapCallback: true}, onChunk: func(string) error { return stop }, same: stop, text: "a"},
		{name: "rate limit", model: &scripted{err: llms.NewError(llms.ErrCodeRateLimit, "fake", "slow down")}, kind: backend.KindServer, status: 429},
		{name: "token limit", model: &scripted{err: llms.NewError(llms.ErrCodeTokenLimit, "p", "too long")}, kind: backend.KindContextOverflow},
		{name: "unavailable", model: &scripted{err: llms.NewError(llms.ErrCodeProviderUnavailable, "p", "down")}, kind: backend.KindUnreachable},
		{name: "cut after chunks", model: &scripted{chunks: []string{"a"}, stream: true, err: io.ErrUnexpectedEOF}, kind: backend.KindStreamCut, consumed: true, text: "a"},
		{name: "empty final answer after a stream", model: &scripted{chunks: []string{"a", "b"}, stream: true, content: ptr("")}, kind: backend.KindStreamCut, consumed: true, text: "ab"},
		{name: "other provider error", model: &scripted{err: errors.New("model \"x\" not found, try pulling it first")}, kind: backend.KindServer},
		{name: "format", model: &scripted{}, req: backend.Request{Mode: backend.ModeRaw, Format: json.RawMessage(`{"type":"object"}`)}, kind: backend.KindUnsupported},
		{name: "mode", model: &scripted{}, req: backend.Request{Mode: "text"}, kind: backend.KindUnsupported},
		{name: "role", model: &scripted{}, req: backend.Request{Mode: backend.ModeChat, Messages: []chat.Message{{Role: "wizard"}}}, kind: backend.KindUnsupported},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, _ := New(tt.model, Config{Name: "lc-test"})
			req := tt.req
			if req.Mode == "" {
				req = backend.Request{Mode: backend.ModeRaw, Prompt: "p"}
			}
			resp, err := b.Generate(context.Background(), req, tt.onChunk)
			if resp.Text != tt.text {
				t.Errorf("text %q, want %q", resp.Text, tt.text)
			}
			if tt.same != nil {
				if err != tt.same {
					t.Errorf("err %v; want the callback's own error", err)
				}
				return
			}
			var be *backend.Error
			if !errors.As(err, &be) {
				t.Fatalf("err %v is not a *backend.Error", err)
			}
			if be.Kind != tt.kind || be.Status != tt.status || be.Consumed != tt.consumed || be.Backend != "lc-test" {
				t.Errorf("got %s status %d consumed %v backend %s; want %s %d %v", be.Kind, be.Status, be.Consumed, be.Backend, tt.kind, tt.status, tt.consumed)
			}
		})
	}
}

func TestCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	m := &scripted{chunks: []string{"a", "b", "c"}, stream: true}
	b, _ := New(m, Config{})
	resp, err := b.Generate(ctx, backend.Request{Mode: backend.ModeRaw, Prompt: "p"}, func(s string) error {
		if s == "a" {
			cancel()
		}
		return nil
	})
	if !errors.Is(err, backend.ErrCanceled) || !errors.Is(err, context.Canceled) || resp.Text != "a" {
		t.Errorf("err %v text %q", err, resp.Text)
	}
	var be *backend.Error
	if errors.As(err, &be) && !be.Consumed {
		t.Error("consumed is false after a delivered chunk")
	}
	if c := b.Capabilities(); c.Raw || !c.Chat || c.Constrain {
		t.Errorf("default capabilities %+v; want chat only", c)
	}
	if b2, _ := New(m, Config{RawCompletion: true}); !b2.Capabilities().Raw {
		t.Error("RawCompletion does not report Raw")
	}
	if _, err := New(nil, Config{}); err == nil || !strings.HasPrefix(err.Error(), "langchain: ") {
		t.Errorf("New(nil): %v", err)
	}
}

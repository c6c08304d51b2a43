package ollama

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/ollama/ollama/api"

	"github.com/toolharness/toolharness/backend"
	"github.com/toolharness/toolharness/backend/internal/transport"
	"github.com/toolharness/toolharness/chat"
	"github.com/toolharness/toolharness/internal/ollamatest"
)

func TestBudget(t *testing.T) {
	b, err := New(Config{Host: "127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name       string
		size       int
		opts       backend.Options
		window     int
		want       int
		overflowed bool
	}{
		{"small prompt gets the window", 100, backend.Options{}, 8192, 8192, false},
		{"large prompt gets the same", 14000, backend.Options{}, 8192, 8192, false},
		{"window capped", 100, backend.Options{MaxTokens: 10}, 131072, DefaultMaxNumCtx, false},
		{"beyond the cap by estimate", 50000, backend.Options{MaxTokens: 100}, 131072, 0, true},
		{"small window", 10, backend.Options{MaxTokens: 10}, 2048, 2048, false},
		{"unknown window", 10000, backend.Options{}, 0, DefaultMaxNumCtx, false},
		{"caller's num_ctx kept when the estimate fits", 3000, backend.Options{NumCtx: 2048, MaxTokens: 8}, 8192, 2048, false},
		{"caller's num_ctx refused", 5000, backend.Options{NumCtx: 2048, MaxTokens: 8}, 8192, 0, true},
		{"beyond the window even by estimate", 100000, backend.Options{}, 32768, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := b.budget(tc.size, tc.opts, tc.window)
			if tc.overflowed != errors.Is(err, backend.ErrContextOverflow) || got != tc.want {
				t.Fatalf("budget = %d, %v; want %d (overflow %v)", got, err, tc.want, tc.overflowed)
			}
		})
	}
}

func TestClassify(t *testing.T) {
	live := context.Background()
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	stalled, stall := context.WithCancelCause(context.Background())
	stall(&transport.StallError{Backend: name})
	dial := &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
	for _, tc := range []struct {
		name         string
		err          error
		parent, sctx context.Context
		want         backend.Kind
		status       int
		message      string
	}{
		{"status error", api.StatusError{StatusCode: 404, Status: "404 Not Found", ErrorMessage: "model \"x\" not found"}, live, live, backend.KindServer, 404, "model \"x\" not found"},
		{"refused", fmt.Errorf("post: %w", dial), live, live, backend.KindUnreachable, 0, ""},
		{"cut", io.ErrUnexpectedEOF, live, live, backend.KindStreamCut, 0, ""},
		{"reset", &net.OpError{Op: "read", Err: syscall.ECONNRESET}, live, live, backend.KindStreamCut, 0, ""},
		{"error line", errors.New("invalid JSON schema in format"), live, live, backend.KindServer, 0, "invalid JSON schema in format"},
		{"canceled", context.Canceled, canceled, canceled, backend.KindCanceled, 0, ""},
		{"stalled", context.Canceled, live, stalled, backend.KindStalled, 0, ""},
		{"bad json", &json.SyntaxError{Offset: 3}, live, live, backend.KindBadResponse, 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var e *backend.Error
			if !errors.As(classify(tc.err, true, tc.parent, tc.sctx), &e) {
				t.Fatal("not a *backend.Error")
			}
			if e.Kind != tc.want || e.Status != tc.status || e.Message != tc.message || !e.Consumed || e.Backend != "ollama" {
				t.Errorf("got %+v", e)
			}
		})
	}
}

func TestMessages(t *testing.T) {
	in := []chat.Message{
		{Role: chat.RoleDeveloper, Content: "rules"},
		{Role: chat.RoleUser, Content: "hi"},
		{Role: chat.RoleAssistant, Content: "parsed", Raw: "<tool_call>{\"name\":\"f\"}</tool_call>",
			ToolCalls: []chat.ToolCall{{Name: "f"}}},
		{Role: chat.RoleTool, Name: "f", ToolCallID: "1", Content: "42"},
	}
	got, _, err := messages(in)
	if err != nil {
		t.Fatal(err)
	}
	want := []api.Message{
		{Role: "system", Content: "rules"},
		{Role: "user", Content: "hi"},
		{Role: "assistant", Content: "<tool_call>{\"name\":\"f\"}</tool_call>"},
		{Role: "tool", Content: "42", ToolName: "f"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("messages (-want +got):\n%s", diff)
	}
	_, _, err = messages([]chat.Message{{Role: chat.RoleAssistant, ToolCalls: []chat.ToolCall{{Name: "f"}}}})
	if !errors.Is(err, backend.ErrUnsupported) {
		t.Errorf("calls without raw text: err = %v", err)
	}
	if _, _, err := messages(nil); !errors.Is(err, backend.ErrUnsupported) {
		t.Errorf("no messages: err = %v", err)
	}
}

func TestModelInfo(t *testing.T) {
	mi := map[string]any{
		"general.architecture":         "qwen2",
		"qwen2.context_length":         float64(32768),
		"tokenizer.ggml.add_bos_token": true,
		"tokenizer.ggml.bos_token_id":  float64(2),
		"tokenizer.ggml.tokens":        []any{"a", "b", "<|begin_of_text|>"},
	}
	info := parseModelInfo(mi)
	info.BOS = bosText(mi)
	if diff := cmp.Diff(ModelInfo{ContextLength: 32768, AddsBOS: true, BOS: "<|begin_of_text|>"}, info); diff != "" {
		t.Error(diff)
	}
	mi["tokenizer.ggml.bos_token_id"] = float64(0) // plain text: never stripped
	if s := bosText(mi); s != "" {
		t.Errorf("bosText = %q", s)
	}
	if got := stripBOS("<|begin_of_text|>hi", ModelInfo{AddsBOS: true, BOS: "<|begin_of_text|>"}); got != "hi" {
		t.Errorf("stripBOS = %q", got)
	}
	if got := stripBOS("<|begin_of_text|>hi", ModelInfo{BOS: "<|begin_of_text|>"}); got != "<|begin_of_text|>hi" {
		t.Errorf("stripBOS without AddsBOS = %q", got)
	}
}

func TestNewRejectsBadHost(t *testing.T) {
	for _, h := range []string{"", "http://"} {
		if _, err := New(Config{Host: h}); err == nil {
			t.Errorf("New(%q) succeeded", h)
		}
	}
}

// TestPrepareNotes checks that what the backend changes in a request is
// said in the notes, and only then. The model's /api/show answer is
// preset, so no server is needed.
func TestPrepareNotes(t *testing.T) {
	b, err := New(Config{Host: "127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	b.models["bos"] = ModelInfo{ContextLength: 8192, AddsBOS: true, BOS: "<|begin_of_text|>"}
	b.models["plain"] = ModelInfo{ContextLength: 8192}
	for _, tc := range []struct {
		name   string
		req    backend.Request
		prompt string
		notes  []string
	}{
		{"BOS stripped", backend.Request{Model: "bos", Mode: backend.ModeRaw, Prompt: "<|begin_of_text|>hi"}, "hi",
			[]string{`stripped the rendered BOS "<|begin_of_text|>" from the raw prompt: the model's tokenizer adds its own`}},
		{"no BOS in the prompt", backend.Request{Model: "bos", Mode: backend.ModeRaw, Prompt: "hi"}, "hi", nil},
		{"model without BOS", backend.Request{Model: "plain", Mode: backend.ModeRaw, Prompt: "<|begin_of_text|>hi"}, "<|begin_of_text|>hi", nil},
		{"developer as system", backend.Request{Model: "plain", Mode: backend.ModeChat, Messages: []chat.Message{
			{Role: chat.RoleDeveloper, Content: "rules"}, {Role: chat.RoleUser, Content: "hi"}}}, "",
			[]string{"sent 1 developer message(s) with role system: local servers' chat templates know system only"}},
		{"chat unchanged", backend.Request{Model: "plain", Mode: backend.ModeChat, Messages: []chat.Message{
			{Role: chat.RoleSystem, Content: "rules"}, {Role: chat.RoleUser, Content: "hi"}}}, "", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := b.prepare(context.Background(), tc.req)
			if err != nil {
				t.Fatal(err)
			}
			if p.prompt != tc.prompt {
				t.Errorf("prompt %q, want %q", p.prompt, tc.prompt)
			}
			if diff := cmp.Diff(tc.notes, p.notes); diff != "" {
				t.Errorf("notes (-want +got):\n%s", diff)
			}
		})
	}
}

// TestGrammarUnsupported: Ollama takes no GBNF grammar, so a request with
// one is refused before anything is sent (the host is unreachable: had it
// been contacted, the error would say so).
func TestGrammarUnsupported(t *testing.T) {
	b, err := New(Config{Host: "127.0.0.1:1", Attempts: 1})
	if err != nil {
		t.Fatal(err)
	}
	_, err = b.Generate(context.Background(), backend.Request{Model: "m", Mode: backend.ModeRaw, Prompt: "x", Grammar: `root ::= "x"`}, nil)
	var e *backend.Error
	if !errors.As(err, &e) || e.Kind != backend.KindUnsupported || !strings.Contains(e.Message, "grammar") {
		t.Errorf("err %v; want unsupported, naming the grammar", err)
	}
}

// TestNumCtxNeverGrows: one num_ctx for every prompt a session sends, from
// the first to one too long for it, and the test server registers its
// model with that same value (so its warm-up load is the only one).
func TestNumCtxNeverGrows(t *testing.T) {
	b, err := New(Config{Host: "127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	const window = 8192
	for size := 100; ; size *= 2 {
		got, err := b.budget(size, backend.Options{}, window)
		if err != nil {
			if !errors.Is(err, backend.ErrContextOverflow) || size < window {
				t.Fatalf("prompt of %d bytes: %v", size, err)
			}
			break
		}
		if got != window {
			t.Fatalf("prompt of %d bytes: num_ctx %d, want %d as for every other", size, got, window)
		}
	}
	if ollamatest.MaxNumCtx != DefaultMaxNumCtx {
		t.Errorf("ollamatest registers num_ctx capped at %d, the backend caps at %d", ollamatest.MaxNumCtx, DefaultMaxNumCtx)
	}
	spec := ollamatest.DefaultSpec()
	if got := ollamatest.NumCtx(spec); got != SessionNumCtx(spec.ContextLength, 0) {
		t.Errorf("ollamatest registers num_ctx %d, the backend sends %d", got, SessionNumCtx(spec.ContextLength, 0))
	}
}

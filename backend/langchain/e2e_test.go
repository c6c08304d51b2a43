package langchain

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/toolharness/toolharness/backend/internal/backendtest"

	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/llms/ollama"

	"github.com/toolharness/toolharness/backend"
	"github.com/toolharness/toolharness/chat"
	"github.com/toolharness/toolharness/internal/ollamatest"
)

var tiny ollamatest.Lazy

func TestMain(m *testing.M) { tiny.Main(m) }

// chatPrompt is how the tiny model's ChatML template renders chatMessages.
const chatPrompt = "<|im_start|>system\nYou call tools.<|im_end|>\n<|im_start|>user\nWeather in Paris?<|im_end|>\n<|im_start|>assistant\n"

var chatMessages = []chat.Message{
	{Role: chat.RoleSystem, Content: "You call tools."},
	{Role: chat.RoleUser, Content: "Weather in Paris?"},
}

// lcOllama is langchaingo's own Ollama provider: the llms.Model a
// langchaingo user would have.
func lcOllama(t *testing.T, srv *ollamatest.Server) *Backend {
	t.Helper()
	m, err := ollama.New(ollama.WithServerURL(srv.URL), ollama.WithModel(srv.Model))
	if err != nil {
		t.Fatal(err)
	}
	b, err := New(m, Config{Name: "langchain-ollama"})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func ctxFor(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func chatRequest(max int) backend.Request {
	return backend.Request{Mode: backend.ModeChat, Messages: chatMessages,
		Options: backend.Options{Temperature: ptr(0.0), Seed: ptr(5), MaxTokens: max}}
}

func collect(t *testing.T, b *Backend, ctx context.Context, req backend.Request) ([]string, backend.Response, error) {
	t.Helper()
	var chunks []string
	resp, err := b.Generate(ctx, req, func(s string) error {
		chunks = append(chunks, s)
		return nil
	})
	if got := strings.Join(chunks, ""); got != resp.Text {
		t.Errorf("Text %q is not the chunks joined %q", resp.Text, got)
	}
	return chunks, resp, err
}

func TestE2EChatStreaming(t *testing.T) {
	srv := tiny.Get(t)
	b := lcOllama(t, srv)
	chunks, resp, err := collect(t, b, ctxFor(t), chatRequest(16))
	if err != nil {
		t.Fatal(err)
	}
	if len(chunks) < 2 {
		t.Errorf("%d chunks; want a stream", len(chunks))
	}
	// The tiny model never ends by itself: 16 tokens are generated.
	if resp.Usage.GeneratedTokens != 16 {
		t.Errorf("generated %d tokens, want 16", resp.Usage.GeneratedTokens)
	}
	if want := ollamatest.TokenCount(chatPrompt); resp.Usage.PromptTokens != want {
		t.Errorf("prompt tokens %d, want %d (the ChatML rendering counted byte by byte)", resp.Usage.PromptTokens, want)
	}
	if resp.Usage.TimeToFirstChunk <= 0 || resp.Usage.Total < resp.Usage.TimeToFirstChunk {
		t.Errorf("client times %v %v", resp.Usage.TimeToFirstChunk, resp.Usage.Total)
	}
	t.Logf("chunks=%d text=%q usage=%+v", len(chunks), resp.Text, resp.Usage)
}

// TestE2ERawIsSingleHumanMessage checks the documented choice: raw mode is
// what llms.GenerateFromSinglePrompt sends, with the stream kept.
func TestE2ERawIsSingleHumanMessage(t *testing.T) {
	srv := tiny.Get(t)
	b := lcOllama(t, srv)
	ctx := ctxFor(t)
	req := backend.Request{Mode: backend.ModeRaw, Prompt: "Weather in Paris?", Options: backend.Options{Temperature: ptr(0.0), Seed: ptr(5), MaxTokens: 12}}
	_, resp, err := collect(t, b, ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	want, err := llms.GenerateFromSinglePrompt(ctx, b.model, "Weather in Paris?", llms.WithTemperature(0), llms.WithSeed(5), llms.WithMaxTokens(12))
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text != want {
		t.Errorf("raw mode %q, GenerateFromSinglePrompt %q", resp.Text, want)
	}
	if n := ollamatest.TokenCount("<|im_start|>user\nWeather in Paris?<|im_end|>\n<|im_start|>assistant\n"); resp.Usage.PromptTokens != n {
		t.Errorf("prompt tokens %d, want %d: the prompt should arrive as one templated user turn", resp.Usage.PromptTokens, n)
	}
}

func TestE2EStopWords(t *testing.T) {
	srv := tiny.Get(t)
	b := lcOllama(t, srv)
	ctx := ctxFor(t)
	_, free, err := collect(t, b, ctx, chatRequest(24))
	if err != nil {
		t.Fatal(err)
	}
	// Pick a stop sequence from the middle of the unconstrained output
	// that does not occur earlier; the same greedy run must stop before it.
	var stop string
	var at int
	for i := 6; i+2 <= len(free.Text) && stop == ""; i++ {
		s := free.Text[i : i+2]
		if strings.TrimSpace(s) == s && !strings.Contains(free.Text[:i+1], s) {
			stop, at = s, i
		}
	}
	if stop == "" {
		t.Fatalf("no usable stop sequence in %q", free.Text)
	}
	req := chatRequest(24)
	req.Stop = []string{stop}
	_, resp, err := collect(t, b, ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text != free.Text[:at] {
		t.Errorf("with stop %q: %q; want %q (the output up to the stop sequence)", stop, resp.Text, free.Text[:at])
	}
}

func TestE2ECancelMidStream(t *testing.T) {
	srv := tiny.Get(t)
	backendtest.CancelMidStream(t, lcOllama(t, srv), chatRequest(200))
}

func TestE2EServerKilledMidStream(t *testing.T) {
	srv := ollamatest.Start(t, ollamatest.WithOwnProcess())
	b := lcOllama(t, srv)
	n := 0
	resp, err := b.Generate(ctxFor(t), chatRequest(400), func(string) error {
		if n++; n == 3 {
			if err := srv.Kill(); err != nil {
				t.Error(err)
			}
		}
		return nil
	})
	var be *backend.Error
	if !errors.As(err, &be) || be.Kind != backend.KindStreamCut || !be.Consumed {
		t.Fatalf("err %v; want a stream cut with output consumed", err)
	}
	if resp.Text == "" {
		t.Error("the text delivered before the kill was lost")
	}
	if backend.Retryable(err) {
		t.Error("a cut after delivered output must not be retryable")
	}
}

func TestUnreachable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	m, err := ollama.New(ollama.WithServerURL("http://"+addr), ollama.WithModel("none"))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := New(m, Config{})
	_, err = b.Generate(context.Background(), backend.Request{Mode: backend.ModeRaw, Prompt: "x"}, nil)
	if !errors.Is(err, backend.ErrUnreachable) || !backend.Retryable(err) {
		t.Errorf("err %v; want unreachable and retryable", err)
	}
}

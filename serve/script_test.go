package serve

import (
	"context"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/toolharness/toolharness/agent"
	"github.com/toolharness/toolharness/backend"
)

// scriptBackend is a model that writes given outputs, in chunks of 5
// bytes, and records every request, so tests can assert exact calls. A
// reply "<block>" streams nothing and waits for the request's end.
type scriptBackend struct {
	mu       sync.Mutex
	replies  []string
	requests []backend.Request
	// next, when set, answers every request, unrecorded (the load
	// benchmark, Claude Code's test).
	next func(req backend.Request) string
	// canceled is closed when a blocked request's context ends.
	canceled chan struct{}
}

const blockReply = "<block>"

func (b *scriptBackend) Capabilities() backend.Capabilities {
	return backend.Capabilities{Raw: true, Chat: true}
}

func (b *scriptBackend) Generate(ctx context.Context, req backend.Request, onChunk func(string) error) (backend.Response, error) {
	b.mu.Lock()
	var text string
	switch {
	case b.next != nil:
		// Not recorded: the load benchmark would measure the record.
		b.mu.Unlock()
		text = b.next(req)
		b.mu.Lock()
	case len(b.replies) == 0:
		b.mu.Unlock()
		return backend.Response{}, &backend.Error{Kind: backend.KindBadResponse, Backend: "script", Message: "script exhausted"}
	default:
		b.requests = append(b.requests, req)
		text = b.replies[0]
		b.replies = b.replies[1:]
	}
	b.mu.Unlock()
	var resp backend.Response
	if text == blockReply {
		if err := onChunk("Thinking about it"); err != nil {
			return resp, err
		}
		<-ctx.Done()
		close(b.canceled)
		return resp, &backend.Error{Kind: backend.KindCanceled, Backend: "script", Consumed: true, Err: ctx.Err()}
	}
	for i := 0; i < len(text); i += 5 {
		chunk := text[i:min(i+5, len(text))]
		resp.Text += chunk
		if onChunk != nil {
			if err := onChunk(chunk); err != nil {
				return resp, err
			}
		}
	}
	resp.StopReason = "stop"
	resp.Usage = backend.Usage{PromptTokens: len(req.Prompt) / 4, GeneratedTokens: len(text) / 4}
	if max := req.Options.MaxTokens; max > 0 && len(text)/4 > max {
		resp.StopReason = "length"
	}
	return resp, nil
}

func (b *scriptBackend) reqs() []backend.Request {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]backend.Request(nil), b.requests...)
}

// testModel is a Model of b with the qwen2.5 family's template (hermes
// calls).
func testModel(t testing.TB, b backend.Backend) *Model {
	t.Helper()
	r, err := agent.NewRenderer(agent.RendererOptions{Template: "qwen2.5"})
	if err != nil {
		t.Fatal(err)
	}
	return &Model{Name: "test-model", Backend: b, Renderer: r, Window: 32768}
}

// startServer serves m over HTTP for the test's duration.
func startServer(t testing.TB, cfg Config, models ...*Model) *httptest.Server {
	t.Helper()
	eng, err := NewEngine(EngineConfig{Models: models, Metrics: cfg.Metrics})
	if err != nil {
		t.Fatal(err)
	}
	cfg.Engine = eng
	s, err := NewServer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	return srv
}

// call writes a call the way the hermes catalog asks.
func call(name, args string) string {
	return "<tool_call>\n{\"name\": \"" + name + "\", \"arguments\": " + args + "}\n</tool_call>"
}

func sleepMS(n int) { time.Sleep(time.Duration(n) * time.Millisecond) }

package llamacpp

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/toolharness/toolharness/backend"
)

func TestServerErrors(t *testing.T) {
	tests := []struct {
		name     string
		replies  []reply
		cfg      Config
		kind     backend.Kind
		status   int
		message  string
		attempts int
		ok       bool
	}{
		{name: "bad grammar", replies: []reply{{status: 400, file: "error_grammar.json"}}, kind: backend.KindServer, status: 400, message: "Failed to parse grammar", attempts: 1},
		{name: "auth", replies: []reply{{status: 401, file: "error_auth.json"}}, kind: backend.KindServer, status: 401, message: "Invalid API Key", attempts: 1},
		{name: "not supported", replies: []reply{{status: 501, file: "error_not_supported.json"}}, kind: backend.KindUnsupported, status: 501, message: "This server does not support metrics endpoint.", attempts: 1},
		{name: "loading, retried until out of retries", replies: []reply{{status: 503, file: "error_loading.json"}}, kind: backend.KindServer, status: 503, message: "Loading model", attempts: 3},
		{name: "loading, then ready", replies: []reply{{status: 503, file: "error_loading.json"}, {file: "completion_stream.sse"}}, ok: true, attempts: 2},
		{name: "plain text body", replies: []reply{{status: 502, body: "bad gateway\n"}}, cfg: Config{Retries: -1}, kind: backend.KindServer, status: 502, message: "bad gateway", attempts: 1},
		// exceed_context_size_error is not in the README excerpt; this body
		// is constructed in the documented error shape.
		{name: "context exceeded", replies: []reply{{status: 400, body: `{"error":{"code":400,"message":"the request exceeds the available context size","type":"exceed_context_size_error"}}`}},
			kind: backend.KindContextOverflow, status: 400, message: "the request exceeds the available context size", attempts: 1},
		{name: "JSON error with status 200 to a streamed request", replies: []reply{{body: `{"error":{"code":500,"message":"slot unavailable","type":"server_error"}}`}}, cfg: Config{Retries: -1}, kind: backend.KindServer, status: 500, message: "slot unavailable", attempts: 1},
		{name: "error event mid-stream", replies: []reply{{file: "completion_stream_error.sse"}}, kind: backend.KindServer, status: 500, message: "Failed to decode the batch", attempts: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := newFixtureServer(t, llama3(tt.replies...))
			c := newClient(t, fs, tt.cfg)
			_, err := run(t, c, backend.Request{Mode: backend.ModeRaw, Prompt: llama3Prompt})
			if got := len(fs.requests("/completion")); got != tt.attempts {
				t.Errorf("%d attempts, want %d", got, tt.attempts)
			}
			if tt.ok {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			var be *backend.Error
			if !errors.As(err, &be) {
				t.Fatalf("error %v is not a *backend.Error", err)
			}
			if be.Kind != tt.kind || be.Status != tt.status || be.Message != tt.message || be.Backend != Name {
				t.Errorf("got kind %s status %d message %q backend %q; want %s %d %q", be.Kind, be.Status, be.Message, be.Backend, tt.kind, tt.status, tt.message)
			}
		})
	}
}

func TestStreamCut(t *testing.T) {
	tests := []struct {
		name     string
		replies  []reply
		consumed bool
		text     string
		attempts int
	}{
		{name: "ends without the final event", replies: []reply{{file: "completion_stream_cut.sse"}}, consumed: true, text: "<tool_call>\n{\"name\": \"get", attempts: 1},
		{name: "connection dropped mid-event", replies: []reply{{file: "completion_stream.sse", hangup: true, hangupAfter: 300}}, consumed: true, text: "<tool_call>\n", attempts: 1},
		// Nothing delivered: safe to retry, and retried until out of retries.
		{name: "dropped before any event", replies: []reply{{file: "completion_stream.sse", hangup: true}}, attempts: 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := newFixtureServer(t, llama3(tt.replies...))
			c := newClient(t, fs, Config{})
			got, err := run(t, c, backend.Request{Mode: backend.ModeRaw, Prompt: llama3Prompt})
			var be *backend.Error
			if !errors.As(err, &be) || be.Kind != backend.KindStreamCut || be.Consumed != tt.consumed {
				t.Fatalf("err %v (%#v); want a stream cut with consumed=%v", err, be, tt.consumed)
			}
			if !errors.Is(err, backend.ErrStreamCut) {
				t.Error("errors.Is(err, ErrStreamCut) is false")
			}
			if backend.Retryable(err) == tt.consumed {
				t.Errorf("Retryable = %v with consumed=%v", backend.Retryable(err), tt.consumed)
			}
			if got.Text != tt.text {
				t.Errorf("text kept %q, want %q", got.Text, tt.text)
			}
			if n := len(fs.requests("/completion")); n != tt.attempts {
				t.Errorf("%d attempts, want %d", n, tt.attempts)
			}
		})
	}
}

func TestStall(t *testing.T) {
	tests := []struct {
		name     string
		rep      reply
		consumed bool
		text     string
	}{
		{name: "mid-stream", rep: reply{file: "completion_stream.sse", stallAfter: 3}, consumed: true, text: "<tool_call>\n{\""},
		{name: "before the answer", rep: reply{file: "completion_stream.sse", stallBefore: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := newFixtureServer(t, llama3(tt.rep))
			c := newClient(t, fs, Config{StallTimeout: 150 * time.Millisecond, Retries: -1})
			start := time.Now()
			got, err := run(t, c, backend.Request{Mode: backend.ModeRaw, Prompt: llama3Prompt})
			var be *backend.Error
			if !errors.As(err, &be) || be.Kind != backend.KindStalled || be.Consumed != tt.consumed {
				t.Fatalf("err %v; want stalled with consumed=%v", err, tt.consumed)
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("stall detected after %v", d)
			}
			if got.Text != tt.text {
				t.Errorf("text kept %q, want %q", got.Text, tt.text)
			}
		})
	}
}

func TestUnreachable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	c, err := New(Config{BaseURL: "http://" + addr, Retries: 1, Backoff: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Generate(context.Background(), backend.Request{Mode: backend.ModeRaw, Prompt: "x"}, nil)
	if !errors.Is(err, backend.ErrUnreachable) || !backend.Retryable(err) {
		t.Errorf("err %v; want unreachable and retryable", err)
	}
}

func TestCancelAndCallbackError(t *testing.T) {
	t.Run("context canceled mid-stream", func(t *testing.T) {
		fs := newFixtureServer(t, llama3(reply{file: "completion_stream.sse", stallAfter: 5}))
		c := newClient(t, fs, Config{})
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		n := 0
		resp, err := c.Generate(ctx, backend.Request{Mode: backend.ModeRaw, Prompt: llama3Prompt}, func(string) error {
			if n++; n == 2 {
				cancel()
			}
			return nil
		})
		var be *backend.Error
		if !errors.As(err, &be) || be.Kind != backend.KindCanceled || !be.Consumed || !errors.Is(err, context.Canceled) {
			t.Fatalf("err %v; want canceled, consumed, wrapping context.Canceled", err)
		}
		if !strings.HasPrefix(resp.Text, "<tool_call>\n") {
			t.Errorf("text kept %q", resp.Text)
		}
	})
	t.Run("callback error", func(t *testing.T) {
		fs := newFixtureServer(t, llama3(reply{file: "completion_stream.sse"}))
		c := newClient(t, fs, Config{})
		stop := errors.New("enough")
		resp, err := c.Generate(context.Background(), backend.Request{Mode: backend.ModeRaw, Prompt: llama3Prompt}, func(string) error { return stop })
		if err != stop {
			t.Errorf("err %v; want the callback's own error", err)
		}
		if resp.Text != "<tool_call>" {
			t.Errorf("text %q; want the one chunk delivered", resp.Text)
		}
		if n := len(fs.requests("/completion")); n != 1 {
			t.Errorf("%d attempts after a callback error, want 1", n)
		}
	})
	t.Run("bad requests", func(t *testing.T) {
		fs := newFixtureServer(t, llama3(reply{file: "completion_stream.sse"}))
		c := newClient(t, fs, Config{})
		for _, req := range []backend.Request{
			{Mode: "text", Prompt: "x", Grammar: "root ::= \"x\""},
			{Mode: backend.ModeRaw, Prompt: "x", Format: []byte(`{}`), Grammar: "root ::= \"x\""},
		} {
			if _, err := c.Generate(context.Background(), req, nil); !errors.Is(err, backend.ErrUnsupported) {
				t.Errorf("%+v: err %v; want unsupported", req, err)
			}
		}
	})
}

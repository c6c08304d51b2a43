package backendtest

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/toolharness/toolharness/backend"
)

// Timeout bounds each request a check makes.
const Timeout = 60 * time.Second

func ctxFor(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), Timeout)
	t.Cleanup(cancel)
	return ctx
}

// AsError fails the test when err is not a *backend.Error.
func AsError(t *testing.T, err error) *backend.Error {
	t.Helper()
	var e *backend.Error
	if !errors.As(err, &e) {
		t.Fatalf("err = %v, want a *backend.Error", err)
	}
	return e
}

// Stream runs req, collecting the chunks: the request succeeds in at
// least minChunks chunks whose concatenation is Response.Text. The caller
// checks the figures, which differ per server.
func Stream(t *testing.T, b backend.Backend, req backend.Request, minChunks int) backend.Response {
	t.Helper()
	var chunks []string
	resp, err := b.Generate(ctxFor(t), req, func(s string) error {
		chunks = append(chunks, s)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(chunks) < minChunks || strings.Join(chunks, "") != resp.Text {
		t.Errorf("chunks %q do not make up text %q (want at least %d)", chunks, resp.Text, minChunks)
	}
	return resp
}

// StopSequence generates greedily, then again with a stop sequence taken
// from the middle of the first output: the second output must end right
// before it, with stop reason "stop". req must allow at least 30 tokens of
// output of which the model writes 15 bytes or more.
func StopSequence(t *testing.T, b backend.Backend, req backend.Request) {
	t.Helper()
	zero := 0.0
	req.Options.Temperature = &zero
	req.Options.MaxTokens = 30
	first, err := b.Generate(ctxFor(t), req, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(first.Text) < 15 {
		t.Fatalf("first output %q is too short to take a stop sequence from", first.Text)
	}
	stop := first.Text[12:15]
	want := first.Text[:strings.Index(first.Text, stop)]
	req.Stop = []string{stop}
	second, err := b.Generate(ctxFor(t), req, nil)
	if err != nil {
		t.Fatal(err)
	}
	if second.Text != want || second.StopReason != "stop" {
		t.Errorf("with stop %q: text %q reason %q; want %q, stop (first output %q)", stop, second.Text, second.StopReason, want, first.Text)
	}
}

// CancelMidStream cancels the context after the third chunk of a long
// generation: the error is KindCanceled, consumed, wrapping
// context.Canceled, it comes at once, and the text so far is kept.
func CancelMidStream(t *testing.T, b backend.Backend, req backend.Request) {
	t.Helper()
	ctx, cancel := context.WithCancel(ctxFor(t))
	defer cancel()
	req.Options.MaxTokens = 2000
	n := 0
	start := time.Now()
	resp, err := b.Generate(ctx, req, func(string) error {
		if n++; n == 3 {
			cancel()
		}
		return nil
	})
	e := AsError(t, err)
	if e.Kind != backend.KindCanceled || !e.Consumed || !errors.Is(err, context.Canceled) || !errors.Is(err, backend.ErrCanceled) {
		t.Fatalf("err = %#v, want canceled with Consumed", err)
	}
	if len(resp.Text) < 3 || time.Since(start) > 5*time.Second {
		t.Errorf("text %q after %v", resp.Text, time.Since(start))
	}
}

// CallbackError stops a long generation with the callback's own error,
// which must come back unchanged with the text so far.
func CallbackError(t *testing.T, b backend.Backend, req backend.Request) {
	t.Helper()
	stop := errors.New("enough")
	req.Options.MaxTokens = 2000
	resp, err := b.Generate(ctxFor(t), req, func(string) error { return stop })
	if err != stop || len(resp.Text) == 0 {
		t.Fatalf("err = %v, text %q; want the callback's error and the text so far", err, resp.Text)
	}
}

// Server is a real server a test may kill and start again.
type Server interface {
	Kill() error
	Restart() error
}

// ServerKilled kills srv in the middle of a stream: the error is a
// consumed, not retryable KindStreamCut with the text so far. Then a
// request to the dead server is KindUnreachable, after the retry's
// backoff (b must retry once with at least minBackoff), and once srv is
// back the backend works again.
func ServerKilled(t *testing.T, b backend.Backend, srv Server, req backend.Request, minBackoff time.Duration) {
	t.Helper()
	req.Options.MaxTokens = 2000
	n := 0
	resp, err := b.Generate(ctxFor(t), req, func(string) error {
		if n++; n == 3 {
			if err := srv.Kill(); err != nil {
				t.Error(err)
			}
		}
		return nil
	})
	e := AsError(t, err)
	if e.Kind != backend.KindStreamCut || !e.Consumed || backend.Retryable(err) || len(resp.Text) < 3 {
		t.Fatalf("err = %#v, text %q; want stream_cut, consumed, not retryable, and what arrived", err, resp.Text)
	}

	start := time.Now()
	_, err = b.Generate(ctxFor(t), req, nil)
	if e := AsError(t, err); e.Kind != backend.KindUnreachable || e.Consumed || !errors.Is(err, backend.ErrUnreachable) {
		t.Fatalf("err = %#v, want unreachable", err)
	}
	if d := time.Since(start); d < minBackoff {
		t.Errorf("failed after %v: the retry's backoff did not happen", d)
	}

	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	req.Options.MaxTokens = 5
	if _, err := b.Generate(ctxFor(t), req, nil); err != nil {
		t.Fatalf("after restart: %v", err)
	}
}

package transport

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/toolharness/toolharness/backend"
)

// StallError is the cause a Watchdog cancels its request with; its text
// names the backend, as each backend's own stall error used to.
type StallError struct{ Backend string }

func (e *StallError) Error() string { return e.Backend + ": no data within the stall timeout" }

// Watchdog cancels a request that receives nothing for its timeout. The
// timer starts at Watch, so the wait for the first byte (prompt
// evaluation) counts too.
type Watchdog struct {
	backend string
	parent  context.Context // the caller's
	ctx     context.Context // the request's: the caller's plus the stall cancel
	cancel  context.CancelCauseFunc
	timer   *time.Timer
	d       time.Duration
}

// Watch starts a watchdog of timeout d over a request made with ctx on
// behalf of backend backendName. Call Stop when the request is over.
func Watch(ctx context.Context, backendName string, d time.Duration) *Watchdog {
	rctx, cancel := context.WithCancelCause(ctx)
	w := &Watchdog{backend: backendName, parent: ctx, ctx: rctx, cancel: cancel, d: d}
	w.timer = time.AfterFunc(d, func() { cancel(&StallError{Backend: backendName}) })
	return w
}

// Context is the context to make the request with.
func (w *Watchdog) Context() context.Context { return w.ctx }

// Kick restarts the timeout: data arrived.
func (w *Watchdog) Kick() { w.timer.Reset(w.d) }

// Stop ends the watchdog and releases the request's context.
func (w *Watchdog) Stop() {
	w.timer.Stop()
	w.cancel(nil)
}

// Reader returns r kicking the watchdog on every read that returned data.
func (w *Watchdog) Reader(r io.Reader) io.Reader { return kickReader{r, w} }

type kickReader struct {
	r io.Reader
	w *Watchdog
}

func (k kickReader) Read(p []byte) (int, error) {
	n, err := k.r.Read(p)
	if n > 0 {
		k.w.Kick()
	}
	return n, err
}

// Interrupted returns the error of a request that ended because the
// caller's context ended (KindCanceled) or the watchdog fired
// (KindStalled), or nil when neither happened.
func (w *Watchdog) Interrupted(consumed bool) *backend.Error {
	return Interrupted(w.backend, w.parent, w.ctx, consumed)
}

// Fail classifies err, a failure of the request: KindCanceled or
// KindStalled as Interrupted says, kind otherwise.
func (w *Watchdog) Fail(err error, kind backend.Kind, consumed bool) *backend.Error {
	if e := w.Interrupted(consumed); e != nil {
		return e
	}
	return &backend.Error{Kind: kind, Backend: w.backend, Consumed: consumed, Err: err}
}

// Interrupted is Watchdog.Interrupted for a request context rctx derived
// from parent, with or without a watchdog (rctx may be parent itself). A
// stall counts only while the caller's context is still live: a caller
// that canceled is told so, whatever fired first.
func Interrupted(backendName string, parent, rctx context.Context, consumed bool) *backend.Error {
	if err := parent.Err(); err != nil {
		return &backend.Error{Kind: backend.KindCanceled, Backend: backendName, Consumed: consumed, Err: err}
	}
	var stall *StallError
	if errors.As(context.Cause(rctx), &stall) {
		return &backend.Error{Kind: backend.KindStalled, Backend: backendName, Consumed: consumed, Err: stall}
	}
	return nil
}

// Retry is a backend's retry policy.
type Retry struct {
	Backend string
	// Attempts is the number of tries in all; 1 or less means no retry.
	Attempts int
	// Backoff is the wait before the first retry; it doubles each retry.
	Backoff time.Duration
	// NameLast makes the KindCanceled error of a caller who gave up during
	// a wait name the failure that was being retried (llamacpp's message;
	// ollama and openai give the context's error alone).
	NameLast bool
}

// Do runs op until it succeeds, fails in a way backend.Retryable refuses
// (something was consumed, or the failure is not transient), or has run
// Attempts times; it returns op's last error. When ctx ends during a
// wait it returns a KindCanceled *backend.Error wrapping ctx.Err().
func (r Retry) Do(ctx context.Context, op func() error) error {
	wait := r.Backoff
	for attempt := 1; ; attempt++ {
		err := op()
		if err == nil || attempt >= r.Attempts || !backend.Retryable(err) {
			return err
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			cause := ctx.Err()
			if r.NameLast {
				cause = fmt.Errorf("%w (while retrying after: %v)", cause, err)
			}
			return &backend.Error{Kind: backend.KindCanceled, Backend: r.Backend, Err: cause}
		case <-t.C:
		}
		wait *= 2
	}
}

// MaxErrorBody bounds how much of an error answer is read: enough for any
// server's message, not a whole HTML page of a misconfigured proxy.
const MaxErrorBody = 64 << 10

// ReadErrorBody reads at most MaxErrorBody bytes of the body of a non-2xx
// answer, kicking w while data arrives (w may be nil). The backend digs
// the server's message out of it in the server's own error shape.
func ReadErrorBody(w *Watchdog, body io.Reader) ([]byte, error) {
	if w != nil {
		body = w.Reader(body)
	}
	return io.ReadAll(io.LimitReader(body, MaxErrorBody))
}

// Or returns v, or def when v is zero or less: the rule for the zero
// fields of every backend's Config.
func Or[T ~int | ~int64 | ~float64](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
}

// HTTPClient returns c, or when c is nil a client without an overall
// timeout: streams are long, and a Watchdog bounds silence instead.
func HTTPClient(c *http.Client) *http.Client {
	if c == nil {
		return &http.Client{}
	}
	return c
}

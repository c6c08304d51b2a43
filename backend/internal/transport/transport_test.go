package transport

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/toolharness/toolharness/backend"
)

func TestWatchdogStalls(t *testing.T) {
	w := Watch(context.Background(), "ollama", 20*time.Millisecond)
	defer w.Stop()
	select {
	case <-w.Context().Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the watchdog did not fire")
	}
	e := w.Fail(io.ErrUnexpectedEOF, backend.KindStreamCut, true)
	if e.Kind != backend.KindStalled || e.Backend != "ollama" || !e.Consumed {
		t.Fatalf("got %+v; want stalled, ollama, consumed", e)
	}
	if e.Error() != "backend: ollama: stalled: ollama: no data within the stall timeout" {
		t.Errorf("text %q", e.Error())
	}
	var se *StallError
	if !errors.As(e, &se) || !errors.Is(e, backend.ErrStalled) {
		t.Errorf("%v does not unwrap to a *StallError or match ErrStalled", e)
	}
}

// TestWatchdogKick reads a body that trickles in slower than the timeout
// in all, but faster than it between reads: the watchdog must not fire.
func TestWatchdogKick(t *testing.T) {
	const d = 100 * time.Millisecond
	w := Watch(context.Background(), "llamacpp", d)
	defer w.Stop()
	r := w.Reader(&slowReader{data: []byte("abcdefgh"), every: d / 4})
	b, err := io.ReadAll(r)
	if err != nil || string(b) != "abcdefgh" {
		t.Fatalf("read %q, %v", b, err)
	}
	if err := w.Context().Err(); err != nil {
		t.Errorf("the watchdog fired while data kept arriving: %v", context.Cause(w.Context()))
	}
	if e := w.Interrupted(false); e != nil {
		t.Errorf("Interrupted = %v on a live request", e)
	}
}

// slowReader returns one byte per read, every interval.
type slowReader struct {
	data  []byte
	every time.Duration
}

func (s *slowReader) Read(p []byte) (int, error) {
	if len(s.data) == 0 {
		return 0, io.EOF
	}
	time.Sleep(s.every)
	p[0], s.data = s.data[0], s.data[1:]
	return 1, nil
}

func TestInterrupted(t *testing.T) {
	live := context.Background()
	canceled, cancel := context.WithCancel(live)
	cancel()
	stalled, stall := context.WithCancelCause(live)
	stall(&StallError{Backend: "openai"})
	// The caller canceled after the stall fired: the caller is told it
	// canceled.
	both, cancelBoth := context.WithCancel(live)
	bothReq, stallBoth := context.WithCancelCause(both)
	stallBoth(&StallError{Backend: "openai"})
	cancelBoth()
	for _, tc := range []struct {
		name         string
		parent, rctx context.Context
		want         backend.Kind
		cause        error
	}{
		{"live", live, live, "", nil},
		{"canceled", canceled, canceled, backend.KindCanceled, context.Canceled},
		{"stalled", live, stalled, backend.KindStalled, nil},
		{"canceled after a stall", both, bothReq, backend.KindCanceled, context.Canceled},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := Interrupted("openai", tc.parent, tc.rctx, true)
			if tc.want == "" {
				if e != nil {
					t.Fatalf("got %v, want nil", e)
				}
				return
			}
			if e == nil || e.Kind != tc.want || e.Backend != "openai" || !e.Consumed {
				t.Fatalf("got %+v, want kind %s", e, tc.want)
			}
			if tc.cause != nil && !errors.Is(e, tc.cause) {
				t.Errorf("%v does not wrap %v", e, tc.cause)
			}
		})
	}
}

func TestFailKeepsKind(t *testing.T) {
	w := Watch(context.Background(), "llamacpp", time.Hour)
	defer w.Stop()
	cause := errors.New("connection reset")
	e := w.Fail(cause, backend.KindUnreachable, false)
	if e.Kind != backend.KindUnreachable || e.Err != cause || e.Consumed || e.Backend != "llamacpp" {
		t.Errorf("got %+v", e)
	}
}

func TestRetry(t *testing.T) {
	unreachable := &backend.Error{Kind: backend.KindUnreachable, Backend: "x"}
	consumedCut := &backend.Error{Kind: backend.KindStreamCut, Backend: "x", Consumed: true}
	badRequest := &backend.Error{Kind: backend.KindServer, Backend: "x", Status: 400}
	for _, tc := range []struct {
		name     string
		attempts int
		errs     []error // op's answers in turn; the last repeats
		calls    int
		want     error
	}{
		{"success at once", 3, []error{nil}, 1, nil},
		{"transient, then success", 3, []error{unreachable, nil}, 2, nil},
		{"out of attempts", 3, []error{unreachable}, 3, unreachable},
		{"one attempt", 1, []error{unreachable}, 1, unreachable},
		{"zero attempts is one", 0, []error{unreachable}, 1, unreachable},
		{"consumed is never retried", 3, []error{consumedCut}, 1, consumedCut},
		{"client error is never retried", 3, []error{badRequest}, 1, badRequest},
	} {
		t.Run(tc.name, func(t *testing.T) {
			calls := 0
			err := Retry{Backend: "x", Attempts: tc.attempts, Backoff: time.Millisecond}.Do(context.Background(), func() error {
				err := tc.errs[min(calls, len(tc.errs)-1)]
				calls++
				return err
			})
			if err != tc.want || calls != tc.calls {
				t.Errorf("err %v after %d calls; want %v after %d", err, calls, tc.want, tc.calls)
			}
		})
	}
}

func TestRetryBackoffDoubles(t *testing.T) {
	var at []time.Time
	Retry{Backend: "x", Attempts: 3, Backoff: 40 * time.Millisecond}.Do(context.Background(), func() error {
		at = append(at, time.Now())
		return &backend.Error{Kind: backend.KindUnreachable}
	})
	if len(at) != 3 {
		t.Fatalf("%d calls, want 3", len(at))
	}
	if d1, d2 := at[1].Sub(at[0]), at[2].Sub(at[1]); d1 < 40*time.Millisecond || d2 < 80*time.Millisecond {
		t.Errorf("waits %v then %v; want at least 40ms then 80ms", d1, d2)
	}
}

func TestRetryCanceledDuringWait(t *testing.T) {
	last := &backend.Error{Kind: backend.KindServer, Backend: "llamacpp", Status: 503, Message: "Loading model"}
	for _, nameLast := range []bool{false, true} {
		ctx, cancel := context.WithCancel(context.Background())
		calls := 0
		start := time.Now()
		err := Retry{Backend: "llamacpp", Attempts: 5, Backoff: time.Hour, NameLast: nameLast}.Do(ctx, func() error {
			calls++
			time.AfterFunc(10*time.Millisecond, cancel)
			return last
		})
		var e *backend.Error
		if !errors.As(err, &e) || e.Kind != backend.KindCanceled || e.Backend != "llamacpp" || !errors.Is(err, context.Canceled) {
			t.Fatalf("NameLast %v: err %v; want canceled wrapping context.Canceled", nameLast, err)
		}
		if calls != 1 || time.Since(start) > 5*time.Second {
			t.Errorf("NameLast %v: %d calls in %v", nameLast, calls, time.Since(start))
		}
		want := "backend: llamacpp: canceled: context canceled"
		if nameLast {
			want += " (while retrying after: " + last.Error() + ")"
		}
		if err.Error() != want {
			t.Errorf("NameLast %v: text %q, want %q", nameLast, err, want)
		}
		cancel()
	}
}

func TestReadErrorBody(t *testing.T) {
	big := strings.Repeat("x", MaxErrorBody+100)
	b, err := ReadErrorBody(nil, strings.NewReader(big))
	if err != nil || len(b) != MaxErrorBody {
		t.Errorf("read %d bytes, %v; want %d", len(b), err, MaxErrorBody)
	}
	w := Watch(context.Background(), "openai", time.Hour)
	defer w.Stop()
	b, err = ReadErrorBody(w, iotest.OneByteReader(strings.NewReader(`{"error":"boom"}`)))
	if err != nil || string(b) != `{"error":"boom"}` {
		t.Errorf("read %q, %v", b, err)
	}
	if _, err := ReadErrorBody(w, iotest.ErrReader(io.ErrUnexpectedEOF)); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("read error lost: %v", err)
	}
}

func TestDefaults(t *testing.T) {
	if got := Or(0, 3); got != 3 {
		t.Errorf("Or(0, 3) = %d", got)
	}
	if got := Or(-1, 3); got != 3 {
		t.Errorf("Or(-1, 3) = %d", got)
	}
	if got := Or(2*time.Second, time.Minute); got != 2*time.Second {
		t.Errorf("Or(2s, 1m) = %v", got)
	}
	if got := Or(0.0, 2.0); got != 2.0 {
		t.Errorf("Or(0.0, 2.0) = %v", got)
	}
	own := &http.Client{Timeout: time.Second}
	if HTTPClient(own) != own {
		t.Error("HTTPClient replaced the caller's client")
	}
	if c := HTTPClient(nil); c == nil || c.Timeout != 0 {
		t.Errorf("HTTPClient(nil) = %+v; want a client without a timeout", c)
	}
}

package transport

import (
	"errors"
	"strings"
	"time"
)

// Delivery hands a streamed answer to the caller's callback piece by
// piece and keeps what it handed over, so that a failed request still
// returns the text that arrived (the backend.Backend contract: Response.Text
// is exactly the chunks passed to the callback).
type Delivery struct {
	start   time.Time
	onChunk func(string) error
	text    strings.Builder
	first   time.Duration
}

// NewDelivery delivers to onChunk (which may be nil), timing the first
// chunk from start, when the request was sent.
func NewDelivery(start time.Time, onChunk func(string) error) *Delivery {
	return &Delivery{start: start, onChunk: onChunk}
}

// Send hands piece to the callback; an empty piece is not delivered. An
// error from the callback comes back as a *CallbackError, to be told apart
// from the client's own errors and returned to the caller unchanged.
func (d *Delivery) Send(piece string) error {
	if piece == "" {
		return nil
	}
	if d.text.Len() == 0 {
		d.first = time.Since(d.start)
	}
	d.text.WriteString(piece)
	if d.onChunk == nil {
		return nil
	}
	if err := d.onChunk(piece); err != nil {
		return &CallbackError{Err: err}
	}
	return nil
}

// Text is everything delivered so far.
func (d *Delivery) Text() string { return d.text.String() }

// Len is the length of Text.
func (d *Delivery) Len() int { return d.text.Len() }

// Consumed reports whether anything was delivered: a request that
// consumed something must not be retried.
func (d *Delivery) Consumed() bool { return d.text.Len() > 0 }

// FirstChunk is the time from start to the first delivered piece, 0 when
// nothing was delivered.
func (d *Delivery) FirstChunk() time.Duration { return d.first }

// CallbackError carries an error the caller's chunk callback returned.
type CallbackError struct{ Err error }

func (e *CallbackError) Error() string { return e.Err.Error() }

// CallbackCause returns the callback's own error when err is or wraps a
// *CallbackError.
func CallbackCause(err error) (error, bool) {
	var cb *CallbackError
	if errors.As(err, &cb) {
		return cb.Err, true
	}
	return nil, false
}

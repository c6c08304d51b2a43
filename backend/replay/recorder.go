package replay

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/toolharness/toolharness/backend"
	"github.com/toolharness/toolharness/chat"
)

// Recorder is a backend that passes every call through to another one and
// appends the exchange to a recording. Each exchange is written and
// flushed as one line when it ends, so a session that crashes leaves a
// readable file. It is safe for concurrent use.
type Recorder struct {
	inner  backend.Backend
	mu     sync.Mutex
	w      *bufio.Writer
	closer io.Closer
	seq    int
	caps   backend.Capabilities
}

var (
	_ backend.Backend      = (*Recorder)(nil)
	_ backend.ContextSizer = (*Recorder)(nil)
	_ backend.TokenCounter = (*Recorder)(nil)
)

// NewRecorder records the exchanges with inner to w, starting with the
// header line.
func NewRecorder(inner backend.Backend, w io.Writer) (*Recorder, error) {
	if inner == nil {
		return nil, errors.New("replay: recorder needs a backend to record")
	}
	r := &Recorder{inner: inner, w: bufio.NewWriter(w), caps: inner.Capabilities()}
	if err := r.write(&entry{Type: typeHeader, Version: Version, Capabilities: toWireCapabilities(r.caps)}); err != nil {
		return nil, err
	}
	return r, nil
}

// Create records the exchanges with inner to a new file at path; Close
// closes it.
func Create(path string, inner backend.Backend) (*Recorder, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("replay: %w", err)
	}
	r, err := NewRecorder(inner, f)
	if err != nil {
		f.Close()
		return nil, err
	}
	r.closer = f
	return r, nil
}

// Close closes the file opened by Create (a no-op for NewRecorder).
func (r *Recorder) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closer == nil {
		return nil
	}
	err := r.closer.Close()
	r.closer = nil
	if err != nil {
		return fmt.Errorf("replay: close recording: %w", err)
	}
	return nil
}

// write appends one line and flushes it. Callers hold no lock.
func (r *Recorder) write(e *entry) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if e.Type != typeHeader {
		r.seq++
		e.Seq = r.seq
	}
	if e.Type == typeGenerate {
		// Record the capabilities only when the call changed them (a
		// backend may learn them from the server on its first request).
		if c := r.inner.Capabilities(); c != r.caps {
			r.caps = c
			e.Capabilities = toWireCapabilities(c)
		}
	}
	b, err := chat.Marshal(e)
	if err != nil {
		return fmt.Errorf("replay: encode exchange %d: %w", e.Seq, err)
	}
	b = append(b, '\n')
	if _, err := r.w.Write(b); err != nil {
		return fmt.Errorf("replay: write exchange %d: %w", e.Seq, err)
	}
	if err := r.w.Flush(); err != nil {
		return fmt.Errorf("replay: write exchange %d: %w", e.Seq, err)
	}
	return nil
}

// Capabilities are the recorded backend's.
func (r *Recorder) Capabilities() backend.Capabilities { return r.inner.Capabilities() }

// Generate passes req to the recorded backend, hands each chunk on to
// onChunk and records the whole exchange. A failure to write the
// recording is returned (joined with the backend's error, if any): a
// session is never recorded incompletely in silence.
func (r *Recorder) Generate(ctx context.Context, req backend.Request, onChunk func(string) error) (backend.Response, error) {
	e := &entry{Type: typeGenerate, Request: toWireRequest(req)}
	var cbErr error
	resp, err := r.inner.Generate(ctx, req, func(s string) error {
		e.Chunks = append(e.Chunks, s)
		if onChunk == nil {
			return nil
		}
		if cerr := onChunk(s); cerr != nil {
			cbErr = cerr
			return cerr
		}
		return nil
	})
	e.Response = toWireResponse(resp)
	e.Error = toWireError(err)
	if err != nil && cbErr != nil && errors.Is(err, cbErr) {
		e.Error.Callback, e.Error.AfterChunk = true, len(e.Chunks)
	}
	if werr := r.write(e); werr != nil {
		return resp, errors.Join(err, werr)
	}
	return resp, err
}

// ContextSize passes the call on when the recorded backend is a
// backend.ContextSizer, and records it either way.
func (r *Recorder) ContextSize(ctx context.Context, model string) (int, error) {
	var n int
	var err error
	if cs, ok := r.inner.(backend.ContextSizer); ok {
		n, err = cs.ContextSize(ctx, model)
	} else {
		err = &backend.Error{Kind: backend.KindUnsupported, Backend: "replay", Message: "the recorded backend does not report a context size"}
	}
	if werr := r.write(&entry{Type: typeContextSize, Model: model, Result: n, Error: toWireError(err)}); werr != nil {
		return n, errors.Join(err, werr)
	}
	return n, err
}

// CountTokens passes the call on when the recorded backend is a
// backend.TokenCounter, and records it either way.
func (r *Recorder) CountTokens(ctx context.Context, model, text string) (int, error) {
	var n int
	var err error
	if tc, ok := r.inner.(backend.TokenCounter); ok {
		n, err = tc.CountTokens(ctx, model, text)
	} else {
		err = &backend.Error{Kind: backend.KindUnsupported, Backend: "replay", Message: "the recorded backend does not count tokens"}
	}
	if werr := r.write(&entry{Type: typeCountTokens, Model: model, Text: text, Result: n, Error: toWireError(err)}); werr != nil {
		return n, errors.Join(err, werr)
	}
	return n, err
}

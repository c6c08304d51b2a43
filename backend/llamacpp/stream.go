package llamacpp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/toolharness/toolharness/backend"
	"github.com/toolharness/toolharness/chat"
)

// errStall is the cancel cause set when the server stays silent past the
// stall timeout, told apart from the caller's own cancellation.
var errStall = errors.New("llamacpp: no data within the stall timeout")

// maxErrorBody bounds how much of an error answer is read.
const maxErrorBody = 64 << 10

// watchdog cancels a request when no byte arrives for d.
type watchdog struct {
	t *time.Timer
	d time.Duration
}

func newWatchdog(d time.Duration, cancel context.CancelCauseFunc) *watchdog {
	return &watchdog{d: d, t: time.AfterFunc(d, func() { cancel(errStall) })}
}

func (w *watchdog) kick() { w.t.Reset(w.d) }
func (w *watchdog) stop() { w.t.Stop() }

// stallReader kicks the watchdog on every read that returned data.
type stallReader struct {
	r io.Reader
	w *watchdog
}

func (s stallReader) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	if n > 0 {
		s.w.kick()
	}
	return n, err
}

// call is one HTTP exchange guarded by the stall watchdog.
type call struct {
	ctx    context.Context // the caller's
	rctx   context.Context // the request's: caller's plus stall cancel
	cancel context.CancelCauseFunc
	dog    *watchdog
}

func (c *Client) newCall(ctx context.Context) *call {
	rctx, cancel := context.WithCancelCause(ctx)
	return &call{ctx: ctx, rctx: rctx, cancel: cancel, dog: newWatchdog(c.cfg.StallTimeout, cancel)}
}

func (k *call) close() {
	k.dog.stop()
	k.cancel(nil)
}

// fail classifies a transport error: the caller's cancellation, a stall,
// or (before any answer) an unreachable server / (during one) a cut.
func (k *call) fail(err error, answered, consumed bool) *backend.Error {
	e := &backend.Error{Backend: Name, Consumed: consumed, Err: err}
	switch {
	case k.ctx.Err() != nil:
		e.Kind, e.Err = backend.KindCanceled, k.ctx.Err()
	case errors.Is(context.Cause(k.rctx), errStall):
		e.Kind, e.Err = backend.KindStalled, errStall
	case answered:
		e.Kind = backend.KindStreamCut
	default:
		e.Kind = backend.KindUnreachable
	}
	return e
}

// do sends one request and returns the answer when its status is 2xx.
func (c *Client) do(k *call, method, path string, body any) (*http.Response, error) {
	var rd io.Reader
	if body != nil {
		b, err := chat.Marshal(body)
		if err != nil {
			return nil, fmt.Errorf("llamacpp: encode %s body: %w", path, err)
		}
		rd = bytes.NewReader(b)
	}
	hreq, err := http.NewRequestWithContext(k.rctx, method, c.cfg.BaseURL+path, rd)
	if err != nil {
		return nil, fmt.Errorf("llamacpp: %s %s: %w", method, path, err)
	}
	if body != nil {
		hreq.Header.Set("Content-Type", "application/json")
	}
	if c.cfg.APIKey != "" {
		hreq.Header.Set("Authorization", "Bearer "+c.cfg.APIKey)
	}
	resp, err := c.http.Do(hreq)
	if err != nil {
		return nil, k.fail(err, false, false)
	}
	if resp.StatusCode >= 300 {
		defer resp.Body.Close()
		b, rerr := io.ReadAll(io.LimitReader(stallReader{resp.Body, k.dog}, maxErrorBody))
		if rerr != nil {
			return nil, k.fail(rerr, true, false)
		}
		return nil, statusError(resp.StatusCode, b)
	}
	return resp, nil
}

// statusError turns a non-2xx answer into a *backend.Error carrying the
// server's own message.
func statusError(status int, body []byte) *backend.Error {
	e := &backend.Error{Kind: backend.KindServer, Backend: Name, Status: status}
	var env errorEnvelope
	if json.Unmarshal(body, &env) == nil && env.Error != nil && env.Error.Message != "" {
		e.Message = env.Error.Message
		e.Kind = kindOfType(env.Error.Type, status)
		return e
	}
	e.Message = strings.TrimSpace(string(body))
	if len(e.Message) > 300 {
		e.Message = e.Message[:300] + "…"
	}
	if e.Message == "" {
		e.Message = http.StatusText(status)
	}
	return e
}

// kindOfType maps llama-server's error type onto a Kind the caller can
// branch on. exceed_context_size_error is not in the README excerpt; it is
// the type newer servers give a prompt longer than the context.
func kindOfType(typ string, status int) backend.Kind {
	switch {
	case typ == "exceed_context_size_error":
		return backend.KindContextOverflow
	case typ == "not_supported_error" || status == http.StatusNotImplemented:
		return backend.KindUnsupported
	}
	return backend.KindServer
}

// complete runs one /completion exchange, streamed or not.
func (c *Client) complete(ctx context.Context, body completionRequest, onChunk func(string) error) (backend.Response, error) {
	start := time.Now()
	k := c.newCall(ctx)
	defer k.close()
	hresp, err := c.do(k, http.MethodPost, "/completion", body)
	if err != nil {
		return backend.Response{}, err
	}
	defer hresp.Body.Close()
	r := stallReader{hresp.Body, k.dog}
	var resp backend.Response
	// A server that answers a streamed request with one JSON document (an
	// error, or a build that does not stream) is read as a whole answer.
	if body.Stream && !strings.HasPrefix(hresp.Header.Get("Content-Type"), "application/json") {
		err = c.readStream(k, r, start, &resp, onChunk)
	} else {
		err = c.readWhole(k, r, start, &resp, onChunk)
	}
	resp.Usage.Total = time.Since(start)
	return resp, err
}

// deliver hands text to the callback and appends it to resp.
func deliver(text string, start time.Time, resp *backend.Response, onChunk func(string) error) error {
	if text == "" {
		return nil
	}
	if resp.Usage.TimeToFirstChunk == 0 {
		resp.Usage.TimeToFirstChunk = time.Since(start)
	}
	resp.Text += text
	if onChunk != nil {
		return onChunk(text)
	}
	return nil
}

// finish copies the summary of the final chunk into resp.
func finish(last *completionChunk, resp *backend.Response) {
	ttfc := resp.Usage.TimeToFirstChunk
	resp.Usage = last.usage()
	resp.Usage.TimeToFirstChunk = ttfc
	resp.StopReason = last.stopReason()
}

func (c *Client) readWhole(k *call, r io.Reader, start time.Time, resp *backend.Response, onChunk func(string) error) error {
	b, err := io.ReadAll(r)
	if err != nil {
		return k.fail(err, true, false)
	}
	var last completionChunk
	if err := json.Unmarshal(b, &last); err != nil {
		return &backend.Error{Kind: backend.KindBadResponse, Backend: Name, Err: fmt.Errorf("decode /completion answer: %w", err)}
	}
	if last.Error != nil {
		return &backend.Error{Kind: kindOfType(last.Error.Type, last.Error.Code), Backend: Name, Status: last.Error.Code, Message: last.Error.Message}
	}
	if err := deliver(last.Content, start, resp, onChunk); err != nil {
		return err
	}
	finish(&last, resp)
	return nil
}

// readStream reads the SSE stream: "data: {json}" lines, events separated
// by a blank line; a line without its newline is never read as a line. The stream is complete only once a chunk says stop=true;
// anything else ending it is a cut.
func (c *Client) readStream(k *call, r io.Reader, start time.Time, resp *backend.Response, onChunk func(string) error) error {
	br := bufio.NewReaderSize(r, 64<<10)
	var data []byte
	pending := false
	n := 0 // events seen, for error messages
	handle := func() (done bool, err error) {
		payload := bytes.TrimSpace(data)
		data, pending = data[:0], false
		if len(payload) == 0 || bytes.Equal(payload, []byte("[DONE]")) {
			return false, nil
		}
		n++
		var ch completionChunk
		if err := json.Unmarshal(payload, &ch); err != nil {
			return false, &backend.Error{Kind: backend.KindBadResponse, Backend: Name, Consumed: resp.Text != "",
				Err: fmt.Errorf("decode stream event %d: %w (%.80q)", n, err, payload)}
		}
		if ch.Error != nil {
			return false, &backend.Error{Kind: kindOfType(ch.Error.Type, ch.Error.Code), Backend: Name,
				Status: ch.Error.Code, Message: ch.Error.Message, Consumed: resp.Text != ""}
		}
		if err := deliver(ch.Content, start, resp, onChunk); err != nil {
			return false, err
		}
		if ch.Stop {
			finish(&ch, resp)
			return true, nil
		}
		return false, nil
	}
	for {
		line, err := br.ReadBytes('\n')
		if err == nil {
			trimmed := bytes.TrimRight(line, "\r\n")
			switch {
			case len(trimmed) == 0:
				if pending {
					if done, herr := handle(); herr != nil || done {
						return herr
					}
				}
			case bytes.HasPrefix(trimmed, []byte("data:")), bytes.HasPrefix(trimmed, []byte("error:")):
				// Some server versions send a failure as an "error:" line
				// holding the same JSON error object.
				field, value, _ := bytes.Cut(trimmed, []byte(":"))
				value = bytes.TrimPrefix(value, []byte(" "))
				if string(field) == "error" && !isErrorEnvelope(value) {
					data = append(data[:0], `{"error":`...)
					data = append(data, value...)
					data = append(data, '}')
				} else {
					if pending {
						data = append(data, '\n')
					}
					data = append(data, value...)
				}
				pending = true
			}
		}
		if err != nil {
			// An event not closed by a blank line is incomplete (the SSE
			// rule): the stream was cut inside it.
			consumed := resp.Text != ""
			if err == io.EOF {
				return &backend.Error{Kind: backend.KindStreamCut, Backend: Name, Consumed: consumed,
					Message: fmt.Sprintf("stream ended after %d events without a final stop event", n)}
			}
			return k.fail(err, true, consumed)
		}
	}
}

func isErrorEnvelope(b []byte) bool {
	var env errorEnvelope
	return json.Unmarshal(b, &env) == nil && env.Error != nil
}

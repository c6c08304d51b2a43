package llamacpp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/toolharness/toolharness/backend"
	"github.com/toolharness/toolharness/backend/internal/transport"
	"github.com/toolharness/toolharness/chat"
)

// fail classifies a transport error: the caller's cancellation, a stall,
// or (before any answer) an unreachable server / (during one) a cut.
func fail(w *transport.Watchdog, err error, answered, consumed bool) *backend.Error {
	kind := backend.KindUnreachable
	if answered {
		kind = backend.KindStreamCut
	}
	return w.Fail(err, kind, consumed)
}

// do sends one request and returns the answer when its status is 2xx.
// An idempotent request (one that generates nothing: /tokenize,
// /detokenize, /props, …) is marked so that net/http sends it again on a
// fresh connection when the server closed the idle one it was written
// to; net/http never does that for a POST on its own.
func (c *Client) do(k *transport.Watchdog, method, path string, body any, idempotent bool) (*http.Response, error) {
	var rd io.Reader
	if body != nil {
		b, err := chat.Marshal(body)
		if err != nil {
			return nil, fmt.Errorf("llamacpp: encode %s body: %w", path, err)
		}
		rd = bytes.NewReader(b)
	}
	hreq, err := http.NewRequestWithContext(k.Context(), method, c.cfg.BaseURL+path, rd)
	if err != nil {
		return nil, fmt.Errorf("llamacpp: %s %s: %w", method, path, err)
	}
	if body != nil {
		hreq.Header.Set("Content-Type", "application/json")
	}
	if c.cfg.APIKey != "" {
		hreq.Header.Set("Authorization", "Bearer "+c.cfg.APIKey)
	}
	if idempotent {
		// Present but never sent (a nil value): net/http's own test for a
		// request it may replay.
		hreq.Header["Idempotency-Key"] = nil
	}
	resp, err := c.http.Do(hreq)
	if err != nil {
		return nil, fail(k, err, false, false)
	}
	if resp.StatusCode >= 300 {
		defer resp.Body.Close()
		b, rerr := transport.ReadErrorBody(k, resp.Body)
		if rerr != nil {
			return nil, fail(k, rerr, true, false)
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

// answer is a /completion answer as read: the response and, in the order
// they came, the ids of each piece of text.
type answer struct {
	backend.Response
	pieces []idPiece
}

// idPiece is the ids one event carried and where the text it carried
// ends in the whole text. A streamed token that ends inside a UTF-8
// character gets no event: its bytes come with the next event, whose ids
// are then fewer than its text.
type idPiece struct {
	end int
	ids []int
}

// complete runs one /completion exchange, streamed or not.
func (c *Client) complete(ctx context.Context, body completionRequest, onChunk func(string) error) (answer, error) {
	start := time.Now()
	k := transport.Watch(ctx, Name, c.cfg.StallTimeout)
	defer k.Stop()
	hresp, err := c.do(k, http.MethodPost, "/completion", body, false)
	if err != nil {
		return answer{}, err
	}
	defer hresp.Body.Close()
	r := k.Reader(hresp.Body)
	out := transport.NewDelivery(start, onChunk)
	var resp answer
	// A server that answers a streamed request with one JSON document (an
	// error, or a build that does not stream) is read as a whole answer.
	if body.Stream && !strings.HasPrefix(hresp.Header.Get("Content-Type"), "application/json") {
		err = c.readStream(k, r, out, &resp)
	} else {
		err = c.readWhole(k, r, out, &resp)
	}
	resp.Text, resp.Usage.TimeToFirstChunk = out.Text(), out.FirstChunk()
	resp.Usage.Total = time.Since(start)
	if cause, ok := transport.CallbackCause(err); ok {
		err = cause // the caller's own error, returned as it is
	}
	return resp, err
}

// finish copies the summary of the final chunk into resp (complete adds
// the client-measured times).
func finish(last *completionChunk, resp *backend.Response) {
	resp.Usage = last.usage()
	resp.StopReason = last.stopReason()
	resp.StopSequence = last.stopSequence()
}

func (c *Client) readWhole(k *transport.Watchdog, r io.Reader, out *transport.Delivery, resp *answer) error {
	b, err := io.ReadAll(r)
	if err != nil {
		return fail(k, err, true, false)
	}
	var last completionChunk
	if err := json.Unmarshal(b, &last); err != nil {
		return &backend.Error{Kind: backend.KindBadResponse, Backend: Name, Err: fmt.Errorf("decode /completion answer: %w", err)}
	}
	if last.Error != nil {
		return &backend.Error{Kind: kindOfType(last.Error.Type, last.Error.Code), Backend: Name, Status: last.Error.Code, Message: last.Error.Message}
	}
	if err := out.Send(last.Content); err != nil {
		return err
	}
	resp.Tokens = last.Tokens
	resp.pieces = []idPiece{{end: len(last.Content), ids: last.Tokens}}
	finish(&last, &resp.Response)
	return nil
}

// readStream reads the SSE stream: "data: {json}" lines, events separated
// by a blank line; a line without its newline is never read as a line. The stream is complete only once a chunk says stop=true;
// anything else ending it is a cut.
func (c *Client) readStream(k *transport.Watchdog, r io.Reader, out *transport.Delivery, resp *answer) error {
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
			return false, &backend.Error{Kind: backend.KindBadResponse, Backend: Name, Consumed: out.Consumed(),
				Err: fmt.Errorf("decode stream event %d: %w (%.80q)", n, err, payload)}
		}
		if ch.Error != nil {
			return false, &backend.Error{Kind: kindOfType(ch.Error.Type, ch.Error.Code), Backend: Name,
				Status: ch.Error.Code, Message: ch.Error.Message, Consumed: out.Consumed()}
		}
		if err := out.Send(ch.Content); err != nil {
			return false, err
		}
		resp.Tokens = append(resp.Tokens, ch.Tokens...)
		if len(ch.Tokens) > 0 {
			resp.pieces = append(resp.pieces, idPiece{end: len(out.Text()), ids: ch.Tokens})
		}
		if ch.Stop {
			finish(&ch, &resp.Response)
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
			consumed := out.Consumed()
			if err == io.EOF {
				return &backend.Error{Kind: backend.KindStreamCut, Backend: Name, Consumed: consumed,
					Message: fmt.Sprintf("stream ended after %d events without a final stop event", n)}
			}
			return fail(k, err, true, consumed)
		}
	}
}

func isErrorEnvelope(b []byte) bool {
	var env errorEnvelope
	return json.Unmarshal(b, &env) == nil && env.Error != nil
}

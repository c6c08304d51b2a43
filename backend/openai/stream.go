package openai

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"time"

	"github.com/toolharness/toolharness/backend"
)

// chunk is one streamed event of either endpoint.
type chunk struct {
	Choices []struct {
		Text  string `json:"text"` // /completions
		Delta struct {
			Content string `json:"content"`
		} `json:"delta"` // /chat/completions
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens        int `json:"prompt_tokens"`
		CompletionTokens    int `json:"completion_tokens"`
		PromptTokensDetails *struct {
			CachedTokens *int `json:"cached_tokens"`
		} `json:"prompt_tokens_details"`
	} `json:"usage"`
	Error json.RawMessage `json:"error"`
}

// applyUsage copies the chunk's usage, if any, into u. The last usage seen
// wins: Ollama puts a zero usage on every /v1/completions chunk and the
// real one on the last.
func (c *chunk) applyUsage(u *backend.Usage) {
	if c.Usage == nil {
		return
	}
	u.PromptTokens = c.Usage.PromptTokens
	u.GeneratedTokens = c.Usage.CompletionTokens
	if d := c.Usage.PromptTokensDetails; d != nil && d.CachedTokens != nil {
		u.CachedTokens, u.CachedKnown = *d.CachedTokens, true
	}
}

// once runs one attempt.
func (b *Backend) once(ctx context.Context, path string, body []byte, onChunk func(string) error) (backend.Response, error) {
	var (
		resp     backend.Response
		text     strings.Builder
		consumed bool
		start    = time.Now()
	)
	sctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	watchdog := time.AfterFunc(b.cfg.StallTimeout, func() { cancel(errStall) })
	defer watchdog.Stop()
	fail := func(err error) (backend.Response, error) {
		resp.Text = text.String()
		resp.Usage.Total = time.Since(start)
		if e := (*backend.Error)(nil); errors.As(err, &e) {
			e.Consumed = consumed
		}
		return resp, err
	}

	hreq, err := http.NewRequestWithContext(sctx, http.MethodPost, b.base+path, bytes.NewReader(body))
	if err != nil {
		return fail(fmt.Errorf("openai: %w", err))
	}
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set("Accept", "text/event-stream")
	if b.cfg.APIKey != "" {
		hreq.Header.Set("Authorization", "Bearer "+b.cfg.APIKey)
	}
	hresp, err := b.cfg.HTTPClient.Do(hreq)
	if err != nil {
		return fail(classify(err, ctx, sctx))
	}
	defer hresp.Body.Close()
	if hresp.StatusCode/100 != 2 {
		data, _ := io.ReadAll(io.LimitReader(hresp.Body, 64<<10))
		return fail(&backend.Error{Kind: backend.KindServer, Backend: name, Status: hresp.StatusCode, Message: serverMessage(data)})
	}

	finished, sawDone := false, false
	err = readEvents(hresp.Body, func(data []byte) error {
		watchdog.Reset(b.cfg.StallTimeout)
		if string(bytes.TrimSpace(data)) == "[DONE]" {
			sawDone = true
			return io.EOF
		}
		var c chunk
		if err := json.Unmarshal(data, &c); err != nil {
			return &backend.Error{Kind: backend.KindBadResponse, Backend: name, Message: fmt.Sprintf("event %.200q", data), Err: err}
		}
		if len(c.Error) > 0 && string(c.Error) != "null" {
			return &backend.Error{Kind: backend.KindServer, Backend: name, Message: serverMessage(data)}
		}
		c.applyUsage(&resp.Usage)
		for _, ch := range c.Choices {
			piece := ch.Text + ch.Delta.Content
			if piece != "" {
				if resp.Usage.TimeToFirstChunk == 0 {
					resp.Usage.TimeToFirstChunk = time.Since(start)
				}
				text.WriteString(piece)
				consumed = true
				if onChunk != nil {
					if err := onChunk(piece); err != nil {
						return errCallback{err}
					}
				}
			}
			if ch.FinishReason != nil && *ch.FinishReason != "" {
				finished, resp.StopReason = true, *ch.FinishReason
			}
		}
		return nil
	})
	var cb errCallback
	switch {
	case errors.As(err, &cb):
		resp.Text = text.String()
		resp.Usage.Total = time.Since(start)
		return resp, cb.err
	case err != nil && !errors.Is(err, io.EOF):
		var be *backend.Error
		if errors.As(err, &be) {
			return fail(be)
		}
		return fail(classify(err, ctx, sctx))
	case !sawDone && !finished:
		return fail(&backend.Error{Kind: backend.KindStreamCut, Backend: name,
			Message: fmt.Sprintf("stream ended after %d bytes without finish_reason or [DONE]", text.Len())})
	}
	resp.Text = text.String()
	resp.Usage.Total = time.Since(start)
	return resp, nil
}

// errCallback marks an error returned by onChunk, returned unchanged.
type errCallback struct{ err error }

func (e errCallback) Error() string { return e.err.Error() }

// readEvents calls fn with the data of each server-sent event (data lines
// joined by newlines, dispatched at a blank line or at the end). It
// returns fn's error, the read error, or nil at the end of the body.
func readEvents(r io.Reader, fn func(data []byte) error) error {
	br := bufio.NewReader(r)
	var data []byte
	have := false
	dispatch := func() error {
		if !have {
			return nil
		}
		d := data
		data, have = nil, false
		return fn(d)
	}
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			line = bytes.TrimRight(line, "\r\n")
			switch {
			case len(line) == 0:
				if derr := dispatch(); derr != nil {
					return derr
				}
			case bytes.HasPrefix(line, []byte("data:")):
				v := bytes.TrimPrefix(bytes.TrimPrefix(line, []byte("data:")), []byte(" "))
				if have {
					data = append(data, '\n')
				}
				data, have = append(data, v...), true
			}
			// Comments (":"), event:, id: and retry: lines carry nothing here.
		}
		if err == io.EOF {
			return dispatch()
		}
		if err != nil {
			return err
		}
	}
}

// serverMessage digs the message out of an error body: OpenAI's
// {"error":{"message"}}, {"error":"..."}, vLLM's {"message"}, FastAPI's
// {"detail"}; else the body itself.
func serverMessage(data []byte) string {
	var v struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
		Detail  json.RawMessage `json:"detail"`
	}
	if json.Unmarshal(data, &v) == nil {
		var nested struct {
			Message string `json:"message"`
		}
		var s string
		switch {
		case json.Unmarshal(v.Error, &nested) == nil && nested.Message != "":
			return nested.Message
		case json.Unmarshal(v.Error, &s) == nil && s != "":
			return s
		case v.Message != "":
			return v.Message
		case json.Unmarshal(v.Detail, &s) == nil && s != "":
			return s
		}
	}
	return strings.TrimSpace(string(data))
}

// classify turns a transport error into a *backend.Error.
func classify(err error, parent, sctx context.Context) error {
	e := &backend.Error{Backend: name, Err: err}
	switch {
	case context.Cause(sctx) == errStall && parent.Err() == nil:
		e.Kind, e.Err = backend.KindStalled, errStall
	case parent.Err() != nil:
		e.Kind, e.Err = backend.KindCanceled, parent.Err()
	case isDialError(err):
		e.Kind = backend.KindUnreachable
	default:
		// The connection was made, then lost (server killed, reset).
		e.Kind = backend.KindStreamCut
	}
	return e
}

func isDialError(err error) bool {
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return true
	}
	var dns *net.DNSError
	return errors.As(err, &dns) || errors.Is(err, syscall.ECONNREFUSED)
}

package openai

import (
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
	"github.com/toolharness/toolharness/backend/internal/chatwire"
	"github.com/toolharness/toolharness/backend/internal/transport"
)

// chunk is one streamed event of either endpoint.
type chunk struct {
	Choices []struct {
		Text  string `json:"text"` // /completions
		Delta struct {
			Content string `json:"content"`
		} `json:"delta"` // /chat/completions
		FinishReason *string `json:"finish_reason"`
		// StopReason is vLLM's: the stop string that ended the choice, a
		// token id for a stop token, null otherwise.
		StopReason json.RawMessage `json:"stop_reason"`
	} `json:"choices"`
	Usage *chatwire.Usage `json:"usage"`
	// Timings is llama-server's extension on its final events: cache_n is
	// the reused prompt prefix, prompt_n the tokens evaluated anew. Builds
	// before prompt_tokens_details.cached_tokens (llama.cpp PR #19361)
	// send only this.
	Timings *struct {
		CacheN  *int `json:"cache_n"`
		PromptN *int `json:"prompt_n"`
	} `json:"timings"`
	Error json.RawMessage `json:"error"`
}

// applyUsage copies the chunk's usage, if any, into u. The last usage seen
// wins: Ollama puts a zero usage on every /v1/completions chunk and the
// real one on the last (chatwire.ApplyUsage says which figure is the
// reused prefix).
func (c *chunk) applyUsage(u *backend.Usage) {
	var cacheN, promptN *int
	if t := c.Timings; t != nil {
		cacheN, promptN = t.CacheN, t.PromptN
	}
	chatwire.ApplyUsage(u, c.Usage, cacheN, promptN)
}

// once runs one attempt.
func (b *Backend) once(ctx context.Context, path string, body []byte, onChunk func(string) error) (backend.Response, error) {
	var (
		resp  backend.Response
		start = time.Now()
		out   = transport.NewDelivery(start, onChunk)
	)
	watchdog := transport.Watch(ctx, name, b.cfg.StallTimeout)
	defer watchdog.Stop()
	// done fills in what was delivered; every return goes through it.
	done := func(err error) (backend.Response, error) {
		resp.Text, resp.Usage.TimeToFirstChunk = out.Text(), out.FirstChunk()
		resp.Usage.Total = time.Since(start)
		if e := (*backend.Error)(nil); errors.As(err, &e) {
			e.Consumed = out.Consumed()
		}
		return resp, err
	}

	hreq, err := http.NewRequestWithContext(watchdog.Context(), http.MethodPost, b.base+path, bytes.NewReader(body))
	if err != nil {
		return done(fmt.Errorf("openai: %w", err))
	}
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set("Accept", "text/event-stream")
	if b.cfg.APIKey != "" {
		hreq.Header.Set("Authorization", "Bearer "+b.cfg.APIKey)
	}
	hresp, err := b.cfg.HTTPClient.Do(hreq)
	if err != nil {
		return done(classify(err, watchdog))
	}
	defer hresp.Body.Close()
	if hresp.StatusCode/100 != 2 {
		data, _ := transport.ReadErrorBody(watchdog, hresp.Body)
		return done(&backend.Error{Kind: backend.KindServer, Backend: name, Status: hresp.StatusCode, Message: serverMessage(data)})
	}

	finished, sawDone := false, false
	err = chatwire.ReadEvents(hresp.Body, func(data []byte) error {
		watchdog.Kick()
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
			if err := out.Send(ch.Text + ch.Delta.Content); err != nil {
				return err
			}
			if ch.FinishReason != nil && *ch.FinishReason != "" {
				finished, resp.StopReason = true, *ch.FinishReason
				resp.StopSequence = stopString(ch.StopReason)
			}
		}
		return nil
	})
	if cause, ok := transport.CallbackCause(err); ok {
		// The caller's own error, returned as it is.
		resp, _ = done(nil)
		return resp, cause
	}
	switch {
	case err != nil && !errors.Is(err, io.EOF):
		var be *backend.Error
		if errors.As(err, &be) {
			return done(be)
		}
		return done(classify(err, watchdog))
	case !sawDone && !finished:
		return done(&backend.Error{Kind: backend.KindStreamCut, Backend: name,
			Message: fmt.Sprintf("stream ended after %d bytes without finish_reason or [DONE]", out.Len())})
	}
	return done(nil)
}

// stopString is the stop string in a choice's stop_reason, "" when it is
// absent, null or a token id (a stop token is not a stop sequence).
func stopString(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return ""
	}
	return s
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

// classify turns a transport error into a *backend.Error: unreachable
// when the server was never reached, else a connection made, then lost
// (server killed, reset). fail sets Consumed.
func classify(err error, w *transport.Watchdog) error {
	kind := backend.KindStreamCut
	if backend.IsDial(err) {
		kind = backend.KindUnreachable
	}
	return w.Fail(err, kind, false)
}

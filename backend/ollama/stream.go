package ollama

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"time"

	"github.com/ollama/ollama/api"

	"github.com/toolharness/toolharness/backend"
	"github.com/toolharness/toolharness/backend/internal/transport"
)

// once runs one attempt.
func (b *Backend) once(ctx context.Context, req backend.Request, p plan, onChunk func(string) error) (backend.Response, error) {
	var (
		resp      = backend.Response{Notes: p.notes}
		done      bool
		firstCall time.Duration // first message with calls (server mode)
		start     = time.Now()
		out       = transport.NewDelivery(start, onChunk)
	)
	watchdog := transport.Watch(ctx, name, b.cfg.StallTimeout)
	defer watchdog.Stop()
	sctx := watchdog.Context()

	// chunk handles one streamed piece; both endpoints end up here.
	chunk := func(piece string, isDone bool, reason string, m api.Metrics) error {
		watchdog.Kick()
		if err := out.Send(piece); err != nil {
			return err
		}
		if isDone {
			done = true
			resp.StopReason = reason
			resp.Usage.PromptTokens = m.PromptEvalCount
			resp.Usage.GeneratedTokens = m.EvalCount
			resp.Usage.PromptDuration = m.PromptEvalDuration
			resp.Usage.GenerateDuration = m.EvalDuration
			resp.Usage.Total = m.TotalDuration
		}
		return nil
	}

	stream := true
	var err error
	opts := options(req, p.numCtx)
	if req.Mode == backend.ModeRaw {
		r := &api.GenerateRequest{Model: req.Model, Prompt: p.prompt, Raw: true, Stream: &stream, Format: req.Format, Options: opts}
		err = b.client.Generate(sctx, r, func(g api.GenerateResponse) error {
			return chunk(g.Response, g.Done, g.DoneReason, g.Metrics)
		})
	} else {
		// Server mode streams to a caller with a callback: each message
		// carries content and the calls the server's parser has found so
		// far (Ollama v0.6.5 holds the content back while tools are given
		// and sends it at the end or drops it before a call, so the text
		// comes late, never wrong). A caller without one gets it whole.
		stream = req.Mode != backend.ModeServer || onChunk != nil
		r := &api.ChatRequest{Model: req.Model, Messages: p.msgs, Stream: &stream, Format: req.Format, Options: opts, Tools: p.tools}
		err = b.client.Chat(sctx, r, func(c api.ChatResponse) error {
			if len(c.Message.ToolCalls) > 0 && firstCall == 0 {
				firstCall = time.Since(start)
			}
			resp.ToolCalls = append(resp.ToolCalls, readCalls(c.Message.ToolCalls)...)
			return chunk(c.Message.Content, c.Done, c.DoneReason, c.Metrics)
		})
	}
	resp.Text, resp.Usage.TimeToFirstChunk = out.Text(), out.FirstChunk()
	if resp.Usage.TimeToFirstChunk == 0 || (firstCall > 0 && firstCall < resp.Usage.TimeToFirstChunk) {
		resp.Usage.TimeToFirstChunk = firstCall // the first output is a call (server mode)
	}
	if resp.Usage.Total == 0 {
		resp.Usage.Total = time.Since(start)
	}
	consumed := out.Consumed()
	if cause, ok := transport.CallbackCause(err); ok {
		return resp, cause
	}
	switch {
	case err != nil:
		return resp, classify(err, consumed, ctx, sctx)
	case !done:
		// The client ignores a read error at the end of the body: a stream
		// that ends without its done message was cut.
		// A canceled context (the caller's or the watchdog's) also ends up
		// here, as the read error the client drops.
		if sctx.Err() != nil {
			return resp, classify(context.Cause(sctx), consumed, ctx, sctx)
		}
		return resp, &backend.Error{Kind: backend.KindStreamCut, Backend: name, Consumed: consumed,
			Message: fmt.Sprintf("stream ended after %d bytes without a final message", out.Len())}
	}
	// Ollama truncates a prompt longer than num_ctx from the front to
	// exactly num_ctx tokens; the count gives it away afterwards.
	if resp.Usage.PromptTokens >= p.numCtx {
		return resp, &backend.Error{Kind: backend.KindContextOverflow, Backend: name, Consumed: consumed,
			Message: fmt.Sprintf("the server evaluated %d prompt tokens with num_ctx %d: it truncated the prompt", resp.Usage.PromptTokens, p.numCtx)}
	}
	return resp, nil
}

// classify turns a client error into a *backend.Error. sctx is the
// request's context, derived from parent (by a transport.Watchdog, or
// parent itself for requests without one).
func classify(err error, consumed bool, parent, sctx context.Context) error {
	if e := transport.Interrupted(name, parent, sctx, consumed); e != nil {
		return e
	}
	e := &backend.Error{Backend: name, Consumed: consumed, Err: err}
	var se api.StatusError
	var ae api.AuthorizationError
	switch {
	case errors.As(err, &se):
		e.Kind, e.Status, e.Message = backend.KindServer, se.StatusCode, se.ErrorMessage
	case errors.As(err, &ae):
		e.Kind, e.Status, e.Message = backend.KindServer, ae.StatusCode, ae.Status
	case backend.IsDial(err):
		e.Kind = backend.KindUnreachable
	case isTransportError(err):
		// The connection was made, then lost (server killed, reset).
		e.Kind = backend.KindStreamCut
	case isJSONError(err):
		e.Kind = backend.KindBadResponse
	default:
		// The client turns an {"error": "..."} line in the stream into a
		// plain error holding the server's message.
		e.Kind, e.Message = backend.KindServer, err.Error()
	}
	return e
}

func isTransportError(err error) bool {
	var op *net.OpError
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) || errors.As(err, &op)
}

func isJSONError(err error) bool {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	return errors.As(err, &syn) || errors.As(err, &typ)
}

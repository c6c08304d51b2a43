package llamacpp

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/toolharness/toolharness/backend"
	"github.com/toolharness/toolharness/backend/internal/chatwire"
	"github.com/toolharness/toolharness/backend/internal/transport"
	"github.com/toolharness/toolharness/chat"
)

// chatRequest is the body of POST /v1/chat/completions in server mode:
// the tools in the API's tools field, for the server's own template
// (--jinja) to render and its own parser to read back. Field order is the
// order the JSON is written in.
type chatRequest struct {
	Messages   []chatwire.OAIMessage `json:"messages"`
	Tools      []chat.Tool           `json:"tools,omitempty"`
	ToolChoice string                `json:"tool_choice,omitempty"`
	Parallel   *bool                 `json:"parallel_tool_calls,omitempty"`
	Stream     bool                  `json:"stream"`
	// StreamOptions asks a stream for its usage at the end.
	StreamOptions *chatwire.StreamOptions `json:"stream_options,omitempty"`
	CachePrompt   bool                    `json:"cache_prompt"`
	MaxTokens     *int                    `json:"max_tokens,omitempty"`
	Stop          []string                `json:"stop,omitempty"`
	Temperature   *float64                `json:"temperature,omitempty"`
	TopK          *int                    `json:"top_k,omitempty"`
	TopP          *float64                `json:"top_p,omitempty"`
	Seed          *int                    `json:"seed,omitempty"`
	Grammar       string                  `json:"grammar,omitempty"`
	JSONSchema    json.RawMessage         `json:"json_schema,omitempty"`
}

// generateServer runs a server-mode request. A caller with a callback
// gets the answer streamed (SSE, the content's deltas as they come, the
// calls' pieces put together); one without, or a client configured
// NonStreaming, gets it whole. The prompt is not counted before
// sending (the server's template, not the harness, makes it): a prompt
// too long for the slot is the server's exceed_context_size_error, which
// is KindContextOverflow all the same.
func (c *Client) generateServer(ctx context.Context, req backend.Request, onChunk func(string) error) (backend.Response, error) {
	msgs, notes, err := chatwire.OpenAIMessages(Name, req.Messages)
	if err != nil {
		return backend.Response{}, err
	}
	body := chatRequest{
		Messages: msgs, Tools: req.Tools, ToolChoice: req.ToolChoice, Parallel: req.ParallelToolCalls, CachePrompt: true, Stop: req.Stop,
		Temperature: req.Options.Temperature, TopK: req.Options.TopK, TopP: req.Options.TopP, Seed: req.Options.Seed,
		Grammar: req.Grammar, JSONSchema: req.Format,
	}
	if onChunk != nil && !c.cfg.NonStreaming {
		body.Stream, body.StreamOptions = true, &chatwire.StreamOptions{IncludeUsage: true}
	}
	if n := req.Options.MaxTokens; n > 0 {
		body.MaxTokens = &n
	}
	if req.Options.NumCtx > 0 {
		notes = append(notes, fmt.Sprintf("ignored the requested context window of %d tokens: llama-server's is fixed at start (its -c / --parallel)", req.Options.NumCtx))
	}
	var resp backend.Response
	err = c.retry().Do(ctx, func() error {
		var err error
		resp, err = c.chatCompletion(ctx, body, onChunk)
		return err
	})
	resp.Notes = notes
	return resp, err
}

// chatCompletion runs one /v1/chat/completions exchange, streamed when
// body says so. A server that answers a streamed request with one JSON
// document (an error) is read as a whole answer.
func (c *Client) chatCompletion(ctx context.Context, body chatRequest, onChunk func(string) error) (backend.Response, error) {
	start := time.Now()
	k := transport.Watch(ctx, Name, c.cfg.StallTimeout)
	defer k.Stop()
	hresp, err := c.do(k, http.MethodPost, "/v1/chat/completions", body, false)
	if err != nil {
		return backend.Response{}, err
	}
	defer hresp.Body.Close()
	out := transport.NewDelivery(start, onChunk)
	if body.Stream && !strings.HasPrefix(hresp.Header.Get("Content-Type"), "application/json") {
		return c.readChatStream(k, hresp.Body, start, out)
	}
	b, err := io.ReadAll(k.Reader(hresp.Body))
	if err != nil {
		return backend.Response{}, fail(k, err, true, false)
	}
	var env errorEnvelope
	if json.Unmarshal(b, &env) == nil && env.Error != nil {
		return backend.Response{}, &backend.Error{Kind: kindOfType(env.Error.Type, env.Error.Code), Backend: Name, Status: env.Error.Code, Message: env.Error.Message}
	}
	var comp chatwire.Completion
	if err := json.Unmarshal(b, &comp); err != nil {
		return backend.Response{}, &backend.Error{Kind: backend.KindBadResponse, Backend: Name, Err: fmt.Errorf("decode /v1/chat/completions answer: %w", err)}
	}
	resp, err := comp.Response(Name)
	resp.Usage.Total = time.Since(start)
	resp.Usage.TimeToFirstChunk = resp.Usage.Total
	if err == nil {
		err = out.Send(resp.Text)
	}
	if cause, ok := transport.CallbackCause(err); ok {
		err = cause // the caller's own error, returned as it is
	}
	return resp, err
}

// readChatStream reads a streamed server-mode answer (chatwire.ChatStream);
// a mid-stream error event is the server's error in its own shape.
func (c *Client) readChatStream(k *transport.Watchdog, body io.Reader, start time.Time, out *transport.Delivery) (backend.Response, error) {
	s := chatwire.NewChatStream(Name, start, out, func(data []byte) error {
		var env errorEnvelope
		if json.Unmarshal(data, &env) != nil || env.Error == nil {
			return &backend.Error{Kind: backend.KindBadResponse, Backend: Name, Consumed: out.Consumed(), Message: fmt.Sprintf("error event %.200q", data)}
		}
		return &backend.Error{Kind: kindOfType(env.Error.Type, env.Error.Code), Backend: Name, Status: env.Error.Code,
			Message: env.Error.Message, Consumed: out.Consumed()}
	})
	return s.Read(k, body)
}

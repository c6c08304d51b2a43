package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/toolharness/toolharness/backend"
	"github.com/toolharness/toolharness/backend/internal/chatwire"
	"github.com/toolharness/toolharness/backend/internal/transport"
	"github.com/toolharness/toolharness/chat"
)

// serverRequest is the body of /chat/completions in server mode: the
// tools in the API's tools field, for the server's own template and
// parser.
type serverRequest struct {
	Model          string                  `json:"model"`
	Messages       []chatwire.OAIMessage   `json:"messages"`
	Tools          []chat.Tool             `json:"tools,omitempty"`
	ToolChoice     string                  `json:"tool_choice,omitempty"`
	Parallel       *bool                   `json:"parallel_tool_calls,omitempty"`
	Stream         bool                    `json:"stream"`
	StreamOptions  *chatwire.StreamOptions `json:"stream_options,omitempty"`
	MaxTokens      int                     `json:"max_tokens,omitempty"`
	Temperature    *float64                `json:"temperature,omitempty"`
	TopP           *float64                `json:"top_p,omitempty"`
	TopK           *int                    `json:"top_k,omitempty"`
	Seed           *int                    `json:"seed,omitempty"`
	Stop           []string                `json:"stop,omitempty"`
	ResponseFormat *responseFormat         `json:"response_format,omitempty"`
}

// serverBody builds the body of a server-mode request, streamed when
// stream is set.
func (b *Backend) serverBody(req backend.Request, stream bool) ([]byte, []string, error) {
	msgs, notes, err := chatwire.OpenAIMessages(name, req.Messages)
	if err != nil {
		return nil, nil, err
	}
	w := serverRequest{
		Model: req.Model, Messages: msgs, Tools: req.Tools, ToolChoice: req.ToolChoice, Parallel: req.ParallelToolCalls,
		MaxTokens: req.Options.MaxTokens, Temperature: req.Options.Temperature, TopP: req.Options.TopP,
		TopK: req.Options.TopK, Seed: req.Options.Seed, Stop: req.Stop,
	}
	if stream {
		w.Stream, w.StreamOptions = true, &chatwire.StreamOptions{IncludeUsage: true}
	}
	if len(req.Format) > 0 {
		if b.cfg.Quirks.NoSchemaChat {
			return nil, nil, &backend.Error{Kind: backend.KindUnsupported, Backend: name, Message: "this server ignores response_format on /chat/completions: output cannot be constrained"}
		}
		w.ResponseFormat = &responseFormat{Type: "json_schema", JSONSchema: jsonSchema{Name: "output", Schema: req.Format, Strict: true}}
	}
	data, err := chat.Marshal(w)
	if err != nil {
		return nil, nil, fmt.Errorf("openai: encode request: %w", err)
	}
	return data, notes, nil
}

// serverOnce runs one server-mode exchange: streamed (SSE, the
// content's deltas to the callback as they come, the calls' pieces put
// together) when stream is set, else whole, the content then reaching
// the callback as one chunk.
func (b *Backend) serverOnce(ctx context.Context, body []byte, stream bool, onChunk func(string) error) (backend.Response, error) {
	start := time.Now()
	watchdog := transport.Watch(ctx, name, b.cfg.StallTimeout)
	defer watchdog.Stop()
	hreq, err := http.NewRequestWithContext(watchdog.Context(), http.MethodPost, b.base+"/chat/completions", bytes.NewReader(body))
	if err != nil {
		return backend.Response{}, fmt.Errorf("openai: %w", err)
	}
	hreq.Header.Set("Content-Type", "application/json")
	if stream {
		hreq.Header.Set("Accept", "text/event-stream")
	}
	if b.cfg.APIKey != "" {
		hreq.Header.Set("Authorization", "Bearer "+b.cfg.APIKey)
	}
	hresp, err := b.cfg.HTTPClient.Do(hreq)
	if err != nil {
		return backend.Response{}, classify(err, watchdog)
	}
	defer hresp.Body.Close()
	if hresp.StatusCode/100 != 2 {
		data, _ := transport.ReadErrorBody(watchdog, hresp.Body)
		return backend.Response{}, &backend.Error{Kind: backend.KindServer, Backend: name, Status: hresp.StatusCode, Message: serverMessage(data)}
	}
	out := transport.NewDelivery(start, onChunk)
	if stream {
		return serverStream(watchdog, hresp.Body, start, out)
	}
	data, err := io.ReadAll(watchdog.Reader(hresp.Body))
	if err != nil {
		return backend.Response{}, watchdog.Fail(err, backend.KindStreamCut, false)
	}
	var probe struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(data, &probe) == nil && len(probe.Error) > 0 && string(probe.Error) != "null" {
		return backend.Response{}, &backend.Error{Kind: backend.KindServer, Backend: name, Message: serverMessage(data)}
	}
	var comp chatwire.Completion
	if err := json.Unmarshal(data, &comp); err != nil {
		return backend.Response{}, &backend.Error{Kind: backend.KindBadResponse, Backend: name, Message: fmt.Sprintf("answer %.200q", data), Err: err}
	}
	resp, err := comp.Response(name)
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

// serverStream reads a streamed server-mode answer (chatwire.ChatStream).
func serverStream(watchdog *transport.Watchdog, body io.Reader, start time.Time, out *transport.Delivery) (backend.Response, error) {
	s := chatwire.NewChatStream(name, start, out, func(data []byte) error {
		return &backend.Error{Kind: backend.KindServer, Backend: name, Message: serverMessage(data), Consumed: out.Consumed()}
	})
	return s.Read(watchdog, body)
}

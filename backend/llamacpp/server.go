package llamacpp

import (
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

// chatRequest is the body of POST /v1/chat/completions in server mode:
// the tools in the API's tools field, for the server's own template
// (--jinja) to render and its own parser to read back. Field order is the
// order the JSON is written in.
type chatRequest struct {
	Messages    []chatwire.OAIMessage `json:"messages"`
	Tools       []chat.Tool           `json:"tools,omitempty"`
	ToolChoice  string                `json:"tool_choice,omitempty"`
	Parallel    *bool                 `json:"parallel_tool_calls,omitempty"`
	Stream      bool                  `json:"stream"`
	CachePrompt bool                  `json:"cache_prompt"`
	MaxTokens   *int                  `json:"max_tokens,omitempty"`
	Stop        []string              `json:"stop,omitempty"`
	Temperature *float64              `json:"temperature,omitempty"`
	TopK        *int                  `json:"top_k,omitempty"`
	TopP        *float64              `json:"top_p,omitempty"`
	Seed        *int                  `json:"seed,omitempty"`
	Grammar     string                `json:"grammar,omitempty"`
	JSONSchema  json.RawMessage       `json:"json_schema,omitempty"`
}

// generateServer runs a server-mode request. It is never streamed: the
// server's parser returns the calls whole, and the content with them,
// which the callback gets as one chunk. The prompt is not counted before
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
	if n := req.Options.MaxTokens; n > 0 {
		body.MaxTokens = &n
	}
	if req.Options.NumCtx > 0 {
		notes = append(notes, fmt.Sprintf("ignored the requested context window of %d tokens: llama-server's is fixed at start (its -c / --parallel)", req.Options.NumCtx))
	}
	var resp backend.Response
	err = c.retry().Do(ctx, func() error {
		var err error
		resp, err = c.chatCompletion(ctx, body)
		return err
	})
	resp.Notes = notes
	if err != nil {
		return resp, err
	}
	if onChunk != nil && resp.Text != "" {
		if err := onChunk(resp.Text); err != nil {
			return resp, err
		}
	}
	return resp, nil
}

// chatCompletion runs one non-streamed /v1/chat/completions exchange.
func (c *Client) chatCompletion(ctx context.Context, body chatRequest) (backend.Response, error) {
	start := time.Now()
	k := transport.Watch(ctx, Name, c.cfg.StallTimeout)
	defer k.Stop()
	hresp, err := c.do(k, http.MethodPost, "/v1/chat/completions", body)
	if err != nil {
		return backend.Response{}, err
	}
	defer hresp.Body.Close()
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
	return resp, err
}

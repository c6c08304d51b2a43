package llamacpp

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"

	"github.com/toolharness/toolharness/backend"
	"github.com/toolharness/toolharness/backend/internal/transport"
	"github.com/toolharness/toolharness/chat"
)

// getJSON runs one small JSON exchange (not a generation) with retries.
func (c *Client) getJSON(ctx context.Context, method, path string, body, out any) error {
	return c.retry().Do(ctx, func() error {
		k := transport.Watch(ctx, Name, c.cfg.StallTimeout)
		defer k.Stop()
		resp, err := c.do(k, method, path, body, true)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(k.Reader(resp.Body))
		if err != nil {
			return fail(k, err, true, false)
		}
		if err := json.Unmarshal(b, out); err != nil {
			return &backend.Error{Kind: backend.KindBadResponse, Backend: Name, Err: fmt.Errorf("decode %s answer: %w", path, err)}
		}
		return nil
	})
}

// Health asks GET /health; nil means the model is loaded and the server
// ready. While the model loads the server answers 503 "Loading model",
// returned as a retryable KindServer error.
func (c *Client) Health(ctx context.Context) error {
	var out struct {
		Status string `json:"status"`
	}
	if err := c.getJSON(ctx, http.MethodGet, "/health", nil, &out); err != nil {
		return err
	}
	if out.Status != "ok" {
		return &backend.Error{Kind: backend.KindBadResponse, Backend: Name, Message: fmt.Sprintf("/health status %q, want \"ok\"", out.Status)}
	}
	return nil
}

type tokenizeRequest struct {
	// Content is a string or a mixed array of strings and ids, as for
	// /completion's prompt.
	Content    any  `json:"content"`
	AddSpecial bool `json:"add_special"`
	WithPieces bool `json:"with_pieces,omitempty"`
}

// token is one element of /tokenize's tokens: an id, or {"id","piece"}
// with with_pieces (piece is a string, or a list of bytes when the piece
// is not valid UTF-8 on its own).
type token struct {
	ID    int
	Piece string
}

func (t *token) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] != '{' {
		return json.Unmarshal(b, &t.ID)
	}
	var w struct {
		ID    int             `json:"id"`
		Piece json.RawMessage `json:"piece"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	t.ID = w.ID
	if len(w.Piece) > 0 && w.Piece[0] == '"' {
		return json.Unmarshal(w.Piece, &t.Piece)
	}
	var bytes []byte
	var ints []int
	if err := json.Unmarshal(w.Piece, &ints); err != nil {
		return fmt.Errorf("piece: %w", err)
	}
	for _, i := range ints {
		bytes = append(bytes, byte(i))
	}
	t.Piece = string(bytes)
	return nil
}

type tokenizeResponse struct {
	Tokens []token `json:"tokens"`
}

func (c *Client) tokenize(ctx context.Context, content any, addSpecial bool) (int, error) {
	var out tokenizeResponse
	err := c.getJSON(ctx, http.MethodPost, "/tokenize", tokenizeRequest{Content: content, AddSpecial: addSpecial}, &out)
	return len(out.Tokens), err
}

// CountTokens counts text exactly as the server tokenizes it (special
// tokens parsed, no BOS added). The server has one model; model is unused.
func (c *Client) CountTokens(ctx context.Context, model, text string) (int, error) {
	return c.tokenize(ctx, text, false)
}

// bos reports whether the server adds a BOS to string prompts and the
// BOS's text. Tokenizing "" with add_special yields exactly the BOS when
// the model's add_bos_token is true, and nothing otherwise.
func (c *Client) bos(ctx context.Context) (adds bool, text string, err error) {
	c.info.mu.Lock()
	known, adds, text := c.info.bosKnown, c.info.addsBOS, c.info.bosText
	c.info.mu.Unlock()
	if known {
		return adds, text, nil
	}
	var out tokenizeResponse
	if err := c.getJSON(ctx, http.MethodPost, "/tokenize", tokenizeRequest{Content: "", AddSpecial: true, WithPieces: true}, &out); err != nil {
		return false, "", err
	}
	if len(out.Tokens) > 0 {
		adds, text = true, out.Tokens[0].Piece
	}
	c.info.mu.Lock()
	c.info.bosKnown, c.info.addsBOS, c.info.bosText = true, adds, text
	c.info.mu.Unlock()
	return adds, text, nil
}

// templateMessage is the message shape sent to /apply-template. An
// assistant turn carries the exact text the model produced (Raw) so the
// server re-renders what the model wrote; tool calls are never sent as
// structure, they are inside that text.
type templateMessage struct {
	Role       chat.Role `json:"role"`
	Content    string    `json:"content"`
	Name       string    `json:"name,omitempty"`
	ToolCallID string    `json:"tool_call_id,omitempty"`
}

// applyTemplate renders messages with the server's own chat template
// (POST /apply-template, generation prompt included).
func (c *Client) applyTemplate(ctx context.Context, msgs []chat.Message) (string, error) {
	in := make([]templateMessage, len(msgs))
	for i, m := range msgs {
		content := m.Content
		if m.Role == chat.RoleAssistant && m.Raw != "" {
			content = m.Raw
		}
		in[i] = templateMessage{Role: m.Role, Content: content, Name: m.Name, ToolCallID: m.ToolCallID}
	}
	return c.postForText(ctx, "/apply-template", struct {
		Messages []templateMessage `json:"messages"`
	}{in}, "prompt")
}

// ApplyTemplate renders messages and tools with the server's own chat
// template (POST /apply-template, generation prompt included), sent in the
// OpenAI shape as a chat request would carry them: assistant tool calls as
// structure, tools in the tools field. It is for checking a rendering
// against the server's (templates verify); chat-mode generation sends the
// model's exact text instead (applyTemplate).
func (c *Client) ApplyTemplate(ctx context.Context, msgs []chat.Message, tools []chat.Tool) (string, error) {
	if msgs == nil {
		msgs = []chat.Message{}
	}
	return c.postForText(ctx, "/apply-template", struct {
		Messages []chat.Message `json:"messages"`
		Tools    []chat.Tool    `json:"tools,omitempty"`
	}{msgs, tools}, "prompt")
}

// postForText posts body to path and returns the string member key of the
// answer, refusing an answer without one.
func (c *Client) postForText(ctx context.Context, path string, body any, key string) (string, error) {
	var out map[string]json.RawMessage
	if err := c.getJSON(ctx, http.MethodPost, path, body, &out); err != nil {
		return "", err
	}
	var text string
	if raw, ok := out[key]; !ok || json.Unmarshal(raw, &text) != nil {
		return "", &backend.Error{Kind: backend.KindBadResponse, Backend: Name, Message: fmt.Sprintf("%s answer has no %s string", path, key)}
	}
	return text, nil
}

package llamacpp

import (
	"context"
	"net/http"

	"github.com/toolharness/toolharness/backend"
)

// Props is what GET /props says about the server's model. Fields a server
// version does not send stay zero.
type Props struct {
	// ChatTemplate is the model's Jinja chat template as the server loaded
	// it (from the GGUF or --chat-template); ChatTemplateToolUse is the
	// tool-use variant some models ship, sent only by servers with --jinja.
	ChatTemplate        string `json:"chat_template"`
	ChatTemplateToolUse string `json:"chat_template_tool_use,omitempty"`
	// BOSToken and EOSToken are the texts of the model's BOS and EOS
	// tokens, "" when the model has none.
	BOSToken string `json:"bos_token"`
	EOSToken string `json:"eos_token"`
	// ContextSize is n_ctx per slot (default_generation_settings.n_ctx: the
	// server divides --ctx-size among its --parallel slots).
	ContextSize int    `json:"n_ctx"`
	TotalSlots  int    `json:"total_slots"`
	ModelPath   string `json:"model_path,omitempty"`
	ModelAlias  string `json:"model_alias,omitempty"`
	// BuildInfo is "b<build>-<commit>".
	BuildInfo string `json:"build_info,omitempty"`
	Vision    bool   `json:"vision,omitempty"`
}

// propsResponse is the wire shape of GET /props. Newer servers send
// default_generation_settings as {params, n_ctx}; older ones sent a whole
// slot object, which also has n_ctx at that level. Some versions put
// n_ctx at the top level, read when the nested one is missing.
type propsResponse struct {
	NCtx     int `json:"n_ctx"`
	Defaults struct {
		NCtx int `json:"n_ctx"`
	} `json:"default_generation_settings"`
	TotalSlots          int    `json:"total_slots"`
	ModelPath           string `json:"model_path"`
	ModelAlias          string `json:"model_alias"`
	ChatTemplate        string `json:"chat_template"`
	ChatTemplateToolUse string `json:"chat_template_tool_use"`
	BOSToken            string `json:"bos_token"`
	EOSToken            string `json:"eos_token"`
	BuildInfo           string `json:"build_info"`
	Modalities          struct {
		Vision bool `json:"vision"`
	} `json:"modalities"`
}

// Props asks GET /props (not cached: the template and tokens are read
// once per session by the caller; ContextSize caches n_ctx).
func (c *Client) Props(ctx context.Context) (Props, error) {
	var out propsResponse
	if err := c.getJSON(ctx, http.MethodGet, "/props", nil, &out); err != nil {
		return Props{}, err
	}
	p := Props{
		ChatTemplate: out.ChatTemplate, ChatTemplateToolUse: out.ChatTemplateToolUse,
		BOSToken: out.BOSToken, EOSToken: out.EOSToken,
		ContextSize: out.Defaults.NCtx, TotalSlots: out.TotalSlots,
		ModelPath: out.ModelPath, ModelAlias: out.ModelAlias, BuildInfo: out.BuildInfo, Vision: out.Modalities.Vision,
	}
	if p.ContextSize == 0 {
		p.ContextSize = out.NCtx
	}
	if p.ContextSize > 0 {
		c.info.mu.Lock()
		c.info.nCtx = p.ContextSize
		c.info.mu.Unlock()
	}
	return p, nil
}

// ContextSize returns n_ctx from GET /props (per slot: the server divides
// --ctx-size among its --parallel slots). The server has one model; model
// is unused. The value is cached for the client's life.
func (c *Client) ContextSize(ctx context.Context, model string) (int, error) {
	c.info.mu.Lock()
	n := c.info.nCtx
	c.info.mu.Unlock()
	if n > 0 {
		return n, nil
	}
	p, err := c.Props(ctx)
	if err != nil {
		return 0, err
	}
	if p.ContextSize <= 0 {
		return 0, &backend.Error{Kind: backend.KindBadResponse, Backend: Name, Message: "/props reports no n_ctx in default_generation_settings"}
	}
	return p.ContextSize, nil
}

// Slot is one entry of GET /slots. The prompt-token figures are sent by
// newer servers only (zero otherwise); PromptTokensCache is the prefix
// the slot's last task reused, like timings.cache_n.
type Slot struct {
	ID                    int  `json:"id"`
	NCtx                  int  `json:"n_ctx"`
	IsProcessing          bool `json:"is_processing"`
	PromptTokens          int  `json:"n_prompt_tokens"`
	PromptTokensProcessed int  `json:"n_prompt_tokens_processed"`
	PromptTokensCache     int  `json:"n_prompt_tokens_cache"`
}

// Slots asks GET /slots (501 KindUnsupported when the server runs with
// --no-slots).
func (c *Client) Slots(ctx context.Context) ([]Slot, error) {
	var out []Slot
	err := c.getJSON(ctx, http.MethodGet, "/slots", nil, &out)
	return out, err
}

package ollama

import (
	"context"
	"fmt"
	"strings"

	"github.com/ollama/ollama/api"

	"github.com/toolharness/toolharness/backend"
)

// ModelInfo is what the backend learns from /api/show about a model.
type ModelInfo struct {
	// ContextLength is the model's trained context window
	// (<arch>.context_length); 0 when the server does not say.
	ContextLength int
	// AddsBOS is true when the tokenizer prepends BOS to every raw prompt
	// (tokenizer.ggml.add_bos_token).
	AddsBOS bool
	// BOS is the text of the BOS token ("" when unknown).
	BOS string
}

// ModelInfo asks the server about model once and remembers the answer.
func (b *Backend) ModelInfo(ctx context.Context, model string) (ModelInfo, error) {
	b.mu.Lock()
	info, ok := b.models[model]
	b.mu.Unlock()
	if ok {
		return info, nil
	}
	show, err := b.client.Show(ctx, &api.ShowRequest{Model: model})
	if err != nil {
		return info, classify(err, false, ctx, ctx)
	}
	info = parseModelInfo(show.ModelInfo)
	if info.AddsBOS {
		// The token list comes only with verbose=true; fetch it only for
		// models that need their BOS stripped.
		verbose, err := b.client.Show(ctx, &api.ShowRequest{Model: model, Verbose: true})
		if err != nil {
			return info, classify(err, false, ctx, ctx)
		}
		info.BOS = bosText(verbose.ModelInfo)
	}
	b.mu.Lock()
	b.models[model] = info
	b.mu.Unlock()
	return info, nil
}

// ContextSize is the model's context window per /api/show.
func (b *Backend) ContextSize(ctx context.Context, model string) (int, error) {
	info, err := b.ModelInfo(ctx, model)
	if err != nil {
		return 0, err
	}
	if info.ContextLength == 0 {
		return 0, &backend.Error{Kind: backend.KindUnsupported, Backend: name,
			Message: fmt.Sprintf("/api/show reports no context_length for %s", model)}
	}
	return info.ContextLength, nil
}

func parseModelInfo(mi map[string]any) ModelInfo {
	var info ModelInfo
	arch, _ := mi["general.architecture"].(string)
	if n, ok := mi[arch+".context_length"].(float64); ok {
		info.ContextLength = int(n)
	}
	info.AddsBOS, _ = mi["tokenizer.ggml.add_bos_token"].(bool)
	return info
}

func bosText(mi map[string]any) string {
	id, ok := mi["tokenizer.ggml.bos_token_id"].(float64)
	toks, _ := mi["tokenizer.ggml.tokens"].([]any)
	if !ok || int(id) < 0 || int(id) >= len(toks) {
		return ""
	}
	s, _ := toks[int(id)].(string)
	// A BOS that is plain text (rare) would be stripped from user text;
	// only control-looking tokens are trusted.
	if !strings.HasPrefix(s, "<") || !strings.HasSuffix(s, ">") {
		return ""
	}
	return s
}

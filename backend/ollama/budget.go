package ollama

import (
	"fmt"
	"math"

	"github.com/toolharness/toolharness/backend"
)

// budget picks num_ctx for a prompt of size bytes and refuses one that
// would be truncated.
//
// num_ctx never follows the prompt: Ollama reloads the model (and drops
// its KV cache) whenever num_ctx changes, so a value that grew with the
// session would cost a reload and a full prefill each time it grew. It is
// the caller's Options.NumCtx (--num-ctx), else the model's window capped
// at Config.MaxNumCtx: one value per model for as long as the Backend
// lives, whatever the prompt.
//
// Ollama v0.6.5 cannot count tokens for us (no /api/tokenize), so the
// backend bounds them: a byte-level BPE or byte-fallback SentencePiece
// token holds at least one byte, so size (+1 for a BOS) is an upper bound.
// When the bound does not fit, the estimate size/BytesPerToken is checked
// instead, and a prompt that does not fit even so is refused before
// sending. A prompt the estimate lets through but the server still
// truncates is caught afterwards (prompt_eval_count == num_ctx).
func (b *Backend) budget(size int, o backend.Options, window int) (int, error) {
	reserve := o.MaxTokens
	if reserve <= 0 {
		reserve = b.cfg.OutputReserve
	}
	upper := size + 1
	numCtx := o.NumCtx
	if numCtx <= 0 {
		numCtx = SessionNumCtx(window, b.cfg.MaxNumCtx)
	}
	if upper+reserve <= numCtx {
		return numCtx, nil
	}
	est := int(math.Ceil(float64(size)/b.cfg.BytesPerToken)) + 1
	if est+reserve <= numCtx {
		return numCtx, nil
	}
	return 0, &backend.Error{Kind: backend.KindContextOverflow, Backend: name,
		Message: fmt.Sprintf("prompt of %d bytes (about %d tokens at %.1f bytes/token) plus %d reserved for output exceeds num_ctx %d (model window %d)",
			size, est, b.cfg.BytesPerToken, reserve, numCtx, window)}
}

// SessionNumCtx is the num_ctx the backend uses for a model whose window
// is window tokens (0: unknown) when the caller sets none: the window,
// capped at limit (DefaultMaxNumCtx when 0).
func SessionNumCtx(window, limit int) int {
	if limit <= 0 {
		limit = DefaultMaxNumCtx
	}
	if window > 0 && window < limit {
		return window
	}
	return limit
}

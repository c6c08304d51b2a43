package ollama

import (
	"fmt"
	"math"

	"github.com/toolharness/toolharness/backend"
)

// budget picks num_ctx for a prompt of size bytes and refuses one that
// would be truncated.
//
// Ollama v0.6.5 cannot count tokens for us (no /api/tokenize), so the
// backend bounds them: a byte-level BPE or byte-fallback SentencePiece
// token holds at least one byte, so size (+1 for a BOS) is an upper bound.
// When num_ctx is left to the backend it is the smallest power of two (at
// least MinNumCtx, at most the model's window) that holds the bound plus
// the output reserve: powers of two keep the value stable across a
// session's growing prompts, and each change makes Ollama reload the
// model. When the bound does not fit, the estimate size/BytesPerToken is
// checked instead, and a prompt that does not fit even so is refused
// before sending. A prompt the estimate lets through but the server still
// truncates is caught afterwards (prompt_eval_count == num_ctx).
func (b *Backend) budget(size int, o backend.Options, window int) (int, error) {
	reserve := o.MaxTokens
	if reserve <= 0 {
		reserve = b.cfg.OutputReserve
	}
	upper := size + 1
	numCtx := o.NumCtx
	if numCtx <= 0 {
		numCtx = b.cfg.MinNumCtx
		for numCtx < upper+reserve {
			numCtx *= 2
		}
		if window > 0 && numCtx > window {
			numCtx = window
		}
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

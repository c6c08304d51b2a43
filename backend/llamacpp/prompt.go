package llamacpp

import (
	"context"
	"fmt"
	"strings"

	"github.com/toolharness/toolharness/backend"
)

// mixedPrompt is the /completion prompt for text with token spans: the
// text between spans as strings, each span as its ids. The server reads
// an array holding both strings and ids as ONE prompt (an array of
// strings alone would be several prompts), tokenizes the strings with
// special tokens parsed and adds a BOS only when the first element is a
// string; ids are used verbatim. With no spans the prompt stays a plain
// string.
func mixedPrompt(text string, spans []backend.TokenSpan) any {
	if len(spans) == 0 {
		return text
	}
	var parts []any
	at := 0
	for _, sp := range spans {
		if sp.Offset > at {
			parts = append(parts, text[at:sp.Offset])
		}
		for _, id := range sp.IDs {
			parts = append(parts, id)
		}
		at = sp.Offset + sp.Len
	}
	if at < len(text) {
		parts = append(parts, text[at:])
	}
	return parts
}

// checkSpans refuses spans that do not lie, in order, inside the prompt:
// a harness bug, never sent.
func checkSpans(text string, spans []backend.TokenSpan) error {
	at := 0
	for i, sp := range spans {
		if sp.Offset < at || sp.Len <= 0 || sp.Offset+sp.Len > len(text) || len(sp.IDs) == 0 {
			return fmt.Errorf("llamacpp: token span %d (bytes %d+%d, %d ids) is empty, out of order or outside the %d-byte prompt",
				i, sp.Offset, sp.Len, len(sp.IDs), len(text))
		}
		at = sp.Offset + sp.Len
	}
	return nil
}

// shiftSpans moves spans left by n bytes (the BOS text stripped from the
// prompt's start); a span inside the stripped bytes is dropped.
func shiftSpans(spans []backend.TokenSpan, n int) []backend.TokenSpan {
	if n == 0 {
		return spans
	}
	out := make([]backend.TokenSpan, 0, len(spans))
	for _, sp := range spans {
		if sp.Offset >= n {
			sp.Offset -= n
			out = append(out, sp)
		}
	}
	return out
}

// detokenize asks POST /detokenize for the text of ids (special tokens
// rendered as their text).
func (c *Client) detokenize(ctx context.Context, ids []int) (string, error) {
	return c.postForText(ctx, "/detokenize", struct {
		Tokens []int `json:"tokens"`
	}{ids}, "content")
}

// maxTrailing bounds the ids after the generated text that exactTokens
// tries to drop: the end-of-generation id (stop_type eos) or the few ids
// of a stop word (stop_type word), which the server keeps in tokens but
// cuts from content.
const maxTrailing = 8

// exactTokens returns the ids that stand exactly for text, or for the
// longest prefix of it they can, with the length of that prefix and, when
// it is not the whole text, why. The check is the server's own
// /detokenize: a streamed token that left an incomplete UTF-8 sequence
// never appears in the stream, and a stop word may end inside a token,
// so ids alone are not trusted. On SentencePiece vocabularies with
// add_space_prefix, /detokenize drops the first piece's leading space,
// which is accepted as a match (the ids stand for the text with it).
func (c *Client) exactTokens(ctx context.Context, pieces []idPiece, text string) ([]int, int, string, error) {
	if text == "" {
		return nil, 0, "", nil // nothing generated, nothing to stand for
	}
	var ids []int
	for _, p := range pieces {
		ids = append(ids, p.ids...)
	}
	if len(ids) == 0 {
		return nil, 0, "the server returned no token ids: this turn goes back to the server as text", nil
	}
	whole, err := c.trailingMatch(ctx, ids, text)
	if whole != nil || err != nil {
		return whole, len(text), "", err
	}
	why := fmt.Sprintf("the %d generated token ids do not detokenize to the %d bytes of generated text", len(ids), len(text))
	ids, n, err := c.exactPrefix(ctx, pieces, text)
	if err != nil {
		return nil, 0, "", err
	}
	if n == 0 {
		return nil, 0, why + ": this turn goes back to the server as text", nil
	}
	return ids, n, fmt.Sprintf("%s (the server sends no id for a token that ends inside a UTF-8 character): the first %d bytes go back as ids, the rest as text", why, n), nil
}

// trailingMatch is the ids, less up to maxTrailing at the end, whose text
// is exactly text, or nil.
func (c *Client) trailingMatch(ctx context.Context, ids []int, text string) ([]int, error) {
	for drop := 0; drop <= maxTrailing && drop < len(ids); drop++ {
		got, err := c.detokenize(ctx, ids[:len(ids)-drop])
		if err != nil {
			return nil, err
		}
		if sameText(got, text) {
			return ids[:len(ids)-drop], nil
		}
		if len(got) < len(text)-1 {
			break // dropping more ids only shortens it
		}
	}
	return nil, nil
}

// exactPrefix finds, by bisection over the pieces, the longest run of
// pieces whose ids detokenize to exactly the text they came with: the
// first piece that lacks ids (its text holds a split character's bytes)
// spoils every longer run and none shorter. It returns those ids and the
// length of their text.
func (c *Client) exactPrefix(ctx context.Context, pieces []idPiece, text string) ([]int, int, error) {
	idsOf := func(k int) []int {
		var ids []int
		for _, p := range pieces[:k] {
			ids = append(ids, p.ids...)
		}
		return ids
	}
	lo, hi := 0, len(pieces) // pieces[:lo] match; pieces[:hi+1] do not, if hi < len
	for lo < hi {
		mid := (lo + hi + 1) / 2
		got, err := c.detokenize(ctx, idsOf(mid))
		if err != nil {
			return nil, 0, err
		}
		if end := pieces[mid-1].end; end <= len(text) && sameText(got, text[:end]) {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	if lo == 0 {
		return nil, 0, nil
	}
	return idsOf(lo), pieces[lo-1].end, nil
}

// sameText reports whether /detokenize's got is want (less the leading
// space a SentencePiece detokenizer drops).
func sameText(got, want string) bool {
	return got == want || (strings.HasPrefix(want, " ") && got == want[1:])
}

package llamacpp

import (
	"context"
	"fmt"
	"net/http"
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
	var out struct {
		Content *string `json:"content"`
	}
	if err := c.getJSON(ctx, http.MethodPost, "/detokenize", struct {
		Tokens []int `json:"tokens"`
	}{ids}, &out); err != nil {
		return "", err
	}
	if out.Content == nil {
		return "", &backend.Error{Kind: backend.KindBadResponse, Backend: Name, Message: "/detokenize answer has no content"}
	}
	return *out.Content, nil
}

// maxTrailing bounds the ids after the generated text that exactTokens
// tries to drop: the end-of-generation id (stop_type eos) or the few ids
// of a stop word (stop_type word), which the server keeps in tokens but
// cuts from content.
const maxTrailing = 8

// exactTokens returns the prefix of ids whose text is exactly text, or
// nil with the reason when there is none. The check is the server's own
// /detokenize: a streamed token that left an incomplete UTF-8 sequence
// never appears in the stream, and a stop word may end inside a token,
// so ids alone are not trusted. On SentencePiece vocabularies with
// add_space_prefix, /detokenize drops the first piece's leading space,
// which is accepted as a match (the ids stand for the text with it).
func (c *Client) exactTokens(ctx context.Context, ids []int, text string) ([]int, string, error) {
	if len(ids) == 0 {
		return nil, "the server returned no token ids", nil
	}
	for drop := 0; drop <= maxTrailing && drop < len(ids); drop++ {
		got, err := c.detokenize(ctx, ids[:len(ids)-drop])
		if err != nil {
			return nil, "", err
		}
		if got == text || (strings.HasPrefix(text, " ") && got == text[1:]) {
			return ids[:len(ids)-drop], "", nil
		}
		if len(got) < len(text)-1 {
			break // dropping more ids only shortens it
		}
	}
	return nil, fmt.Sprintf("the %d generated token ids do not detokenize to the %d bytes of generated text", len(ids), len(text)), nil
}

package agent

import "github.com/toolharness/toolharness/backend"

// Token-exact history. Re-tokenising what a model generated does not
// always give back the ids it generated (BPE merges across a boundary,
// byte fallback, special-token text), so a server comparing token
// prefixes can lose its cache at every assistant turn although the prompt
// text is byte-stable. On a backend that takes token ids in a prompt, the
// session keeps each assistant turn's ids with the byte range of the
// prompt they stand for, and sends those ranges as ids: text for what
// the harness wrote, ids for what the model wrote.

// idSpan is an assistant turn's place in the prompt and its ids; text is
// the turn's raw output, checked against the prompt before each use.
type idSpan struct {
	backend.TokenSpan
	text string
}

// spansFor returns the id spans that still lie, byte for byte, where they
// were in prompt (a divergence before one makes it text again).
func (s *Session) spansFor(prompt string) []backend.TokenSpan { return spansIn(s.idSpans, prompt) }

// spansIn returns the spans that lie, byte for byte, where they were in
// prompt.
func spansIn(spans []idSpan, prompt string) []backend.TokenSpan {
	var out []backend.TokenSpan
	for _, sp := range spans {
		end := sp.Offset + sp.Len
		if end <= len(prompt) && prompt[sp.Offset:end] == sp.text {
			out = append(out, sp.TokenSpan)
		}
	}
	return out
}

// appendIDSpan appends the span of ids a turn raw was generated as, at
// offset (the length of the prompt it answered). textLen is how much of
// raw the ids cover when not all of it (Response.TokenText; 0: all): the
// rest has no ids and goes as text.
func appendIDSpan(spans []idSpan, offset int, raw string, textLen int, ids []int) []idSpan {
	if len(ids) == 0 || raw == "" {
		return spans
	}
	if textLen > 0 && textLen < len(raw) {
		raw = raw[:textLen]
	}
	return append(spans, idSpan{TokenSpan: backend.TokenSpan{Offset: offset, Len: len(raw), IDs: ids}, text: raw})
}

// Reuse is how much of a request's prompt the server took from its cache,
// in the server's own figures (llama.cpp: timings.cache_n and prompt_n).
type Reuse struct {
	// Reused prompt tokens came from the cache; New were evaluated anew.
	Reused int `json:"reused_tokens"`
	New    int `json:"new_tokens"`
	// Held is what the server's cache slot held after the previous request
	// (llama.cpp tokens_cached): the most this request could reuse.
	Held int `json:"held_tokens,omitempty"`
	// IDTurns earlier assistant turns went as IDs token ids.
	IDTurns int `json:"id_turns,omitempty"`
	IDs     int `json:"ids,omitempty"`
}

func reuseOf(u backend.Usage, held int, spans []backend.TokenSpan) *Reuse {
	if !u.CachedKnown {
		return nil
	}
	r := &Reuse{Reused: u.CachedTokens, New: u.PromptTokens - u.CachedTokens, Held: held, IDTurns: len(spans)}
	for _, sp := range spans {
		r.IDs += len(sp.IDs)
	}
	return r
}

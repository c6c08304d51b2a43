package llamacpptest

import (
	"fmt"
	"sort"
	"strings"
)

// Tokenizer is a toy vocabulary: ids 0-255 are single bytes, then the
// special tokens (matched only with special parsing on), then merges
// (multi-byte pieces). Tokenize is greedy longest match, so it is
// deterministic and, like BPE, prefers merged pieces.
type Tokenizer struct {
	pieces  []string
	special map[int]bool
	byText  map[string]int
	longest int
}

// Special token texts of the default tokenizer.
const (
	BOS     = "<s>"
	ImStart = "<|im_start|>"
	ImEnd   = "<|im_end|>"
)

// NewTokenizer returns the toy tokenizer with specials and merges.
func NewTokenizer(specials, merges []string) *Tokenizer {
	t := &Tokenizer{special: map[int]bool{}, byText: map[string]int{}}
	for b := 0; b < 256; b++ {
		t.pieces = append(t.pieces, string([]byte{byte(b)}))
	}
	for _, s := range specials {
		t.special[len(t.pieces)] = true
		t.byText[s] = len(t.pieces)
		t.pieces = append(t.pieces, s)
	}
	for _, m := range merges {
		t.byText[m] = len(t.pieces)
		t.pieces = append(t.pieces, m)
	}
	for s := range t.byText {
		t.longest = max(t.longest, len(s))
	}
	return t
}

// DefaultTokenizer has ChatML's specials and merges common in JSON tool
// calls and chat text.
func DefaultTokenizer() *Tokenizer {
	merges := []string{`{"`, `":`, `"}`, `",`, ` "`, `}}`, "name", "arguments", "tool_call", "<tool_call>", "</tool_call>",
		"\n\n", "the", " the", "ing", "er", "assistant", "user", "system", "tool", "ab", "abc"}
	sort.Strings(merges)
	return NewTokenizer([]string{BOS, ImStart, ImEnd}, merges)
}

// Len is the vocabulary size.
func (t *Tokenizer) Len() int { return len(t.pieces) }

// ID returns the id of a piece (special or merge).
func (t *Tokenizer) ID(piece string) (int, bool) {
	id, ok := t.byText[piece]
	return id, ok
}

// Special reports whether id is a special token.
func (t *Tokenizer) Special(id int) bool { return t.special[id] }

// Tokenize splits text greedily into the longest known pieces; special
// token texts become their ids only with parseSpecial.
func (t *Tokenizer) Tokenize(text string, parseSpecial bool) []int {
	var ids []int
	for i := 0; i < len(text); {
		best, bestLen := int(text[i]), 1
		for n := min(t.longest, len(text)-i); n > 1; n-- {
			if id, ok := t.byText[text[i:i+n]]; ok && (parseSpecial || !t.special[id]) {
				best, bestLen = id, n
				break
			}
		}
		ids = append(ids, best)
		i += bestLen
	}
	return ids
}

// Bytes spells text one byte per token: the ids a model may generate
// that Tokenize would not give back (wherever text holds a merge).
func (t *Tokenizer) Bytes(text string) []int {
	ids := make([]int, len(text))
	for i := 0; i < len(text); i++ {
		ids[i] = int(text[i])
	}
	return ids
}

// Piece is the text of one id; special tokens are "" unless renderSpecial
// (generated content never shows them, /detokenize does).
func (t *Tokenizer) Piece(id int, renderSpecial bool) string {
	if id < 0 || id >= len(t.pieces) || (t.special[id] && !renderSpecial) {
		return ""
	}
	return t.pieces[id]
}

// Detokenize concatenates the pieces of ids.
func (t *Tokenizer) Detokenize(ids []int, renderSpecial bool) string {
	var b strings.Builder
	for _, id := range ids {
		b.WriteString(t.Piece(id, renderSpecial))
	}
	return b.String()
}

// check refuses ids outside the vocabulary.
func (t *Tokenizer) check(ids []int) error {
	for _, id := range ids {
		if id < 0 || id >= len(t.pieces) {
			return fmt.Errorf("Prompt contains invalid tokens")
		}
	}
	return nil
}

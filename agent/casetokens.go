package agent

import "github.com/toolharness/toolharness/backend"

// caseIDs is the token-exact history of one case on a backend that takes
// token ids, in raw mode (see Case.Whole and Case.TokenHistory): the ids
// of the case's own assistant turns (seed) and of each failed attempt
// (keep), sent back as ids in later prompts, as a session sends its
// assistant turns (tokens.go).
type caseIDs struct {
	on    bool
	spans []idSpan
}

// prepare asks for the generated ids and sends the earlier attempts'
// ids where they still lie, byte for byte, in the prompt.
func (t *caseIDs) prepare(req *backend.Request) {
	if !t.on {
		return
	}
	req.ReturnTokens = true
	req.TokenSpans = spansIn(t.spans, req.Prompt)
}

// keep records the ids of an attempt that goes back into the history,
// at the end of the prompt it answered; a turn the ids cover only in
// part (Response.TokenText) keeps the part they cover.
func (t *caseIDs) keep(a Attempt) {
	if t.on {
		t.spans = appendIDSpan(t.spans, len(a.Prompt), a.Raw, a.TokenText, a.Tokens)
	}
}

// seed places the ids of the case's own assistant turns (by index in
// Case.Messages; skip is how many leading messages hist leaves out, the
// system message) where ReplayPrompt renders them. A turn that does not
// lie there byte for byte is dropped by prepare, and so goes as text.
func (t *caseIDs) seed(r Renderer, sys System, hist []Msg, turns map[int]TurnIDs, skip int) error {
	return replayTurns(r, sys, hist, func(i, offset int) {
		tt := turns[i+skip]
		t.spans = appendIDSpan(t.spans, offset, hist[i].Raw, tt.Len, tt.IDs)
	})
}

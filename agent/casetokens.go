package agent

import "github.com/toolharness/toolharness/backend"

// caseIDs is the token-exact history of one benchmark case (Case.Whole
// on a backend that takes token ids, raw mode): each failed attempt's
// generated ids, sent back as ids in the retries' prompts, as a session
// sends its assistant turns (tokens.go).
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
	if !t.on || len(a.Tokens) == 0 || a.Raw == "" {
		return
	}
	covered := a.Raw
	if n := a.TokenText; n > 0 && n < len(covered) {
		covered = covered[:n]
	}
	t.spans = append(t.spans, idSpan{TokenSpan: backend.TokenSpan{Offset: len(a.Prompt), Len: len(covered), IDs: a.Tokens}, text: covered})
}

// seed places the ids of the case's own assistant turns (by index in
// Case.Messages; skip is how many leading messages hist leaves out, the
// system message) where ReplayPrompt renders them. A turn that does not
// lie there byte for byte is dropped by prepare, and so goes as text.
func (t *caseIDs) seed(r Renderer, sys System, hist []Msg, turns map[int]TurnIDs, skip int) error {
	return replayTurns(r, sys, hist, func(i, offset int) {
		tt, ok := turns[i+skip]
		raw := hist[i].Raw
		if !ok || len(tt.IDs) == 0 || raw == "" {
			return
		}
		if tt.Len > 0 && tt.Len < len(raw) {
			raw = raw[:tt.Len]
		}
		t.spans = append(t.spans, idSpan{TokenSpan: backend.TokenSpan{Offset: offset, Len: len(raw), IDs: tt.IDs}, text: raw})
	})
}

package agent

import "github.com/toolharness/toolharness/chat"

// ReplayPrompt renders a whole conversation as the session that produced
// it did: through the renderer's Transcript, one prompt per assistant
// turn, each the previous prompt, the model's exact output (Msg.Raw) and
// what followed it. A stateless caller that resends a conversation whose
// assistant turns carry their Raw text (serve) so gets the prompt that
// extends the previous request's byte for byte, and the server reuses its
// cache. A conversation with an assistant turn whose Raw is unknown is
// rendered whole by Renderer.Prompt, from its calls, since no earlier
// prompt can be replayed.
func ReplayPrompt(r Renderer, sys System, hist []Msg) (string, error) {
	for _, m := range hist {
		if m.Role == chat.RoleAssistant && m.Raw == "" {
			return r.Prompt(sys, hist)
		}
	}
	tr, err := replayTranscript(r, sys, hist, nil)
	if err != nil {
		return "", err
	}
	return tr.Prompt(hist)
}

// replayTurns calls at with the index in hist and the byte offset in
// ReplayPrompt's prompt of each assistant turn: the length of the prompt
// it answered, which its Raw text follows. A conversation rendered whole
// (a turn without Raw) has no such offsets, and at is not called.
func replayTurns(r Renderer, sys System, hist []Msg, at func(i, offset int)) error {
	for _, m := range hist {
		if m.Role == chat.RoleAssistant && m.Raw == "" {
			return nil
		}
	}
	_, err := replayTranscript(r, sys, hist, at)
	return err
}

// replayTranscript is a transcript that rendered, in order, the prompt
// each assistant turn of hist answered (at, when set, gets its length).
func replayTranscript(r Renderer, sys System, hist []Msg, at func(i, offset int)) (Transcript, error) {
	tr, err := r.Transcript(sys)
	if err != nil {
		return nil, err
	}
	for i, m := range hist {
		if m.Role != chat.RoleAssistant {
			continue
		}
		// The prompt this turn answered; besides its length only its side
		// effect on the transcript matters.
		p, err := tr.Prompt(hist[:i])
		if err != nil {
			return nil, err
		}
		if at != nil {
			at(i, len(p))
		}
	}
	return tr, nil
}

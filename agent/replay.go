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
	tr, err := r.Transcript(sys)
	if err != nil {
		return "", err
	}
	for i, m := range hist {
		if m.Role != chat.RoleAssistant {
			continue
		}
		// The prompt this turn answered; only its side effect on the
		// transcript matters.
		if _, err := tr.Prompt(hist[:i]); err != nil {
			return "", err
		}
	}
	return tr.Prompt(hist)
}

package agent

import "fmt"

// cutByLimit is the backend's stop reason for a reply cut by the token
// limit (backend.Response.StopReason).
const cutByLimit = "length"

// tokenLimit names the limit that cut a reply.
func (s *Session) tokenLimit() string { return tokenLimit(s.cfg.Options.MaxTokens) }

// cutNote is added to a parse error of a reply cut by the token limit.
func (s *Session) cutNote() string { return cutNote(s.cfg.Options.MaxTokens) }

func tokenLimit(maxTokens int) string {
	if maxTokens > 0 {
		return fmt.Sprintf("the token limit (%d tokens)", maxTokens)
	}
	return "the server's token limit"
}

func cutNote(maxTokens int) string {
	return "; the reply was cut off by " + tokenLimit(maxTokens) + " before it ended: write a shorter reply"
}

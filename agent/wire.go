package agent

import "errors"

// RendererOptions choose a session's template family and tool format.
type RendererOptions struct {
	Template string // family name ("" = chatml)
	Format   string // tool-call format ("" = the family's default)
	Strict   bool   // parser repairs off
	Verbatim bool   // framing safety off
}

// NewRenderer returns the Renderer of a family and format.
func NewRenderer(o RendererOptions) (Renderer, error) {
	return nil, errors.New("agent: render not wired yet")
}

// coercesValues reports whether a format writes parameter values as raw
// text, so lossless coercions apply.
func coercesValues(format string) bool {
	switch format {
	case "xml", "qwen3-coder", "tags":
		return true
	}
	return false
}

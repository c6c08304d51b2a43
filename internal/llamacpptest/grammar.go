package llamacpptest

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/toolharness/toolharness/backend"
)

// Exactly is a GBNF grammar (llama.cpp's grammar language) that admits
// text and nothing else: with it a model writes text, in whatever tokens
// it prefers, and then can only end its turn. Quotes, backslashes and
// every byte outside printable ASCII are escaped, so any valid UTF-8 text
// is spelled exactly.
func Exactly(text string) string {
	var b strings.Builder
	b.WriteString(`root ::= "`)
	for _, r := range text {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r >= ' ' && r <= '~':
			b.WriteRune(r)
		case r <= 0xff:
			fmt.Fprintf(&b, `\x%02X`, r)
		case r <= 0xffff:
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			fmt.Fprintf(&b, `\U%08X`, r)
		}
	}
	b.WriteString("\"\n")
	return b.String()
}

// Scripted is a backend that sends each request to b with a grammar that
// admits only the next of outputs, in order: on a real server it scripts
// what the model writes, turn by turn. A request beyond the script, or one
// that already carries a grammar or format, is refused before it is sent.
func Scripted(b backend.Backend, outputs ...string) *Script {
	return &Script{Backend: b, outputs: outputs}
}

// Script is the backend Scripted returns.
type Script struct {
	backend.Backend
	// ReturnTokens asks for the generated ids on every request, also where
	// the caller does not (a text-history session whose ids a test checks).
	ReturnTokens bool

	mu      sync.Mutex
	outputs []string
	next    int
}

// Generate sends req with the next output's grammar.
func (s *Script) Generate(ctx context.Context, req backend.Request, onChunk func(string) error) (backend.Response, error) {
	s.mu.Lock()
	i := s.next
	s.next++
	s.mu.Unlock()
	if i >= len(s.outputs) {
		return backend.Response{}, fmt.Errorf("llamacpptest: request %d is beyond the %d scripted outputs", i+1, len(s.outputs))
	}
	if req.Grammar != "" || req.Format != nil {
		return backend.Response{}, fmt.Errorf("llamacpptest: request %d already constrains its output; a scripted request cannot", i+1)
	}
	req.Grammar = Exactly(s.outputs[i])
	req.ReturnTokens = req.ReturnTokens || s.ReturnTokens
	return s.Backend.Generate(ctx, req, onChunk)
}

// Used is how many scripted outputs were asked for.
func (s *Script) Used() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.next
}

// ContextSize is the wrapped backend's (backend.ContextSizer), so that a
// scripted session checks its budget as an unscripted one would.
func (s *Script) ContextSize(ctx context.Context, model string) (int, error) {
	cs, ok := s.Backend.(backend.ContextSizer)
	if !ok {
		return 0, fmt.Errorf("llamacpptest: %T reports no context size", s.Backend)
	}
	return cs.ContextSize(ctx, model)
}

// CountTokens is the wrapped backend's (backend.TokenCounter).
func (s *Script) CountTokens(ctx context.Context, model, text string) (int, error) {
	tc, ok := s.Backend.(backend.TokenCounter)
	if !ok {
		return 0, fmt.Errorf("llamacpptest: %T counts no tokens", s.Backend)
	}
	return tc.CountTokens(ctx, model, text)
}

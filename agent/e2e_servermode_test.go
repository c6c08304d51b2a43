package agent

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/toolharness/toolharness/backend"
	"github.com/toolharness/toolharness/backend/llamacpp"
	"github.com/toolharness/toolharness/chat"
	"github.com/toolharness/toolharness/internal/llamacpptest"
	"github.com/toolharness/toolharness/registry"
)

// serverScript forces a real llama-server's replies in server mode: the
// first a call (the server's own tool-call grammar under tool_choice
// "required", the reply opened with the call marker, which the server
// continues), the next the answer text (a grammar, tool_choice "none").
type serverScript struct {
	backend.Backend
	answer string
	n      int
}

func (s *serverScript) Generate(ctx context.Context, req backend.Request, onChunk func(string) error) (backend.Response, error) {
	s.n++
	if s.n == 1 {
		no := false
		req.Messages = append(req.Messages, chat.Message{Role: chat.RoleAssistant, Content: "<tool_call>\n"})
		req.ToolChoice, req.ParallelToolCalls, req.Stop = "required", &no, append(req.Stop, "</tool_call>")
	} else {
		req.ToolChoice, req.Grammar = "none", llamacpptest.Exactly(s.answer)
	}
	return s.Backend.Generate(ctx, req, onChunk)
}

// TestE2EServerModeSessionStreams: a session in server mode on a real
// llama-server: the server's parser returns the call, the session runs it
// and sends the result back as a structure, and the answer's text reaches
// the display (Hooks.OnText) in pieces as the server streams it, the
// pieces making up the answer.
func TestE2EServerModeSessionStreams(t *testing.T) {
	tmpl, err := os.ReadFile("../templates/testdata/official/Qwen-Qwen2.5-7B-Instruct.jinja")
	if err != nil {
		t.Fatal(err)
	}
	srv := llamacpptest.Start(t, llamacpptest.WithChatTemplate(string(tmpl)))
	c, err := llamacpp.New(llamacpp.Config{BaseURL: srv.URL, StallTimeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	r, err := NewRenderer(RendererOptions{Template: "qwen2.5", Format: "hermes", Chat: true})
	if err != nil {
		t.Fatal(err)
	}
	// One argument with one allowed value: under the server's tool-call
	// grammar the random model can write only this call.
	runs := 0
	reg := registry.New(registry.Options{Approver: registry.ApproveAll{}})
	if err := reg.Register(registry.Spec{
		Tool: chat.Tool{Name: "read_file", Description: "Read a file.",
			Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string","enum":["f1.txt"]}},"required":["path"]}`)},
		Handler: func(context.Context, json.RawMessage) (string, error) { runs++; return "contents of f1.txt", nil },
	}); err != nil {
		t.Fatal(err)
	}
	const answer = "The file says: contents of f1.txt."
	var pieces []string
	var calls []string
	zero := 0.0
	s, err := New(context.Background(), Config{
		Backend: &serverScript{Backend: c, answer: answer}, Model: "toy", Mode: backend.ModeServer, Renderer: r,
		Tools: RegistryTools(reg), Env: testEnv, MaxTurns: 4, Trace: io.Discard, Options: backend.Options{Temperature: &zero, MaxTokens: 400},
		Hooks: Hooks{OnText: func(s string) { pieces = append(pieces, s) }, OnCall: func(c chat.ToolCall) { calls = append(calls, c.Name) }},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	ex, err := s.Send(ctx, "Read a file.")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("calls %v, answer %q in %d pieces", calls, ex.Answer, len(pieces))
	if ex.Calls != 1 || len(calls) != 1 || calls[0] != "read_file" || runs != 1 {
		t.Fatalf("calls %v (%d in the exchange, %d run); want one read_file from the server's parser", calls, ex.Calls, runs)
	}
	if ex.Answer != answer || strings.Join(pieces, "") != answer || len(pieces) < 2 {
		t.Errorf("answer %q, shown in pieces %q; want it streamed in several", ex.Answer, pieces)
	}
}

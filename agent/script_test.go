package agent

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/toolharness/toolharness/backend"
	"github.com/toolharness/toolharness/chat"
	"github.com/toolharness/toolharness/registry"
)

// reply is one scripted answer of scriptBackend.
type reply struct {
	text string
	// failBefore fails the request before any output.
	failBefore *backend.Error
	// cutAfter delivers this many bytes of text, then fails with a
	// stream cut (Consumed).
	cutAfter int
	notes    []string
	// stop is the stop reason reported ("" is "stop").
	stop string
	// calls are the calls a server's own parser returned (server mode).
	calls []chat.ToolCall
}

// scriptBackend is a backend.Backend that answers from a script, in
// chunks of 5 bytes, and records every request. It stands in for a model
// server in unit tests; the end-to-end tests use a real Ollama.
type scriptBackend struct {
	mu        sync.Mutex
	replies   []reply
	requests  []backend.Request
	constrain bool
}

func (b *scriptBackend) Capabilities() backend.Capabilities {
	return backend.Capabilities{Raw: true, Chat: true, Constrain: b.constrain, ServerTools: true}
}

func (b *scriptBackend) Generate(ctx context.Context, req backend.Request, onChunk func(string) error) (backend.Response, error) {
	b.mu.Lock()
	b.requests = append(b.requests, req)
	if len(b.replies) == 0 {
		b.mu.Unlock()
		return backend.Response{}, &backend.Error{Kind: backend.KindBadResponse, Backend: "script", Message: "script exhausted"}
	}
	r := b.replies[0]
	b.replies = b.replies[1:]
	b.mu.Unlock()
	if r.failBefore != nil {
		return backend.Response{}, r.failBefore
	}
	text := r.text
	if r.cutAfter > 0 {
		text = text[:r.cutAfter]
	}
	var resp backend.Response
	for i := 0; i < len(text); i += 5 {
		chunk := text[i:min(i+5, len(text))]
		resp.Text += chunk
		if onChunk != nil {
			if err := onChunk(chunk); err != nil {
				return resp, err
			}
		}
	}
	if r.cutAfter > 0 {
		return resp, &backend.Error{Kind: backend.KindStreamCut, Backend: "script", Consumed: true, Message: "connection reset"}
	}
	resp.StopReason = cmp.Or(r.stop, "stop")
	resp.Notes = r.notes
	resp.ToolCalls = r.calls
	resp.Usage = backend.Usage{PromptTokens: len(req.Prompt), GeneratedTokens: len(text)}
	return resp, nil
}

func (b *scriptBackend) reqs() []backend.Request {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]backend.Request(nil), b.requests...)
}

// counting is a registry whose read_file and write_file tools count their
// runs per path.
type counting struct {
	mu   sync.Mutex
	runs map[string]int
}

func (c *counting) n(path string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.runs[path]
}

func newCountingRegistry() (*registry.Registry, *counting) {
	c := &counting{runs: map[string]int{}}
	r := registry.New(registry.Options{Approver: registry.ApproveAll{}})
	for _, name := range []string{"read_file", "write_file"} {
		name := name
		err := r.Register(registry.Spec{
			Tool: chat.Tool{Name: name, Description: "Test tool " + name + ".",
				Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"],"additionalProperties":false}`)},
			SideEffects: name == "write_file",
			Handler: func(_ context.Context, args json.RawMessage) (string, error) {
				var a struct{ Path string }
				if err := json.Unmarshal(args, &a); err != nil {
					return "", err
				}
				c.mu.Lock()
				c.runs[a.Path]++
				c.mu.Unlock()
				return fmt.Sprintf("contents of %s", a.Path), nil
			},
		})
		if err != nil {
			panic(err)
		}
	}
	return r, c
}

// hermesCall writes a call the way the hermes catalog asks.
func hermesCall(name, args string) string {
	return `<tool_call>` + "\n" + `{"name": "` + name + `", "arguments": ` + args + `}` + "\n" + `</tool_call>`
}

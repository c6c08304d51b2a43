package llmtools

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/tmc/langchaingo/llms"

	"github.com/toolharness/toolharness/backend"
)

// scripted answers requests from a list, in 4-byte chunks, and records
// them. Unit tests only; TestE2E… use a real Ollama.
type scripted struct {
	mu      sync.Mutex
	replies []string
	reqs    []backend.Request
}

func (s *scripted) Capabilities() backend.Capabilities {
	return backend.Capabilities{Raw: true, Chat: true, Constrain: true}
}

func (s *scripted) Generate(_ context.Context, req backend.Request, onChunk func(string) error) (backend.Response, error) {
	s.mu.Lock()
	s.reqs = append(s.reqs, req)
	text := s.replies[0]
	s.replies = s.replies[1:]
	s.mu.Unlock()
	for i := 0; i < len(text); i += 4 {
		if err := onChunk(text[i:min(i+4, len(text))]); err != nil {
			return backend.Response{Text: text[:i]}, err
		}
	}
	return backend.Response{Text: text, StopReason: "stop", Usage: backend.Usage{PromptTokens: 10, GeneratedTokens: 5}}, nil
}

var weather = llms.Tool{Type: "function", Function: &llms.FunctionDefinition{
	Name: "get_weather", Description: "Weather in a city.",
	Parameters: map[string]any{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}, "required": []string{"city"}},
}}

func TestGenerateContentToolCalls(t *testing.T) {
	raw := "Checking.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>"
	b := &scripted{replies: []string{raw, "It is sunny in Paris."}}
	m, err := New(b, Options{Model: "m", Template: "qwen2.5"})
	if err != nil {
		t.Fatal(err)
	}
	var streamed strings.Builder
	msgs := []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "Weather in Paris?")}
	resp, err := m.GenerateContent(context.Background(), msgs, llms.WithTools([]llms.Tool{weather}),
		llms.WithStreamingFunc(func(_ context.Context, chunk []byte) error { streamed.Write(chunk); return nil }))
	if err != nil {
		t.Fatal(err)
	}
	c := resp.Choices[0]
	if len(c.ToolCalls) != 1 || c.ToolCalls[0].FunctionCall.Name != "get_weather" || c.FuncCall == nil {
		t.Fatalf("tool calls %+v", c.ToolCalls)
	}
	var args map[string]string
	if err := json.Unmarshal([]byte(c.ToolCalls[0].FunctionCall.Arguments), &args); err != nil || args["city"] != "Paris" {
		t.Errorf("arguments %q", c.ToolCalls[0].FunctionCall.Arguments)
	}
	if streamed.String() != "Checking.\n" || c.Content != "Checking.\n" || c.StopReason != "tool_calls" {
		t.Errorf("streamed %q content %q stop %q: the call markup must not be streamed as text", streamed.String(), c.Content, c.StopReason)
	}
	if !strings.Contains(b.reqs[0].Prompt, `"name": "get_weather"`) {
		t.Errorf("the catalog is not in the prompt:\n%s", b.reqs[0].Prompt)
	}

	// The caller sends the call and its result back, as with any provider.
	msgs = append(msgs,
		llms.MessageContent{Role: llms.ChatMessageTypeAI, Parts: []llms.ContentPart{c.ToolCalls[0]}},
		llms.MessageContent{Role: llms.ChatMessageTypeTool, Parts: []llms.ContentPart{llms.ToolCallResponse{ToolCallID: c.ToolCalls[0].ID, Name: "get_weather", Content: "sunny"}}},
	)
	resp, err = m.GenerateContent(context.Background(), msgs, llms.WithTools([]llms.Tool{weather}))
	if err != nil {
		t.Fatal(err)
	}
	if resp.Choices[0].Content != "It is sunny in Paris." || len(resp.Choices[0].ToolCalls) != 0 {
		t.Errorf("%+v", resp.Choices[0])
	}
	// The earlier turn is re-rendered from the model's exact text, so the
	// second prompt extends the first by it.
	if !strings.HasPrefix(b.reqs[1].Prompt, b.reqs[0].Prompt+raw) {
		t.Errorf("second prompt does not extend the first plus the raw reply:\n%s", b.reqs[1].Prompt)
	}
	if !strings.Contains(b.reqs[1].Prompt, "<tool_response>\nsunny\n</tool_response>") {
		t.Errorf("no tool response in:\n%s", b.reqs[1].Prompt)
	}
}

func TestGenerateContentMalformedCallIsReported(t *testing.T) {
	b := &scripted{replies: []string{"<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": }\n</tool_call>"}}
	m, err := New(b, Options{Model: "m", Template: "qwen2.5"})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := m.GenerateContent(context.Background(), []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "x")}, llms.WithTools([]llms.Tool{weather}))
	if err != nil {
		t.Fatal(err)
	}
	c := resp.Choices[0]
	probs, _ := c.GenerationInfo["tool_call_errors"].([]map[string]any)
	if len(c.ToolCalls) != 0 || len(probs) != 1 || c.GenerationInfo["raw"] == "" {
		t.Errorf("calls %+v problems %+v", c.ToolCalls, probs)
	}
}

func TestToolChoice(t *testing.T) {
	b := &scripted{replies: []string{`{"name":"get_weather","arguments":{"city":"Oslo"}}`, "plain"}}
	m, err := New(b, Options{Model: "m", Template: "chatml"})
	if err != nil {
		t.Fatal(err)
	}
	msgs := []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "x")}
	resp, err := m.GenerateContent(context.Background(), msgs, llms.WithTools([]llms.Tool{weather}), llms.WithToolChoice("required"))
	if err != nil || len(resp.Choices[0].ToolCalls) != 1 {
		t.Fatalf("%v %+v", err, resp)
	}
	if f := string(b.reqs[0].Format); !strings.Contains(f, `"const":"get_weather"`) || strings.Contains(f, "answer") {
		t.Errorf("required tool choice must constrain to calls only: %s", f)
	}
	if _, err := m.GenerateContent(context.Background(), msgs, llms.WithTools([]llms.Tool{weather}), llms.WithToolChoice("none")); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.reqs[1].Prompt, "get_weather") || len(b.reqs[1].Format) != 0 {
		t.Error("tool choice none must leave the tools out")
	}
}

func TestBadInput(t *testing.T) {
	m, err := New(&scripted{}, Options{Template: "chatml"})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for name, opts := range map[string][]llms.CallOption{
		"two candidates": {llms.WithN(2)},
		"bad tool type":  {llms.WithTools([]llms.Tool{{Type: "retrieval"}})},
		"no function":    {llms.WithTools([]llms.Tool{{Type: "function"}})},
		"bad schema":     {llms.WithTools([]llms.Tool{{Type: "function", Function: &llms.FunctionDefinition{Name: "f", Parameters: "{"}}})},
	} {
		if _, err := m.GenerateContent(ctx, []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "x")}, opts...); err == nil || !strings.HasPrefix(err.Error(), "llmtools: ") {
			t.Errorf("%s: error %v", name, err)
		}
	}
	if _, err := m.GenerateContent(ctx, []llms.MessageContent{{Role: llms.ChatMessageTypeHuman, Parts: []llms.ContentPart{llms.ImageURLPart("http://x")}}}); err == nil {
		t.Error("image part: no error")
	}
	if _, err := New(nil, Options{}); err == nil {
		t.Error("nil backend: no error")
	}
}

// plainModel is an llms.Model without tool calling: it answers with fixed
// text and ignores llms.WithTools, as langchaingo's Ollama provider does.
type plainModel struct {
	text string
	seen []llms.MessageContent
}

func (p *plainModel) GenerateContent(ctx context.Context, msgs []llms.MessageContent, options ...llms.CallOption) (*llms.ContentResponse, error) {
	p.seen = msgs
	var co llms.CallOptions
	for _, o := range options {
		o(&co)
	}
	if co.StreamingFunc != nil {
		if err := co.StreamingFunc(ctx, []byte(p.text)); err != nil {
			return nil, err
		}
	}
	return &llms.ContentResponse{Choices: []*llms.ContentChoice{{Content: p.text, StopReason: "stop"}}}, nil
}

func (p *plainModel) Call(ctx context.Context, prompt string, options ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, p, prompt, options...)
}

func TestWrapGivesToolCalls(t *testing.T) {
	inner := &plainModel{text: "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Lyon\"}}\n</tool_call>"}
	m, err := Wrap(inner, Options{Template: "qwen2.5"})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := m.GenerateContent(context.Background(), []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "Weather in Lyon?")}, llms.WithTools([]llms.Tool{weather}))
	if err != nil {
		t.Fatal(err)
	}
	if tc := resp.Choices[0].ToolCalls; len(tc) != 1 || tc[0].FunctionCall.Name != "get_weather" || !strings.Contains(tc[0].FunctionCall.Arguments, "Lyon") {
		t.Fatalf("tool calls %+v", tc)
	}
	// The catalog reached the wrapped model as text in its system message.
	if len(inner.seen) == 0 || inner.seen[0].Role != llms.ChatMessageTypeSystem || !strings.Contains(inner.seen[0].Parts[0].(llms.TextContent).Text, "get_weather") {
		t.Errorf("the wrapped model saw %+v", inner.seen)
	}
}

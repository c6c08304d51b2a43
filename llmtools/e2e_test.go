package llmtools

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/tmc/langchaingo/llms"

	"github.com/toolharness/toolharness/backend/ollama"
	"github.com/toolharness/toolharness/internal/ollamatest"
)

var tiny ollamatest.Lazy

func TestMain(m *testing.M) { tiny.Main(m) }

func e2eModel(t *testing.T, opts Options) (*Model, context.Context) {
	t.Helper()
	srv := tiny.Get(t)
	b, err := ollama.New(ollama.Config{Host: srv.URL, StallTimeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	opts.Model = srv.Model
	m, err := New(b, opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return m, ctx
}

// TestE2ELangchaingoUser uses the Model exactly as a langchaingo user
// would, against a real Ollama serving the tiny random model.
func TestE2ELangchaingoUser(t *testing.T) {
	m, ctx := e2eModel(t, Options{Template: "chatml", ConstrainMaxString: 16})
	var model llms.Model = m

	// The single-prompt helper.
	out, err := llms.GenerateFromSinglePrompt(ctx, model, "Say something.", llms.WithMaxTokens(24), llms.WithSeed(1))
	if err != nil {
		t.Fatal(err)
	}
	if out == "" {
		t.Error("empty completion")
	}

	// Streaming, with tools offered: the text arrives in several chunks and
	// equals the content.
	var chunks []string
	msgs := []llms.MessageContent{
		llms.TextParts(llms.ChatMessageTypeSystem, "You answer questions about the weather."),
		llms.TextParts(llms.ChatMessageTypeHuman, "What is the weather in Paris?"),
	}
	resp, err := model.GenerateContent(ctx, msgs, llms.WithTools([]llms.Tool{weather}), llms.WithMaxTokens(32), llms.WithSeed(2),
		llms.WithStreamingFunc(func(_ context.Context, b []byte) error { chunks = append(chunks, string(b)); return nil }))
	if err != nil {
		t.Fatal(err)
	}
	if len(chunks) < 2 || strings.Join(chunks, "") != resp.Choices[0].Content {
		t.Errorf("%d chunks %q, content %q", len(chunks), chunks, resp.Choices[0].Content)
	}

	// A required tool choice: the random model, constrained by the server,
	// returns a well-formed call in ToolCalls.
	resp, err = model.GenerateContent(ctx, msgs, llms.WithTools([]llms.Tool{weather}), llms.WithToolChoice("required"),
		llms.WithMaxTokens(96), llms.WithSeed(3))
	if err != nil {
		t.Fatal(err)
	}
	c := resp.Choices[0]
	if len(c.ToolCalls) != 1 || c.ToolCalls[0].FunctionCall.Name != "get_weather" {
		t.Fatalf("tool calls %+v (raw %q, errors %v)", c.ToolCalls, c.GenerationInfo["raw"], c.GenerationInfo["tool_call_errors"])
	}
	var args map[string]any
	if err := json.Unmarshal([]byte(c.ToolCalls[0].FunctionCall.Arguments), &args); err != nil {
		t.Fatalf("arguments %q: %v", c.ToolCalls[0].FunctionCall.Arguments, err)
	}
	if _, ok := args["city"].(string); !ok {
		t.Errorf("arguments %v lack the required city", args)
	}

	// The tool's answer goes back and the conversation continues.
	msgs = append(msgs,
		llms.MessageContent{Role: llms.ChatMessageTypeAI, Parts: []llms.ContentPart{c.ToolCalls[0]}},
		llms.MessageContent{Role: llms.ChatMessageTypeTool, Parts: []llms.ContentPart{llms.ToolCallResponse{ToolCallID: c.ToolCalls[0].ID, Name: "get_weather", Content: "sunny, 21°C"}}},
	)
	resp, err = model.GenerateContent(ctx, msgs, llms.WithTools([]llms.Tool{weather}), llms.WithMaxTokens(16), llms.WithSeed(4))
	if err != nil {
		t.Fatal(err)
	}
	if resp.Choices[0].GenerationInfo["raw"] == "" {
		t.Error("no raw text after the tool result")
	}
}

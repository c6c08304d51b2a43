package serve

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/openai/openai-go/v3"

	"github.com/toolharness/toolharness/agent"
	"github.com/toolharness/toolharness/backend"
	"github.com/toolharness/toolharness/backend/llamacpp"
	"github.com/toolharness/toolharness/chat"
	"github.com/toolharness/toolharness/internal/llamacpptest"
)

// loopOutputs are what the model writes in the tool loops below, forced
// by grammar: a call with spacing and a preamble its structured call does
// not keep, two parallel calls, an answer with trailing spaces and, after
// the user's next question, one more call.
var loopOutputs = []string{
	"I'll look it up.\n\n<tool_call>\n{\"name\":   \"get_weather\",\n \"arguments\": {\"city\":\"Paris\"}}\n</tool_call>",
	call("get_weather", `{"city": "Rome"}`) + "\n" + call("get_time", `{"zone": "CET"}`),
	"Sunny in Paris and Rome; it is noon.  ",
	call("get_weather", `{"city": "Berlin"}`),
}

// generation is one request the backend got and what it answered.
type generation struct {
	prompt string
	spans  int
	text   string
	ids    []int
	usage  backend.Usage
}

// genLog is a backend that records every generation.
type genLog struct {
	backend.Backend
	caps func(backend.Capabilities) backend.Capabilities
	mu   sync.Mutex
	gens []generation
}

func (g *genLog) Capabilities() backend.Capabilities {
	return g.caps(g.Backend.Capabilities())
}

func (g *genLog) Generate(ctx context.Context, req backend.Request, onChunk func(string) error) (backend.Response, error) {
	resp, err := g.Backend.Generate(ctx, req, onChunk)
	g.mu.Lock()
	g.gens = append(g.gens, generation{prompt: req.Prompt, spans: len(req.TokenSpans), text: resp.Text, ids: resp.Tokens, usage: resp.Usage})
	g.mu.Unlock()
	return resp, err
}

// CountTokens is the wrapped backend's, so the window check counts as
// the server does.
func (g *genLog) CountTokens(ctx context.Context, model, text string) (int, error) {
	return g.Backend.(backend.TokenCounter).CountTokens(ctx, model, text)
}

// llamaModel serves the real llama-server's tiny model through a script
// of loopOutputs. With textHistory the backend is said to take no ids (a
// server that remembers raw text alone); the script still asks for them,
// so the test can compare them with the text's tokens.
func llamaModel(t *testing.T, srv *llamacpptest.Server, textHistory bool) (*genLog, *Model) {
	t.Helper()
	c, err := llamacpp.New(llamacpp.Config{BaseURL: srv.URL, StallTimeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	script := llamacpptest.Scripted(c, loopOutputs...)
	script.ReturnTokens = true
	log := &genLog{Backend: script, caps: func(c backend.Capabilities) backend.Capabilities {
		c.TokenPrompt = c.TokenPrompt && !textHistory
		return c
	}}
	m := testModel(t, log)
	zero := 0.0
	m.Window, m.Options = 8192, backend.Options{Temperature: &zero, MaxTokens: 200}
	return log, m
}

// openaiLoop runs loopOutputs' conversation through /v1/chat/completions,
// streaming every other request, and returns the cached tokens each reply
// reported.
func openaiLoop(t *testing.T, url string) []int64 {
	c := openaiClient(url)
	p := openai.ChatCompletionNewParams{Model: "test-model", Tools: []openai.ChatCompletionToolUnionParam{weatherTool, timeTool},
		Messages: []openai.ChatCompletionMessageParamUnion{openai.SystemMessage("Be brief."), openai.UserMessage("Weather in Paris and Rome, and the time?")}}
	var cached []int64
	for turn, wantCalls := range []int{1, 2, 0, 1} {
		got, err := openaiComplete(t, c, p, turn%2 == 1)
		if err != nil {
			t.Fatalf("turn %d: %v", turn+1, err)
		}
		if len(got.Calls) != wantCalls {
			t.Fatalf("turn %d: calls %v, want %d", turn+1, got.Calls, wantCalls)
		}
		cached = append(cached, got.Cached)
		p.Messages = append(p.Messages, got.Message.ToParam())
		for _, id := range got.IDs {
			p.Messages = append(p.Messages, openai.ToolMessage("sunny", id))
		}
		if wantCalls == 0 {
			p.Messages = append(p.Messages, openai.UserMessage("And Berlin?"))
		}
	}
	return cached
}

// anthropicLoop is openaiLoop through /v1/messages.
func anthropicLoop(t *testing.T, url string) []int64 {
	c := anthropicClient(url)
	p := anthropic.MessageNewParams{Model: "test-model", MaxTokens: 200, Tools: anTools,
		System:   []anthropic.TextBlockParam{{Text: "Be brief."}},
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("Weather in Paris and Rome, and the time?"))}}
	var cached []int64
	for turn, wantCalls := range []int{1, 2, 0, 1} {
		got, err := anthropicComplete(t, c, p, turn%2 == 0)
		if err != nil {
			t.Fatalf("turn %d: %v", turn+1, err)
		}
		if len(got.Calls) != wantCalls {
			t.Fatalf("turn %d: calls %v, want %d", turn+1, got.Calls, wantCalls)
		}
		cached = append(cached, got.Message.Usage.CacheReadInputTokens)
		var next []anthropic.ContentBlockParamUnion
		for _, b := range got.Message.Content {
			if b.Type == "tool_use" {
				next = append(next, anthropic.NewToolResultBlock(b.ID, "sunny", false))
			}
		}
		if wantCalls == 0 {
			next = append(next, anthropic.NewTextBlock("And Berlin?"))
		}
		p.Messages = append(p.Messages, got.Message.ToParam(), anthropic.NewUserMessage(next...))
	}
	return cached
}

// TestE2EServeTokenExact runs a four-request tool loop through each front
// door on a real llama-server and reads the server's own figures
// (timings.cache_n, tokens_cached): every request after the first reuses
// the whole prefix the slot held (the previous prompt and every generated
// id), because the server remembers each reply's raw text and ids and
// sends returning turns as those ids; and the caller's usage says so.
// Some turn's raw text is not what its structured call renders to, and
// some turn's ids are not what its text re-tokenises to. The control, a
// server that remembers raw text alone (the backend said to take no ids),
// sends byte-identical prompts and loses reuse after such a turn.
func TestE2EServeTokenExact(t *testing.T) {
	srv := llamacpptest.Start(t)
	for _, api := range []struct {
		name string
		loop func(*testing.T, string) []int64
	}{{"openai", openaiLoop}, {"anthropic", anthropicLoop}} {
		t.Run(api.name, func(t *testing.T) {
			exact, m := llamaModel(t, srv, false)
			cached := api.loop(t, startServer(t, Config{}, m).URL)
			checkTokenExact(t, srv, exact, m, cached)

			text, m := llamaModel(t, srv, true)
			api.loop(t, startServer(t, Config{}, m).URL)
			checkTextLoses(t, exact, text)
		})
	}
}

func checkTokenExact(t *testing.T, srv *llamacpptest.Server, log *genLog, m *Model, cached []int64) {
	t.Helper()
	gens := log.gens
	if len(gens) != len(loopOutputs) {
		t.Fatalf("%d generations, want %d", len(gens), len(loopOutputs))
	}
	var figures []string
	for i, g := range gens {
		if g.text != loopOutputs[i] || len(g.ids) == 0 || !g.usage.CachedKnown {
			t.Fatalf("generation %d: text %q, %d ids, cache known %v", i+1, g.text, len(g.ids), g.usage.CachedKnown)
		}
		if g.usage.SlotTokens != g.usage.PromptTokens+len(g.ids) {
			t.Errorf("generation %d: slot holds %d tokens, want the prompt %d and the %d generated ids", i+1, g.usage.SlotTokens, g.usage.PromptTokens, len(g.ids))
		}
		if int64(g.usage.CachedTokens) != cached[i] {
			t.Errorf("request %d: the caller's usage says %d cached tokens, the server %d", i+1, cached[i], g.usage.CachedTokens)
		}
		figures = append(figures, fmt.Sprintf("%d/%d", g.usage.CachedTokens, g.usage.PromptTokens))
		if i == 0 {
			continue
		}
		prev := gens[i-1]
		if !strings.HasPrefix(g.prompt, prev.prompt+prev.text) {
			t.Errorf("request %d's prompt does not extend request %d's prompt and output", i+1, i)
		}
		if g.spans != i {
			t.Errorf("request %d sent %d turns as ids, want %d", i+1, g.spans, i)
		}
		if g.usage.CachedTokens != prev.usage.SlotTokens {
			t.Errorf("request %d reused %d tokens of the %d the slot held", i+1, g.usage.CachedTokens, prev.usage.SlotTokens)
		}
	}
	t.Logf("token-exact: reused/prompt tokens per request: %s", strings.Join(figures, " "))
	retok := 0
	for i, g := range gens {
		if !slices.Equal(g.ids, srv.Tokenize(t, g.text)) {
			retok++
			t.Logf("generation %d's %d ids are not the %d its text re-tokenises to", i+1, len(g.ids), len(srv.Tokenize(t, g.text)))
		}
	}
	if retok == 0 {
		t.Error("every turn's ids re-tokenise to themselves: the test proves nothing about ids")
	}
	// The first turn's raw text is not what its call renders to: only the
	// server's memory kept those bytes.
	call := chat.ToolCall{ID: "call_1", Name: "get_weather", Arguments: []byte(`{"city":"Paris"}`)}
	hist := []agent.Msg{{Message: chat.Message{Role: chat.RoleUser, Content: "Weather in Paris and Rome, and the time?"}},
		{Message: chat.Message{Role: chat.RoleAssistant, Content: "I'll look it up.", ToolCalls: []chat.ToolCall{call}}}}
	rendered, err := m.Renderer.Prompt(agent.System{Text: "Be brief."}, hist)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(rendered, loopOutputs[0]) || !strings.Contains(gens[1].prompt, loopOutputs[0]) {
		t.Error("the first turn's raw text is what its structured call renders to, or request 2 lacks it: the test proves nothing about raw text")
	}
}

// checkTextLoses: the text-history server sent the same prompts, as text
// alone, and some request reused less than the slot held.
func checkTextLoses(t *testing.T, exact, text *genLog) {
	t.Helper()
	if len(text.gens) != len(exact.gens) {
		t.Fatalf("control: %d generations, want %d", len(text.gens), len(exact.gens))
	}
	lost := 0
	var figures []string
	for i, g := range text.gens {
		if g.prompt != exact.gens[i].prompt || g.spans != 0 {
			t.Errorf("control request %d: prompt differs from the token-exact run's, or %d spans sent as ids", i+1, g.spans)
		}
		figures = append(figures, fmt.Sprintf("%d/%d", g.usage.CachedTokens, g.usage.PromptTokens))
		if i > 0 && g.usage.CachedTokens < text.gens[i-1].usage.SlotTokens {
			lost++
		}
	}
	t.Logf("text history (control): reused/prompt tokens per request: %s", strings.Join(figures, " "))
	if lost == 0 {
		t.Error("control: every request reused all the slot held with the history as text; the token-exact check proves nothing")
	}
}

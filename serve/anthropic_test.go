package serve

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/google/go-cmp/cmp"

	"github.com/toolharness/toolharness/backend/ollama"
)

func anthropicClient(srv string) anthropic.Client {
	return anthropic.NewClient(option.WithBaseURL(srv), option.WithAPIKey("unused"), option.WithMaxRetries(0))
}

var anTools = []anthropic.ToolUnionParam{
	{OfTool: &anthropic.ToolParam{Name: "get_weather", Description: anthropic.String("Current weather of a city."),
		InputSchema: anthropic.ToolInputSchemaParam{Properties: map[string]any{"city": map[string]any{"type": "string"}}, Required: []string{"city"},
			ExtraFields: map[string]any{"additionalProperties": false}}}},
	{OfTool: &anthropic.ToolParam{Name: "get_time",
		InputSchema: anthropic.ToolInputSchemaParam{Properties: map[string]any{"zone": map[string]any{"type": "string"}}}}},
}

// anReply is what a client got, streamed or not.
type anReply struct {
	Text     string
	Thinking string
	Calls    []string // name + " " + input
	Stop     string
	Message  anthropic.Message
	Header   http.Header
}

func anthropicComplete(t *testing.T, c anthropic.Client, p anthropic.MessageNewParams, stream bool) (anReply, error) {
	t.Helper()
	var r anReply
	var resp *http.Response
	ctx := context.Background()
	if !stream {
		m, err := c.Messages.New(ctx, p, option.WithResponseInto(&resp))
		if err != nil {
			return r, err
		}
		r.Message = *m
	} else {
		s := c.Messages.NewStreaming(ctx, p, option.WithResponseInto(&resp))
		var kinds []string
		for s.Next() {
			ev := s.Current()
			kinds = append(kinds, ev.Type)
			if err := r.Message.Accumulate(ev); err != nil {
				t.Fatalf("accumulate: %v", err)
			}
		}
		if err := s.Err(); err != nil {
			return r, err
		}
		if len(kinds) < 3 || kinds[0] != "message_start" || kinds[len(kinds)-1] != "message_stop" || kinds[len(kinds)-2] != "message_delta" {
			t.Errorf("event sequence %v: want message_start … message_delta, message_stop", kinds)
		}
	}
	for _, b := range r.Message.Content {
		switch b.Type {
		case "text":
			r.Text += b.Text
		case "thinking":
			r.Thinking += b.Thinking
		case "tool_use":
			r.Calls = append(r.Calls, b.Name+" "+string(b.Input))
			if !strings.HasPrefix(b.ID, "toolu_") {
				t.Errorf("tool_use id %q: want a minted toolu_…", b.ID)
			}
		}
	}
	r.Stop = string(r.Message.StopReason)
	if resp != nil {
		r.Header = resp.Header.Clone()
		for k, v := range resp.Trailer {
			r.Header[k] = v
		}
	}
	return r, nil
}

var cmpAnReply = cmp.FilterPath(func(p cmp.Path) bool {
	switch p.Last().String() {
	case ".Message", ".Header":
		return true
	}
	return false
}, cmp.Ignore())

func TestAnthropicCalls(t *testing.T) {
	tests := []struct {
		name     string
		replies  []string
		choice   anthropic.ToolChoiceUnionParam
		stop     []string
		want     anReply
		requests int
		invalid  bool
	}{
		{name: "single call", replies: []string{"Let me check.\n" + call("get_weather", `{"city": "Paris"}`)},
			want: anReply{Text: "Let me check.\n", Calls: []string{`get_weather {"city":"Paris"}`}, Stop: "tool_use"}, requests: 1},
		{name: "parallel calls", replies: []string{call("get_weather", `{"city": "Paris"}`) + "\n" + call("get_time", `{"zone": "CET"}`)},
			want: anReply{Text: "\n", Calls: []string{`get_weather {"city":"Paris"}`, `get_time {"zone":"CET"}`}, Stop: "tool_use"}, requests: 1},
		{name: "thinking and answer", replies: []string{"<think>\nIt is warm there.\n</think>\n\nIt is sunny."},
			want: anReply{Thinking: "\nIt is warm there.\n", Text: "\n\nIt is sunny.", Stop: "end_turn"}, requests: 1},
		{name: "invalid first call retried", replies: []string{call("get_weather", `{"town": "Paris"}`), call("get_weather", `{"city": "Paris"}`)},
			want: anReply{Calls: []string{`get_weather {"city":"Paris"}`}, Stop: "tool_use"}, requests: 2},
		{name: "tool_choice any", replies: []string{"Paris is nice.", call("get_time", `{"zone": "CET"}`)},
			choice: anthropic.ToolChoiceUnionParam{OfAny: &anthropic.ToolChoiceAnyParam{}},
			want:   anReply{Text: "Paris is nice.", Calls: []string{`get_time {"zone":"CET"}`}, Stop: "tool_use"}, requests: 2},
		{name: "tool_choice tool", replies: []string{call("get_time", `{"zone": "CET"}`), call("get_weather", `{"city": "Paris"}`)},
			choice: anthropic.ToolChoiceParamOfTool("get_weather"),
			want:   anReply{Calls: []string{`get_weather {"city":"Paris"}`}, Stop: "tool_use"}, requests: 2},
		{name: "invalid after the retries", replies: []string{call("nope", `{}`), call("nope", `{}`), call("nope", `{}`)},
			want: anReply{Stop: "end_turn"}, requests: 3, invalid: true},
	}
	for _, tt := range tests {
		for _, stream := range []bool{false, true} {
			t.Run(tt.name+map[bool]string{false: "", true: " streaming"}[stream], func(t *testing.T) {
				b := &scriptBackend{replies: tt.replies}
				srv := startServer(t, Config{}, testModel(t, b))
				// The SDK refuses 32,000 (Claude Code's figure) unstreamed.
				p := anthropic.MessageNewParams{Model: "test-model", MaxTokens: map[bool]int64{false: 4096, true: 32000}[stream], Tools: anTools, ToolChoice: tt.choice, StopSequences: tt.stop,
					System:   []anthropic.TextBlockParam{{Text: "Be brief."}},
					Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("What's the weather in Paris?"))}}
				got, err := anthropicComplete(t, anthropicClient(srv.URL), p, stream)
				if err != nil {
					t.Fatal(err)
				}
				if d := cmp.Diff(tt.want, got, cmpAnReply); d != "" {
					t.Errorf("reply (-want +got):\n%s", d)
				}
				if n := len(b.reqs()); n != tt.requests {
					t.Errorf("%d generations, want %d", n, tt.requests)
				}
				if h := got.Header.Get(invalidHeader); !stream && (h != "") != tt.invalid {
					t.Errorf("%s: %q, want set=%v", invalidHeader, h, tt.invalid)
				}
			})
		}
	}
}

// TestAnthropicToolLoop runs a multi-turn loop through /v1/messages: each
// prompt extends the previous prompt and the model's exact output.
func TestAnthropicToolLoop(t *testing.T) {
	raw1 := "Checking.  \n<tool_call>\n{\"name\": \"get_weather\",   \"arguments\": {\"city\":\"Paris\"}}\n</tool_call>"
	b := &scriptBackend{replies: []string{raw1, "Sunny."}}
	srv := startServer(t, Config{}, testModel(t, b))
	c := anthropicClient(srv.URL)
	p := anthropic.MessageNewParams{Model: "test-model", MaxTokens: 1024, Tools: anTools,
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("Weather in Paris?"))}}
	got, err := anthropicComplete(t, c, p, true)
	if err != nil || len(got.Calls) != 1 {
		t.Fatalf("turn 1: %+v, %v", got, err)
	}
	id := got.Message.Content[len(got.Message.Content)-1].ID
	p.Messages = append(p.Messages, got.Message.ToParam(), anthropic.NewUserMessage(anthropic.NewToolResultBlock(id, "sunny", false)))
	got, err = anthropicComplete(t, c, p, false)
	if err != nil || got.Text != "Sunny." || got.Stop != "end_turn" {
		t.Fatalf("turn 2: %+v, %v", got, err)
	}
	reqs := b.reqs()
	if prev := reqs[0].Prompt + raw1; !strings.HasPrefix(reqs[1].Prompt, prev) {
		t.Errorf("request 2 does not extend request 1 and its output byte for byte:\nprev …%q\nnext …%q", tail(prev), tail(reqs[1].Prompt[:min(len(prev), len(reqs[1].Prompt))]))
	}
}

func TestAnthropicMaxTokensAndStop(t *testing.T) {
	b := &scriptBackend{replies: []string{"A long answer that goes on and on."}}
	srv := startServer(t, Config{}, testModel(t, b))
	p := anthropic.MessageNewParams{Model: "test-model", MaxTokens: 3, StopSequences: []string{"END"},
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("Talk."))}}
	got, err := anthropicComplete(t, anthropicClient(srv.URL), p, false)
	if err != nil {
		t.Fatal(err)
	}
	if got.Stop != "max_tokens" {
		t.Errorf("stop_reason %q, want max_tokens", got.Stop)
	}
	req := b.reqs()[0]
	if req.Options.MaxTokens != 3 || !contains(req.Stop, "END") {
		t.Errorf("the backend got max_tokens %d and stops %q; want 3 and END among them", req.Options.MaxTokens, req.Stop)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func TestAnthropicCountTokens(t *testing.T) {
	srv := startServer(t, Config{}, testModel(t, &scriptBackend{}))
	c := anthropicClient(srv.URL)
	n, err := c.Messages.CountTokens(context.Background(), anthropic.MessageCountTokensParams{Model: "test-model",
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("Hello there."))}, Tools: toCountTools(anTools)})
	if err != nil {
		t.Fatal(err)
	}
	if n.InputTokens < 20 {
		t.Errorf("input_tokens %d: the prompt with its catalog is longer", n.InputTokens)
	}
}

func toCountTools(ts []anthropic.ToolUnionParam) []anthropic.MessageCountTokensToolUnionParam {
	var out []anthropic.MessageCountTokensToolUnionParam
	for _, t := range ts {
		out = append(out, anthropic.MessageCountTokensToolUnionParam{OfTool: t.OfTool})
	}
	return out
}

func TestAnthropicDisconnect(t *testing.T) {
	b := &scriptBackend{replies: []string{blockReply}, canceled: make(chan struct{})}
	srv := startServer(t, Config{}, testModel(t, b))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := anthropicClient(srv.URL)
	s := c.Messages.NewStreaming(ctx, anthropic.MessageNewParams{Model: "test-model", MaxTokens: 100, Tools: anTools,
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("hi"))}})
	for s.Next() {
		if s.Current().Type == "content_block_delta" {
			cancel()
			break
		}
	}
	select {
	case <-b.canceled:
	case <-time.After(10 * time.Second):
		t.Fatal("the generation upstream was not cancelled 10 s after the client left")
	}
}

func TestAnthropicDeadBackend(t *testing.T) {
	b, err := ollama.New(ollama.Config{Host: "http://127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	srv := startServer(t, Config{}, testModel(t, b))
	for _, stream := range []bool{false, true} {
		_, err := anthropicComplete(t, anthropicClient(srv.URL), anthropic.MessageNewParams{Model: "test-model", MaxTokens: 100,
			Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("hi"))}}, stream)
		var apiErr *anthropic.Error
		if !errors.As(err, &apiErr) {
			t.Fatalf("stream %v: error %v, want an API error", stream, err)
		}
		if apiErr.StatusCode != http.StatusBadGateway || !strings.Contains(apiErr.RawJSON(), `"api_error"`) || !strings.Contains(apiErr.RawJSON(), "unreachable") {
			t.Errorf("stream %v: %d %s, want 502 api_error naming the unreachable server", stream, apiErr.StatusCode, apiErr.RawJSON())
		}
	}
}

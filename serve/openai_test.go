package serve

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"

	"github.com/toolharness/toolharness/backend/ollama"
)

func openaiClient(srv string) openai.Client {
	return openai.NewClient(option.WithBaseURL(srv+"/v1"), option.WithAPIKey("unused"), option.WithMaxRetries(0))
}

var weatherTool = openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
	Name:        "get_weather",
	Description: openai.String("Current weather of a city."),
	Parameters: shared.FunctionParameters{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}},
		"required": []string{"city"}, "additionalProperties": false},
})

var timeTool = openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
	Name:       "get_time",
	Parameters: shared.FunctionParameters{"type": "object", "properties": map[string]any{"zone": map[string]any{"type": "string"}}},
})

// oaReply is what a client got, streamed or not.
type oaReply struct {
	Content string
	Calls   []string // name + " " + arguments
	IDs     []string
	Finish  string
	// Cached is the usage's prompt_tokens_details.cached_tokens.
	Cached  int64
	Message openai.ChatCompletionMessage
	Header  http.Header
}

func openaiComplete(t *testing.T, c openai.Client, p openai.ChatCompletionNewParams, stream bool) (oaReply, error) {
	t.Helper()
	var r oaReply
	var resp *http.Response
	ctx := context.Background()
	if !stream {
		cc, err := c.Chat.Completions.New(ctx, p, option.WithResponseInto(&resp))
		if err != nil {
			return r, err
		}
		r.Message, r.Finish, r.Cached = cc.Choices[0].Message, cc.Choices[0].FinishReason, cc.Usage.PromptTokensDetails.CachedTokens
	} else {
		p.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}
		s := c.Chat.Completions.NewStreaming(ctx, p, option.WithResponseInto(&resp))
		var acc openai.ChatCompletionAccumulator
		for s.Next() {
			acc.AddChunk(s.Current())
		}
		if err := s.Err(); err != nil {
			return r, err
		}
		if len(acc.Choices) == 0 {
			t.Fatal("the stream had no choice")
		}
		if acc.Usage.PromptTokens == 0 {
			t.Error("include_usage: the stream had no usage")
		}
		r.Message, r.Finish, r.Cached = acc.Choices[0].Message, acc.Choices[0].FinishReason, acc.Usage.PromptTokensDetails.CachedTokens
	}
	r.Content = r.Message.Content
	for _, tc := range r.Message.ToolCalls {
		r.Calls = append(r.Calls, tc.Function.Name+" "+tc.Function.Arguments)
		r.IDs = append(r.IDs, tc.ID)
	}
	if resp != nil {
		r.Header = resp.Header.Clone()
		for k, v := range resp.Trailer {
			r.Header[k] = v
		}
	}
	return r, nil
}

func TestOpenAICalls(t *testing.T) {
	user := openai.UserMessage("What's the weather in Paris?")
	tests := []struct {
		name    string
		replies []string
		params  openai.ChatCompletionNewParams
		want    oaReply
		// requests is how many generations the server asked for.
		requests int
		invalid  bool
	}{
		{name: "single call", replies: []string{"Let me check.\n" + call("get_weather", `{"city": "Paris"}`)},
			want: oaReply{Content: "Let me check.\n", Calls: []string{`get_weather {"city":"Paris"}`}, Finish: "tool_calls"}, requests: 1},
		{name: "parallel calls", replies: []string{call("get_weather", `{"city": "Paris"}`) + "\n" + call("get_time", `{"zone": "CET"}`)},
			want: oaReply{Content: "\n", Calls: []string{`get_weather {"city":"Paris"}`, `get_time {"zone":"CET"}`}, Finish: "tool_calls"}, requests: 1},
		{name: "answer", replies: []string{"It is sunny."},
			want: oaReply{Content: "It is sunny.", Finish: "stop"}, requests: 1},
		{name: "invalid first call retried", replies: []string{call("get_wether", `{"city": "Paris"}`), call("get_weather", `{"city": "Paris"}`)},
			want: oaReply{Calls: []string{`get_weather {"city":"Paris"}`}, Finish: "tool_calls"}, requests: 2},
		{name: "schema-invalid call retried", replies: []string{call("get_weather", `{"town": "Paris"}`), call("get_weather", `{"city": "Paris"}`)},
			want: oaReply{Calls: []string{`get_weather {"city":"Paris"}`}, Finish: "tool_calls"}, requests: 2},
		{name: "tool_choice required", replies: []string{"Paris is nice.", call("get_weather", `{"city": "Paris"}`)},
			params: openai.ChatCompletionNewParams{ToolChoice: openai.ChatCompletionToolChoiceOptionUnionParam{OfAuto: openai.String("required")}},
			want:   oaReply{Content: "Paris is nice.", Calls: []string{`get_weather {"city":"Paris"}`}, Finish: "tool_calls"}, requests: 2},
		{name: "invalid after the retries", replies: []string{call("nope", `{}`), call("nope", `{}`), call("nope", `{}`)},
			want: oaReply{Finish: "stop"}, requests: 3, invalid: true},
	}
	for _, tt := range tests {
		for _, stream := range []bool{false, true} {
			t.Run(tt.name+map[bool]string{false: "", true: " streaming"}[stream], func(t *testing.T) {
				b := &scriptBackend{replies: tt.replies}
				srv := startServer(t, Config{}, testModel(t, b))
				p := tt.params
				p.Model = "test-model"
				p.Messages = []openai.ChatCompletionMessageParamUnion{user}
				p.Tools = []openai.ChatCompletionToolUnionParam{weatherTool, timeTool}
				got, err := openaiComplete(t, openaiClient(srv.URL), p, stream)
				if err != nil {
					t.Fatal(err)
				}
				for _, id := range got.IDs {
					if !strings.HasPrefix(id, "call_") || len(id) < 10 {
						t.Errorf("call id %q: want a minted call_…", id)
					}
				}
				if d := cmp.Diff(tt.want, got, cmpReply); d != "" {
					t.Errorf("reply (-want +got):\n%s", d)
				}
				if n := len(b.reqs()); n != tt.requests {
					t.Errorf("%d generations, want %d", n, tt.requests)
				}
				// A streamed reply carries it as a trailer, which the SDK
				// does not read (TestInvalidTrailer does).
				if h := got.Header.Get(invalidHeader); !stream && (h != "") != tt.invalid {
					t.Errorf("%s: %q, want set=%v", invalidHeader, h, tt.invalid)
				}
			})
		}
	}
}

var cmpReply = cmp.FilterPath(func(p cmp.Path) bool {
	switch p.Last().String() {
	case ".IDs", ".Message", ".Header":
		return true
	}
	return false
}, cmp.Ignore())

// TestOpenAIToolLoop runs a multi-turn loop as a client does: each
// request resends the whole history, and each prompt extends the previous
// prompt and the model's exact output byte for byte, even where the
// structured call the client got back lost the raw text's spacing.
func TestOpenAIToolLoop(t *testing.T) {
	raw1 := "I'll check.\n\n" + "<tool_call>\n{\"name\":   \"get_weather\",\n \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>"
	b := &scriptBackend{replies: []string{raw1, call("get_time", `{"zone": "CET"}`), "Sunny, and it is noon."}}
	srv := startServer(t, Config{}, testModel(t, b))
	c := openaiClient(srv.URL)
	p := openai.ChatCompletionNewParams{Model: "test-model", Tools: []openai.ChatCompletionToolUnionParam{weatherTool, timeTool},
		Messages: []openai.ChatCompletionMessageParamUnion{openai.SystemMessage("Be brief."), openai.UserMessage("Weather and time in Paris?")}}
	results := []string{"sunny", "12:00"}
	for turn := 0; turn < 3; turn++ {
		got, err := openaiComplete(t, c, p, turn%2 == 1)
		if err != nil {
			t.Fatalf("turn %d: %v", turn, err)
		}
		if turn == 2 {
			if got.Content != "Sunny, and it is noon." || got.Finish != "stop" {
				t.Fatalf("turn 3: %+v", got)
			}
			break
		}
		if len(got.Calls) != 1 {
			t.Fatalf("turn %d: calls %v", turn, got.Calls)
		}
		p.Messages = append(p.Messages, got.Message.ToParam(), openai.ToolMessage(results[turn], got.IDs[0]))
	}
	reqs := b.reqs()
	for i := 1; i < len(reqs); i++ {
		prev := reqs[i-1].Prompt + []string{raw1, call("get_time", `{"zone": "CET"}`)}[i-1]
		if !strings.HasPrefix(reqs[i].Prompt, prev) {
			t.Errorf("request %d does not extend request %d and its output byte for byte:\nprev …%q\nnext …%q", i+1, i, tail(prev), tail(reqs[i].Prompt[:min(len(prev), len(reqs[i].Prompt))]))
		}
	}
}

func tail(s string) string { return s[max(0, len(s)-120):] }

// TestOpenAIDisconnect cancels the client mid-stream: the server must
// cancel the generation upstream.
func TestOpenAIDisconnect(t *testing.T) {
	b := &scriptBackend{replies: []string{blockReply}, canceled: make(chan struct{})}
	srv := startServer(t, Config{}, testModel(t, b))
	ctx, cancel := context.WithCancel(context.Background())
	c := openaiClient(srv.URL)
	s := c.Chat.Completions.NewStreaming(ctx, openai.ChatCompletionNewParams{Model: "test-model",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")}, Tools: []openai.ChatCompletionToolUnionParam{weatherTool}})
	for s.Next() {
		if strings.Contains(s.Current().Choices[0].Delta.Content, "Think") {
			cancel()
			break
		}
	}
	select {
	case <-b.canceled:
	case <-time.After(10 * time.Second):
		t.Fatal("the generation upstream was not cancelled 10 s after the client left")
	}
	cancel()
}

// TestOpenAIDeadBackend: a backend that cannot be reached is a clear
// error in OpenAI's shape, not a hang.
func TestOpenAIDeadBackend(t *testing.T) {
	b, err := ollama.New(ollama.Config{Host: "http://127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	srv := startServer(t, Config{}, testModel(t, b))
	for _, stream := range []bool{false, true} {
		_, err := openaiComplete(t, openaiClient(srv.URL), openai.ChatCompletionNewParams{Model: "test-model",
			Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")}}, stream)
		var apiErr *openai.Error
		if !errors.As(err, &apiErr) {
			t.Fatalf("stream %v: error %v, want an API error", stream, err)
		}
		if apiErr.StatusCode != http.StatusBadGateway || apiErr.Type != "upstream_error" || !strings.Contains(apiErr.Message, "unreachable") {
			t.Errorf("stream %v: %d %s %q, want 502 upstream_error naming the unreachable server", stream, apiErr.StatusCode, apiErr.Type, apiErr.Message)
		}
	}
}

func TestOpenAIModels(t *testing.T) {
	srv := startServer(t, Config{}, testModel(t, &scriptBackend{}))
	c := openaiClient(srv.URL)
	page, err := c.Models.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Data) != 1 || page.Data[0].ID != "test-model" {
		t.Errorf("models %+v", page.Data)
	}
}

// TestInvalidTrailer: a streamed reply whose calls stayed invalid says why
// in a trailer, read once the body is.
func TestInvalidTrailer(t *testing.T) {
	b := &scriptBackend{replies: []string{call("nope", `{}`), call("nope", `{}`), call("nope", `{}`)}}
	srv := startServer(t, Config{}, testModel(t, b))
	resp, err := http.Post(srv.URL+"/v1/chat/completions", "application/json", strings.NewReader(
		`{"model":"m","stream":true,"tools":[`+okTool+`],"messages":[{"role":"user","content":"hi"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if h := resp.Trailer.Get(invalidHeader); !strings.Contains(h, "unknown_tool") {
		t.Errorf("trailer %s = %q, want the unknown tool named; body:\n%s", invalidHeader, h, data)
	}
	if strings.Contains(string(data), "tool_calls\":[") {
		t.Errorf("an invalid call reached the client:\n%s", data)
	}
}

package agent

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/toolharness/toolharness/backend"
	"github.com/toolharness/toolharness/chat"
)

// idBackend answers its replies in order, each with ids 100, 101, …, and
// records the requests; it takes ids in prompts when ids is true.
type idBackend struct {
	ids     bool
	replies []string
	reqs    []backend.Request
}

func (b *idBackend) Capabilities() backend.Capabilities {
	return backend.Capabilities{Raw: true, TokenPrompt: b.ids}
}

func (b *idBackend) Generate(_ context.Context, req backend.Request, onChunk func(string) error) (backend.Response, error) {
	b.reqs = append(b.reqs, req)
	text := b.replies[0]
	b.replies = b.replies[1:]
	if onChunk != nil {
		if err := onChunk(text); err != nil {
			return backend.Response{}, err
		}
	}
	resp := backend.Response{Text: text, StopReason: "stop"}
	if req.ReturnTokens {
		resp.Tokens = []int{100 + len(b.reqs), 200 + len(b.reqs)}
	}
	return resp, nil
}

// TestCaseTurnIDs: a replayed case with TokenHistory sends its own
// assistant turns as the ids it is given, at the bytes their raw text
// lies on in the prompt (a turn covered in part, in part), asks every
// attempt for its ids and sends a failed attempt back as its ids. Without
// TokenHistory, or on a backend that takes no ids, everything goes as
// text.
func TestCaseTurnIDs(t *testing.T) {
	tool := chat.Tool{Name: "get_weather", Parameters: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`)}
	raw1 := "Let me see.  \n<tool_call>\n{\"name\":  \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>"
	msgs := []chat.Message{
		{Role: chat.RoleSystem, Content: "Be brief."},
		{Role: chat.RoleUser, Content: "Weather in Paris?"},
		{Role: chat.RoleAssistant, Content: "Let me see.", ToolCalls: []chat.ToolCall{{ID: "call_1", Name: "get_weather", Arguments: []byte(`{"city":"Paris"}`)}}, Raw: raw1},
		{Role: chat.RoleTool, ToolCallID: "call_1", Name: "get_weather", Content: "sunny"},
		{Role: chat.RoleAssistant, Content: "Sunny.", Raw: "Sunny."},
		{Role: chat.RoleUser, Content: "And Rome?"},
	}
	turns := map[int]TurnIDs{2: {IDs: []int{1, 2, 3}}, 4: {IDs: []int{7}, Len: 3}}
	bad := "<tool_call>\n{\"name\": \"get_wether\", \"arguments\": {\"city\": \"Rome\"}}\n</tool_call>"
	good := "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Rome\"}}\n</tool_call>"
	run := func(history, takesIDs bool) []backend.Request {
		b := &idBackend{ids: takesIDs, replies: []string{bad, good}}
		res, err := RunCase(context.Background(), b, Case{Template: "qwen2.5", Mode: backend.ModeRaw, Replay: true, MaxRetries: 1,
			Tools: []chat.Tool{tool}, Messages: msgs, TokenHistory: history, TurnIDs: turns})
		if err != nil {
			t.Fatal(err)
		}
		if !res.OK || len(b.reqs) != 2 {
			t.Fatalf("ok %v after %d requests; want a refused call, then a valid one", res.OK, len(b.reqs))
		}
		return b.reqs
	}
	reqs := run(true, true)
	p := reqs[0].Prompt
	off1, off2 := strings.Index(p, raw1), strings.Index(p, "Sunny.")
	want := []backend.TokenSpan{{Offset: off1, Len: len(raw1), IDs: []int{1, 2, 3}}, {Offset: off2, Len: 3, IDs: []int{7}}}
	if off1 < 0 || off2 < 0 || !reqs[0].ReturnTokens || !spansEqual(reqs[0].TokenSpans, want) {
		t.Fatalf("first request: return_tokens %v, spans %+v; want %+v", reqs[0].ReturnTokens, reqs[0].TokenSpans, want)
	}
	want = append(want, backend.TokenSpan{Offset: len(p), Len: len(bad), IDs: []int{101, 201}})
	if r := reqs[1]; !r.ReturnTokens || !spansEqual(r.TokenSpans, want) || r.Prompt[len(p):len(p)+len(bad)] != bad {
		t.Errorf("retry: return_tokens %v, spans %+v; want %+v", r.ReturnTokens, r.TokenSpans, want)
	}
	for _, c := range []struct {
		name             string
		history, takesID bool
	}{{"no token history", false, true}, {"a backend without ids", true, false}} {
		for i, r := range run(c.history, c.takesID) {
			if r.ReturnTokens || len(r.TokenSpans) > 0 {
				t.Errorf("%s: request %d asked for ids or sent %d spans", c.name, i+1, len(r.TokenSpans))
			}
		}
	}
}

func spansEqual(a, b []backend.TokenSpan) bool {
	return slices.EqualFunc(a, b, func(x, y backend.TokenSpan) bool {
		return x.Offset == y.Offset && x.Len == y.Len && slices.Equal(x.IDs, y.IDs)
	})
}

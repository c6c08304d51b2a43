package agent

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/toolharness/toolharness/backend"
	"github.com/toolharness/toolharness/backend/llamacpp"
	"github.com/toolharness/toolharness/chat"
	"github.com/toolharness/toolharness/internal/llamacpptest"
)

// wholeCase runs a benchmark case on a real llama-server whose first
// attempt is an invalid call (forced), its retry a valid one.
func wholeCase(t *testing.T, srv *llamacpptest.Server, whole bool) CaseResult {
	t.Helper()
	c, err := llamacpp.New(llamacpp.Config{BaseURL: srv.URL, StallTimeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	script := llamacpptest.Scripted(c,
		"<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": 75}}\n</tool_call>",
		"<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>")
	zero := 0.0
	tool := chat.Tool{Name: "get_weather", Description: "Weather of a city.",
		Parameters: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`)}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := RunCase(ctx, script, Case{Template: "chatml", Format: "hermes", Mode: backend.ModeRaw, MaxRetries: 1, Whole: whole,
		Tools: []chat.Tool{tool}, Messages: []chat.Message{{Role: chat.RoleUser, Content: "Weather in Paris?"}},
		Options: backend.Options{Temperature: &zero}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Attempts) != 2 || !res.OK {
		t.Fatalf("attempts %d, ok %v; want a refused call then a valid one", len(res.Attempts), res.OK)
	}
	return res
}

// TestE2EWholeCaseSendsIDs: a benchmark case asked for whole replies
// (bench --whole) on a real llama-server gets every generated id of its
// failed attempt (non-streamed, return_tokens) and sends them back in the
// retry, which then reuses the whole first prompt and generation from the
// server's cache (its own timings.cache_n). The same case without it
// (streamed, text history) sends the attempt as text, whose tokens are
// not the ones generated: its retry reuses less.
func TestE2EWholeCaseSendsIDs(t *testing.T) {
	srv := llamacpptest.Start(t)
	res := wholeCase(t, srv, true)
	first, retry := res.Attempts[0], res.Attempts[1]
	if len(first.Tokens) == 0 || first.TokenText != 0 {
		t.Fatalf("first attempt: %d ids covering %d bytes of %d", len(first.Tokens), first.TokenText, len(first.Raw))
	}
	if slices.Equal(first.Tokens, srv.Tokenize(t, first.Raw)) {
		t.Fatal("the generated ids re-tokenise to themselves; the test would prove nothing")
	}
	held := first.Usage.PromptTokens + len(first.Tokens)
	t.Logf("whole: first prompt %d tokens + %d generated; retry reused %d of %d", first.Usage.PromptTokens, len(first.Tokens),
		retry.Usage.CachedTokens, retry.Usage.PromptTokens)
	if !retry.Usage.CachedKnown || retry.Usage.CachedTokens < held {
		t.Errorf("retry reused %d tokens; want at least the first prompt and generation, %d", retry.Usage.CachedTokens, held)
	}
	control := wholeCase(t, srv, false)
	c0, c1 := control.Attempts[0], control.Attempts[1]
	t.Logf("streamed (control): first prompt %d tokens, %d generated; retry reused %d of %d", c0.Usage.PromptTokens,
		c0.Usage.GeneratedTokens, c1.Usage.CachedTokens, c1.Usage.PromptTokens)
	if c0.Tokens != nil || c1.Usage.CachedTokens >= c0.Usage.PromptTokens+c0.Usage.GeneratedTokens {
		t.Errorf("control: %d ids kept, retry reused %d; want none kept and less than %d", len(c0.Tokens), c1.Usage.CachedTokens,
			c0.Usage.PromptTokens+c0.Usage.GeneratedTokens)
	}
}

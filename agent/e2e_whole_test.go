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
// attempt is an invalid call (forced), its retry a valid one. note is
// text the invalid call carries in an argument of its own.
func wholeCase(t *testing.T, srv *llamacpptest.Server, whole bool, note string) CaseResult {
	t.Helper()
	c, err := llamacpp.New(llamacpp.Config{BaseURL: srv.URL, StallTimeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	script := llamacpptest.Scripted(c,
		"<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": 75, \"note\": \""+note+"\"}}\n</tool_call>",
		"<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>")
	zero := 0.0
	tool := chat.Tool{Name: "get_weather", Description: "Weather of a city.",
		Parameters: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"},"note":{"type":"string"}},"required":["city"]}`)}
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

// TestE2EWholeCaseSendsIDs: a benchmark case's retry sends its failed
// attempt back as the attempt's generated ids, which do not re-tokenise
// to themselves, and reuses the whole first prompt and generation from
// the server's cache (its own timings.cache_n), streamed (bench's
// default) and whole (--whole, non-streamed with return_tokens) alike.
// An attempt holding a character split across tokens is where they part:
// the stream sends no id for the token ending inside it, so the streamed
// retry reuses up to there (ids) and not after (text), the whole one to
// the end. This is the evidence for --whole staying off by default: it
// gains only the tokens after a split character, and costs TTFT (the
// whole generation).
func TestE2EWholeCaseSendsIDs(t *testing.T) {
	srv := llamacpptest.Start(t)
	type row struct {
		whole    bool
		note     string
		complete bool // every generated id kept
	}
	reused := map[row]int{}
	for _, r := range []row{{true, "dry", true}, {false, "dry", true}, {true, splitChar, true}, {false, splitChar, false}} {
		res := wholeCase(t, srv, r.whole, r.note)
		first, retry := res.Attempts[0], res.Attempts[1]
		if len(first.Tokens) == 0 || (first.TokenText == 0) != r.complete {
			t.Fatalf("%+v: first attempt: %d ids covering %d bytes of %d", r, len(first.Tokens), first.TokenText, len(first.Raw))
		}
		if r.complete && slices.Equal(first.Tokens, srv.Tokenize(t, first.Raw)) {
			t.Fatal("the generated ids re-tokenise to themselves; the test would prove nothing")
		}
		held := first.Usage.PromptTokens + first.Usage.GeneratedTokens
		t.Logf("%+v: first prompt %d tokens + %d generated, %d ids kept; retry reused %d of %d", r, first.Usage.PromptTokens,
			first.Usage.GeneratedTokens, len(first.Tokens), retry.Usage.CachedTokens, retry.Usage.PromptTokens)
		if !retry.Usage.CachedKnown || retry.Usage.CachedTokens < first.Usage.PromptTokens+len(first.Tokens) {
			t.Errorf("%+v: retry reused %d tokens; want at least the first prompt and the ids kept, %d", r, retry.Usage.CachedTokens,
				first.Usage.PromptTokens+len(first.Tokens))
		}
		if r.complete && retry.Usage.CachedTokens < held-1 {
			t.Errorf("%+v: retry reused %d tokens; want the first prompt and generation, %d", r, retry.Usage.CachedTokens, held-1)
		}
		reused[r] = retry.Usage.CachedTokens
	}
	if s, w := reused[row{false, splitChar, false}], reused[row{true, splitChar, true}]; s >= w {
		t.Errorf("split character: streamed retry reused %d, whole %d; want less streamed", s, w)
	}
}

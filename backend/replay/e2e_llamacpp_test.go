package replay

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/toolharness/toolharness/backend"
	"github.com/toolharness/toolharness/backend/llamacpp"
	"github.com/toolharness/toolharness/internal/llamacpptest"
)

// TestE2ERecordReplayTokenFields records a token-exact exchange with a
// real llama-server (token spans and return_tokens in the request, the
// generated ids and the slot size in the response, token_prompt in the
// capabilities) and replays it byte for byte; other spans are another
// request.
func TestE2ERecordReplayTokenFields(t *testing.T) {
	srv := llamacpptest.Start(t)
	live, err := llamacpp.New(llamacpp.Config{BaseURL: srv.URL, Retries: -1, StallTimeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	// The span spells "abcabc" one id per character, which /tokenize
	// would merge: the ids are the request's own, not its text's.
	var perChar []int
	for _, r := range "abcabc" {
		perChar = append(perChar, srv.Tokenize(t, string(r))...)
	}
	merged := srv.Tokenize(t, "abcabc")
	if len(merged) >= len(perChar) {
		t.Fatalf("/tokenize gives %v for abcabc; the two spans must differ", merged)
	}
	prompt := "<|im_start|>user\nabc<|im_end|>\n<|im_start|>assistant\nabcabc<|im_end|>\n<|im_start|>user\nok<|im_end|>\n<|im_start|>assistant\n"
	span := backend.TokenSpan{Offset: strings.Index(prompt, "abcabc"), Len: 6, IDs: perChar}
	zero := 0.0
	req := backend.Request{Mode: backend.ModeRaw, Prompt: prompt, TokenSpans: []backend.TokenSpan{span}, ReturnTokens: true,
		Grammar: llamacpptest.Exactly("fine"), Options: backend.Options{Temperature: &zero}}
	got, recording := recordOne(t, live, req)
	if got.ErrText != "" || got.Response.Text != "fine" || len(got.Response.Tokens) == 0 || got.Response.Usage.SlotTokens == 0 {
		t.Fatalf("live: err %q text %q tokens %v slot %d notes %q", got.ErrText, got.Response.Text, got.Response.Tokens, got.Response.Usage.SlotTokens, got.Response.Notes)
	}
	recordingHas(t, recording, `"token_prompt":true`, `"token_spans":[{"offset":`, `"return_tokens":true`, `"tokens":[`, `"slot_tokens":`)
	p, err := NewReplayer(bytes.NewReader(recording))
	if err != nil {
		t.Fatal(err)
	}
	other := req
	other.TokenSpans = []backend.TokenSpan{{Offset: span.Offset, Len: span.Len, IDs: merged}}
	var me *MismatchError
	if _, err := p.Generate(context.Background(), other, nil); !errors.As(err, &me) || !strings.HasPrefix(me.Field, "token_spans") {
		t.Errorf("err %v; want a mismatch in token_spans", err)
	}
}

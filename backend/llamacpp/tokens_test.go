package llamacpp

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/toolharness/toolharness/backend"
	"github.com/toolharness/toolharness/backend/llamacpp/llamacpptest"
)

// spanPrompt is a two-turn ChatML prompt whose assistant turn, raw, was
// generated as one token per byte, and the token span that says so.
func spanPrompt(srv *llamacpptest.Server, bos, raw string) (string, backend.TokenSpan) {
	head := bos + "<|im_start|>user\nabc<|im_end|>\n<|im_start|>assistant\n"
	p := head + raw + "<|im_end|>\n<|im_start|>user\nok<|im_end|>\n<|im_start|>assistant\n"
	return p, backend.TokenSpan{Offset: len(head), Len: len(raw), IDs: srv.Tok.Bytes(raw)}
}

// TestMixedPrompt: a prompt with token spans goes as one mixed array, the
// ids in place of their text; a rendered BOS is stripped in front of it
// (the server adds its own to an array that starts with a string) and the
// span moves with it.
func TestMixedPrompt(t *testing.T) {
	srv := llamacpptest.New()
	t.Cleanup(srv.Close)
	srv.Script(srv.Tok.Tokenize("fine", true))
	prompt, span := spanPrompt(srv, llamacpptest.BOS, "abcabc")
	c, err := New(Config{BaseURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Generate(context.Background(), backend.Request{Mode: backend.ModeRaw, Prompt: prompt,
		TokenSpans: []backend.TokenSpan{span}, ReturnTokens: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text != "fine" || !slices.Equal(resp.Tokens, srv.Tok.Tokenize("fine", true)) {
		t.Errorf("response %q tokens %v", resp.Text, resp.Tokens)
	}
	got := srv.Prompts()[0]
	bos, _ := srv.Tok.ID(llamacpptest.BOS)
	head := srv.Tok.Tokenize(prompt[len(llamacpptest.BOS):span.Offset], true)
	want := append(append([]int{bos}, head...), span.IDs...)
	want = append(want, srv.Tok.Tokenize(prompt[span.Offset+span.Len:], true)...)
	if !got.Mixed || !slices.Equal(got.IDs, want) {
		t.Errorf("server read mixed=%v ids %v\nwant %v (one BOS, the span's ids in place)", got.Mixed, got.IDs, want)
	}
	if !strings.HasPrefix(string(got.Raw), `["<|im_start|>user\nabc`) {
		t.Errorf("prompt sent %.80s", got.Raw)
	}
}

// TestContextCheckCountsWhatIsSent: the budget is the server's exact count
// of the prompt as sent. The span's per-byte ids are four tokens more than
// its text re-tokenised, and a window that holds the text but not the ids
// refuses the mixed prompt only.
func TestContextCheckCountsWhatIsSent(t *testing.T) {
	srv := llamacpptest.New()
	t.Cleanup(srv.Close)
	srv.Script(srv.Tok.Tokenize("fine", true))
	prompt, span := spanPrompt(srv, "", "abcabc")
	asText := 1 + len(srv.Tok.Tokenize(prompt, true)) // with the server's BOS
	asSent := asText + len(span.IDs) - 2              // "abc" "abc" → six byte ids
	srv.NCtx = asSent
	c, err := New(Config{BaseURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Generate(context.Background(), backend.Request{Mode: backend.ModeRaw, Prompt: prompt, TokenSpans: []backend.TokenSpan{span}}, nil)
	want := fmt.Sprintf("prompt of %d tokens exceeds the context window of %d tokens", asSent, asSent)
	if !errors.Is(err, backend.ErrContextOverflow) || !strings.Contains(err.Error(), want) {
		t.Errorf("mixed prompt: %v; want a context overflow %q", err, want)
	}
	if _, err := c.Generate(context.Background(), backend.Request{Mode: backend.ModeRaw, Prompt: prompt}, nil); err != nil {
		t.Errorf("the same prompt as text (%d tokens) fits %d: %v", asText, asSent, err)
	}
	if n := len(srv.Prompts()); n != 1 {
		t.Errorf("%d completions sent, want only the one that fits", n)
	}
}

func TestBadSpans(t *testing.T) {
	c, err := New(Config{BaseURL: "http://127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	for _, spans := range [][]backend.TokenSpan{
		{{Offset: 2, Len: 10, IDs: []int{1}}},                                    // past the end
		{{Offset: 1, Len: 1, IDs: nil}},                                          // no ids
		{{Offset: 3, Len: 1, IDs: []int{1}}, {Offset: 1, Len: 1, IDs: []int{2}}}, // out of order
	} {
		_, err := c.Generate(context.Background(), backend.Request{Mode: backend.ModeRaw, Prompt: "abcde", TokenSpans: spans}, nil)
		if err == nil || !strings.HasPrefix(err.Error(), "llamacpp: token span") {
			t.Errorf("%+v: %v; want a refused span", spans, err)
		}
	}
}

// TestNumCtxIsNotSilentlyIgnored: llama-server's window is fixed at start;
// a request that asks for another one is served and told so.
func TestNumCtxIsNotSilentlyIgnored(t *testing.T) {
	srv := llamacpptest.New()
	t.Cleanup(srv.Close)
	srv.Script(srv.Tok.Tokenize("fine", true), srv.Tok.Tokenize("fine", true))
	c, err := New(Config{BaseURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		numCtx int
		note   bool
	}{{8192, true}, {4096, false}} {
		resp, err := c.Generate(context.Background(), backend.Request{Mode: backend.ModeRaw, Prompt: "hi", Options: backend.Options{NumCtx: tt.numCtx}}, nil)
		want := fmt.Sprintf("ignored the requested context window of %d tokens: llama-server's is fixed at start, 4096 tokens per slot", tt.numCtx)
		found := slices.ContainsFunc(resp.Notes, func(n string) bool { return strings.HasPrefix(n, want) })
		if err != nil || found != tt.note {
			t.Errorf("num_ctx %d: err %v, notes %q; want the note: %v", tt.numCtx, err, resp.Notes, tt.note)
		}
	}
}

// TestSplitCharacterKeepsIDPrefix: a streamed answer whose "é" was
// generated as two byte tokens gets no event for the first byte (the
// server sends none for a token that ends inside a UTF-8 character), so
// the ids are one short. The ids up to the split still stand for their
// text exactly and are returned, with TokenText saying how far they go;
// asked without a stream (no callback) the answer carries every id.
func TestSplitCharacterKeepsIDPrefix(t *testing.T) {
	const text = "caf\u00e9 ok"
	for _, tt := range []struct {
		name     string
		onChunk  func(string) error
		wantText int // TokenText
	}{
		{"streamed", func(string) error { return nil }, len("caf")},
		{"no callback, not streamed", nil, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := llamacpptest.New()
			t.Cleanup(srv.Close)
			gen := srv.Tok.Bytes(text) // é as its two bytes, which the tokenizer would not split
			srv.Script(gen)
			c, err := New(Config{BaseURL: srv.URL})
			if err != nil {
				t.Fatal(err)
			}
			resp, err := c.Generate(context.Background(), backend.Request{Mode: backend.ModeRaw, Prompt: "hi", ReturnTokens: true}, tt.onChunk)
			if err != nil {
				t.Fatal(err)
			}
			want := gen
			if tt.wantText > 0 {
				want = gen[:tt.wantText]
			}
			if resp.Text != text || resp.TokenText != tt.wantText || !slices.Equal(resp.Tokens, want) {
				t.Fatalf("text %q, TokenText %d, tokens %v; want TokenText %d, tokens %v (notes %q)",
					resp.Text, resp.TokenText, resp.Tokens, tt.wantText, want, resp.Notes)
			}
			if tt.wantText > 0 && (len(resp.Notes) != 1 || !strings.Contains(resp.Notes[0], "the first 3 bytes go back as ids, the rest as text")) {
				t.Errorf("notes %q", resp.Notes)
			}
		})
	}
}

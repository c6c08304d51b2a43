package llamacpp

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/toolharness/toolharness/backend"
	"github.com/toolharness/toolharness/internal/llamacpptest"
	"github.com/toolharness/toolharness/internal/ollamatest"
)

// The end-to-end tests of this file run the client against a real
// llama-server (internal/llamacpptest: `make llamacpp` builds it) serving
// a random model with the qwen2 vocabulary; grammars script its text.

func e2eClient(t *testing.T, srv *llamacpptest.Server) *Client {
	t.Helper()
	c, err := New(Config{BaseURL: srv.URL, StallTimeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func e2eCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

const e2eHead = "<|im_start|>system\nYou are terse.<|im_end|>\n<|im_start|>user\nWhat is in notes.txt?<|im_end|>\n<|im_start|>assistant\n"

// TestE2ELlamaServer runs the client against one real llama-server (one
// model load for the package's end-to-end tests).
func TestE2ELlamaServer(t *testing.T) {
	srv := llamacpptest.Start(t)
	t.Run("mixed prompt", func(t *testing.T) { testMixedPrompt(t, srv) })
	t.Run("context budget", func(t *testing.T) { testContextBudget(t, srv) })
	t.Run("split character", func(t *testing.T) { testSplitCharacter(t, srv) })
	t.Run("budget counts what is sent", func(t *testing.T) { testBudgetCountsWhatIsSent(t, srv) })
	t.Run("num_ctx note", func(t *testing.T) { testNumCtxNote(t, srv) })
}

// testMixedPrompt streams a forced answer, then sends it back inside a
// mixed string/id prompt: the server takes the ids verbatim and reuses
// everything its slot held (prompt plus generated ids), in its own
// cache_n.
func testMixedPrompt(t *testing.T, srv *llamacpptest.Server) {
	c := e2eClient(t, srv)
	ctx := e2eCtx(t)
	const answer = "<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"notes.txt\"}}\n</tool_call>"
	var chunks []string
	zero := 0.0
	first, err := c.Generate(ctx, backend.Request{Mode: backend.ModeRaw, Prompt: e2eHead, Grammar: llamacpptest.Exactly(answer),
		ReturnTokens: true, Options: backend.Options{Temperature: &zero}}, func(s string) error { chunks = append(chunks, s); return nil })
	if err != nil {
		t.Fatal(err)
	}
	if first.Text != answer || strings.Join(chunks, "") != answer || len(chunks) < 2 {
		t.Fatalf("text %q in %d chunks, want %q streamed", first.Text, len(chunks), answer)
	}
	if first.StopReason != "stop" || len(first.Tokens) == 0 || first.TokenText != 0 || !first.Usage.CachedKnown {
		t.Fatalf("stop %q, %d ids (TokenText %d), cache known %v; notes %q", first.StopReason, len(first.Tokens), first.TokenText, first.Usage.CachedKnown, first.Notes)
	}
	retok := srv.Tokenize(t, answer)
	t.Logf("generated %d ids, /tokenize of the same text %d ids (equal: %v)", len(first.Tokens), len(retok), slices.Equal(first.Tokens, retok))
	if first.Usage.SlotTokens != first.Usage.PromptTokens+len(first.Tokens) {
		t.Errorf("slot holds %d tokens, want the prompt %d and the %d generated ids", first.Usage.SlotTokens, first.Usage.PromptTokens, len(first.Tokens))
	}
	prompt := e2eHead + answer + "<|im_end|>\n<|im_start|>user\n<tool_response>\nnothing\n</tool_response><|im_end|>\n<|im_start|>assistant\n"
	span := backend.TokenSpan{Offset: len(e2eHead), Len: len(answer), IDs: first.Tokens}
	second, err := c.Generate(ctx, backend.Request{Mode: backend.ModeRaw, Prompt: prompt, TokenSpans: []backend.TokenSpan{span},
		Grammar: llamacpptest.Exactly("Empty."), ReturnTokens: true, Options: backend.Options{Temperature: &zero}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if second.Text != "Empty." || second.Usage.CachedTokens != first.Usage.SlotTokens {
		t.Errorf("second: text %q, reused %d; want all %d tokens the slot held", second.Text, second.Usage.CachedTokens, first.Usage.SlotTokens)
	}
}

// testContextBudget: a prompt longer than the window is refused before
// it is sent, counted by the server's own /tokenize; the server saw no
// completion request (its slot started no task).
func testContextBudget(t *testing.T, srv *llamacpptest.Server) {
	c := e2eClient(t, srv)
	ctx := e2eCtx(t)
	if n, err := c.ContextSize(ctx, ""); err != nil || n != 8192 {
		t.Fatalf("ContextSize = %d, %v; want 8192", n, err)
	}
	long := e2eHead + strings.Repeat("The notes list every file twice. ", 1300)
	mark := len(srv.Log())
	_, err := c.Generate(ctx, backend.Request{Mode: backend.ModeRaw, Prompt: long, Options: backend.Options{MaxTokens: 8}}, nil)
	var be *backend.Error
	if !errors.As(err, &be) || be.Kind != backend.KindContextOverflow || !strings.Contains(be.Message, "exceeds the context window of 8192 tokens") {
		t.Fatalf("err = %v, want a context overflow refused by the client", err)
	}
	if log := srv.Log()[mark:]; strings.Contains(log, "processing task") {
		t.Errorf("the server started a task for the refused prompt:\n%s", log)
	}
	// The same client still completes a prompt that fits, and the log
	// shows it: the check above can fail.
	if _, err := c.Generate(ctx, backend.Request{Mode: backend.ModeRaw, Prompt: e2eHead, Options: backend.Options{MaxTokens: 2}}, nil); err != nil {
		t.Fatal(err)
	}
	if log, ok := srv.WaitLog(mark, func(log string) bool { return strings.Contains(log, "processing task") }); !ok {
		t.Errorf("the server log does not show its tasks within 10 s; the check above proves nothing:\n%s", log)
	}
}

// testSplitCharacter forces an answer holding a character no qwen2
// token holds whole, so that some generated token ends inside it. The
// stream carries no id for that token: the client keeps the ids up to the
// character (TokenText) and the next prompt, ids then text, reuses the
// slot up to there. Asked without a stream, every id comes back.
func testSplitCharacter(t *testing.T, srv *llamacpptest.Server) {
	vf, err := ollamatest.VocabFile("qwen2")
	if err != nil {
		t.Fatal(err)
	}
	v, err := ollamatest.LoadVocab(vf)
	if err != nil {
		t.Fatal(err)
	}
	const char = "\U0001D518" // 𝔘, four bytes
	if v.Holds(char) {
		t.Fatalf("a qwen2 token holds %q whole; the test needs a character that is always split", char)
	}
	answer := "Found it: " + char + " in notes."
	c := e2eClient(t, srv)
	ctx := e2eCtx(t)
	zero := 0.0
	req := backend.Request{Mode: backend.ModeRaw, Prompt: e2eHead, Grammar: llamacpptest.Exactly(answer),
		ReturnTokens: true, Options: backend.Options{Temperature: &zero}}
	streamed, err := c.Generate(ctx, req, func(string) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	at := strings.Index(answer, char)
	if streamed.Text != answer || streamed.TokenText <= 0 || streamed.TokenText > at {
		t.Fatalf("text %q, ids for the first %d bytes; want ids up to at most byte %d (notes %q)", streamed.Text, streamed.TokenText, at, streamed.Notes)
	}
	t.Logf("streamed: %d ids for the first %d of %d bytes; notes %q", len(streamed.Tokens), streamed.TokenText, len(answer), streamed.Notes)
	note := fmt.Sprintf("the first %d bytes go back as ids, the rest as text", streamed.TokenText)
	if !slices.ContainsFunc(streamed.Notes, func(n string) bool { return strings.Contains(n, note) }) {
		t.Errorf("notes %q; want one saying %q", streamed.Notes, note)
	}

	// Back as ids up to the character, text after: the slot is reused up
	// to there.
	covered := answer[:streamed.TokenText]
	prompt := e2eHead + answer + "<|im_end|>\n<|im_start|>user\nthanks<|im_end|>\n<|im_start|>assistant\n"
	span := backend.TokenSpan{Offset: len(e2eHead), Len: len(covered), IDs: streamed.Tokens}
	next, err := c.Generate(ctx, backend.Request{Mode: backend.ModeRaw, Prompt: prompt, TokenSpans: []backend.TokenSpan{span},
		Options: backend.Options{MaxTokens: 1}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if min := streamed.Usage.PromptTokens + len(streamed.Tokens); next.Usage.CachedTokens < min {
		t.Errorf("reused %d tokens, want at least the prompt and the %d ids before the character (%d)", next.Usage.CachedTokens, len(streamed.Tokens), min)
	}

	// Without a stream the answer carries every id.
	whole, err := c.Generate(ctx, req, nil)
	if err != nil {
		t.Fatal(err)
	}
	if whole.Text != answer || whole.TokenText != 0 || len(whole.Tokens) <= len(streamed.Tokens) {
		t.Fatalf("not streamed: text %q, %d ids, TokenText %d; want ids for all of it (notes %q)", whole.Text, len(whole.Tokens), whole.TokenText, whole.Notes)
	}
}

// testBudgetCountsWhatIsSent: the budget is the server's count of the
// prompt as sent, ids included. A span spelled one id per character is
// many more tokens than its text re-tokenised; the filler is sized so
// that the prompt fits the window as text and not as sent. The mixed
// prompt is refused before it is sent, the same prompt as text is served.
func testBudgetCountsWhatIsSent(t *testing.T, srv *llamacpptest.Server) {
	c := e2eClient(t, srv)
	ctx := e2eCtx(t)
	const window = 8192
	spanText := strings.Repeat("abcdefgh", 200)
	var ids []int
	for _, r := range spanText {
		ids = append(ids, srv.Tokenize(t, string(r))...)
	}
	const unit = "The notes list every file twice. "
	perUnit := len(srv.Tokenize(t, strings.Repeat(unit, 100))) / 100
	build := func(k int) (string, backend.TokenSpan, int, int) {
		head := e2eHead + strings.Repeat(unit, k) + "\n"
		prompt := head + spanText + "\n<|im_end|>\n<|im_start|>assistant\n"
		span := backend.TokenSpan{Offset: len(head), Len: len(spanText), IDs: ids}
		asText := len(srv.Tokenize(t, prompt))
		asSent := len(srv.Tokenize(t, head)) + len(ids) + len(srv.Tokenize(t, prompt[len(head)+len(spanText):]))
		return prompt, span, asText, asSent
	}
	_, _, base, baseSent := build(0)
	// Aim the text count half-way between where it fits and where the
	// ids would.
	k := (window - (base+baseSent)/2) / perUnit
	prompt, span, asText, asSent := build(k)
	if asText >= window-8 || asSent <= window {
		t.Fatalf("as text %d tokens, as sent %d: the prompt must fit %d as text and not as sent; the test would prove nothing", asText, asSent, window)
	}
	mark := len(srv.Log())
	_, err := c.Generate(ctx, backend.Request{Mode: backend.ModeRaw, Prompt: prompt, TokenSpans: []backend.TokenSpan{span}, Options: backend.Options{MaxTokens: 1}}, nil)
	want := fmt.Sprintf("prompt of %d tokens plus 1 to generate exceeds the context window of %d tokens", asSent, window)
	if !errors.Is(err, backend.ErrContextOverflow) || !strings.Contains(err.Error(), want) {
		t.Fatalf("mixed prompt: %v; want a context overflow %q", err, want)
	}
	if log := srv.Log()[mark:]; strings.Contains(log, "processing task") {
		t.Errorf("the server started a task for the refused prompt:\n%s", log)
	}
	resp, err := c.Generate(ctx, backend.Request{Mode: backend.ModeRaw, Prompt: prompt, Options: backend.Options{MaxTokens: 1}}, nil)
	if err != nil {
		t.Fatalf("the same prompt as text (%d tokens) fits %d: %v", asText, window, err)
	}
	if resp.Usage.PromptTokens != asText {
		t.Errorf("the server evaluated a prompt of %d tokens, /tokenize counted %d", resp.Usage.PromptTokens, asText)
	}
}

// testNumCtxNote: llama-server's window is fixed at start; a request that
// asks for another one is served and told so, one that asks for the
// server's own is not.
func testNumCtxNote(t *testing.T, srv *llamacpptest.Server) {
	c := e2eClient(t, srv)
	ctx := e2eCtx(t)
	for _, tt := range []struct {
		numCtx int
		note   bool
	}{{16384, true}, {8192, false}} {
		resp, err := c.Generate(ctx, backend.Request{Mode: backend.ModeRaw, Prompt: e2eHead, Options: backend.Options{NumCtx: tt.numCtx, MaxTokens: 2}}, nil)
		want := fmt.Sprintf("ignored the requested context window of %d tokens: llama-server's is fixed at start, 8192 tokens per slot", tt.numCtx)
		found := slices.ContainsFunc(resp.Notes, func(n string) bool { return strings.HasPrefix(n, want) })
		if err != nil || found != tt.note {
			t.Errorf("num_ctx %d: err %v, notes %q; want the note: %v", tt.numCtx, err, resp.Notes, tt.note)
		}
	}
}

// TestE2ELlamaServerBOS: on a model whose tokenizer adds a BOS (qwen2's
// <|endoftext|>, add_bos_token on), a prompt rendered with the BOS text in
// front goes without it, said in the notes, so the model sees one BOS;
// a token span moves with the strip, and the mixed prompt of the next
// turn (a string first, so the server adds its BOS) reuses everything the
// slot held.
func TestE2ELlamaServerBOS(t *testing.T) {
	vf, err := ollamatest.VocabFile("qwen2")
	if err != nil {
		t.Fatal(err)
	}
	spec := ollamatest.VocabSpec(vf)
	spec.AddBOS = true
	srv := llamacpptest.Start(t, llamacpptest.WithSpec(spec))
	c := e2eClient(t, srv)
	ctx := e2eCtx(t)
	const bos, answer = "<|endoftext|>", "<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"notes.txt\"}}\n</tool_call>"
	note := `stripped the rendered BOS "` + bos + `" from the prompt: the server adds its own`
	zero := 0.0
	first, err := c.Generate(ctx, backend.Request{Mode: backend.ModeRaw, Prompt: bos + e2eHead, Grammar: llamacpptest.Exactly(answer),
		ReturnTokens: true, Options: backend.Options{Temperature: &zero}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := 1 + len(srv.Tokenize(t, e2eHead)); first.Text != answer || first.Usage.PromptTokens != want || !slices.Contains(first.Notes, note) {
		t.Fatalf("text %q, the server evaluated %d prompt tokens (want %d: one BOS), notes %q", first.Text, first.Usage.PromptTokens, want, first.Notes)
	}
	prompt := bos + e2eHead + answer + "<|im_end|>\n<|im_start|>user\n<tool_response>\nnothing\n</tool_response><|im_end|>\n<|im_start|>assistant\n"
	span := backend.TokenSpan{Offset: len(bos + e2eHead), Len: len(answer), IDs: first.Tokens}
	second, err := c.Generate(ctx, backend.Request{Mode: backend.ModeRaw, Prompt: prompt, TokenSpans: []backend.TokenSpan{span},
		Options: backend.Options{MaxTokens: 1}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if second.Usage.CachedTokens != first.Usage.SlotTokens || !slices.Contains(second.Notes, note) {
		t.Errorf("second: reused %d of the %d tokens the slot held, notes %q", second.Usage.CachedTokens, first.Usage.SlotTokens, second.Notes)
	}
}

package llamacpp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/toolharness/toolharness/backend"
)

// TestReuseFromCacheN: the reused prompt prefix is timings.cache_n and
// nothing else. tokens_cached (every token the slot holds after the
// request, prompt plus generated) is kept apart as SlotTokens; a server
// that sends no cache_n leaves the reuse unknown instead of guessed.
func TestReuseFromCacheN(t *testing.T) {
	tests := []struct {
		name        string
		file        string
		nonStream   bool
		want        backend.Usage
		wantNoReuse bool
	}{
		// cache_n 0 of 236, while tokens_cached says 243: nothing reused.
		{name: "non-streamed, nothing reused", file: "completion.json", nonStream: true,
			want: backend.Usage{PromptTokens: 236, GeneratedTokens: 8, CachedTokens: 0, CachedKnown: true, SlotTokens: 243}},
		{name: "streamed final chunk", file: "completion_stream.sse",
			want: backend.Usage{PromptTokens: 236, GeneratedTokens: 22, CachedTokens: 235, CachedKnown: true, SlotTokens: 257}},
		{name: "mixed prompt answer", file: "completion_return_tokens.json", nonStream: true,
			want: backend.Usage{PromptTokens: 250, GeneratedTokens: 10, CachedTokens: 236, CachedKnown: true, SlotTokens: 259}},
		// Older servers: no cache_n, so tokens_cached must not stand in.
		{name: "no cache_n", file: "completion_legacy.json", nonStream: true,
			want: backend.Usage{PromptTokens: 236, GeneratedTokens: 8, SlotTokens: 243}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := newFixtureServer(t, llama3(reply{file: tt.file}))
			c := newClient(t, fs, Config{NonStreaming: tt.nonStream})
			got, err := run(t, c, backend.Request{Mode: backend.ModeRaw, Prompt: llama3Prompt})
			if err != nil {
				t.Fatal(err)
			}
			got.Usage.PromptDuration, got.Usage.GenerateDuration = 0, 0
			if d := cmp.Diff(tt.want, got.Usage); d != "" {
				t.Errorf("usage (-want +got):\n%s", d)
			}
			// The figure a reader takes for reuse is never tokens_cached.
			var raw struct {
				TokensCached int `json:"tokens_cached"`
			}
			json.Unmarshal(finalObject(t, tt.file), &raw)
			if got.Usage.CachedTokens == raw.TokensCached {
				t.Errorf("CachedTokens %d equals tokens_cached", got.Usage.CachedTokens)
			}
		})
	}
}

// finalObject is the non-streamed answer, or the last event of a stream.
func finalObject(t *testing.T, file string) []byte {
	b := readFixture(t, file)
	if len(b) > 0 && b[0] == '{' {
		return b
	}
	var last []byte
	for _, line := range bytes.Split(b, []byte("\n")) {
		if len(line) > 6 && string(line[:6]) == "data: " {
			last = line[6:]
		}
	}
	return last
}

func TestSlots(t *testing.T) {
	fs := newFixtureServer(t, map[string][]reply{"/slots": {{file: "slots.json"}, {status: 501, file: "error_not_supported.json"}}})
	c := newClient(t, fs, Config{})
	got, err := c.Slots(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := []Slot{{ID: 0, NCtx: 4096, PromptTokens: 236, PromptTokensProcessed: 1, PromptTokensCache: 235}, {ID: 1, NCtx: 4096, IsProcessing: true}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("Slots (-want +got):\n%s", d)
	}
	if _, err := c.Slots(context.Background()); !errors.Is(err, backend.ErrUnsupported) {
		t.Errorf("--no-slots server: %v, want unsupported", err)
	}
}

// TestReturnTokens: ids come back only when asked, and only once the
// server's /detokenize confirms they stand for exactly the text (here
// after dropping the end-of-generation id the server keeps in tokens).
func TestReturnTokens(t *testing.T) {
	routes := llama3(reply{file: "completion_return_tokens.json"})
	routes["/detokenize"] = []reply{{file: "detokenize.json"}, {file: "detokenize_trimmed.json"}}
	fs := newFixtureServer(t, routes)
	c := newClient(t, fs, Config{NonStreaming: true})
	resp, err := c.Generate(context.Background(), backend.Request{Mode: backend.ModeRaw, Prompt: llama3Prompt, ReturnTokens: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []int{27000, 27001, 27002, 27003, 27004, 27005, 27006, 27007, 27011}
	if d := cmp.Diff(want, resp.Tokens); d != "" {
		t.Errorf("Tokens (-want +got):\n%s", d)
	}
	var body map[string]any
	json.Unmarshal([]byte(fs.requests("/completion")[0].Body), &body)
	if body["return_tokens"] != true {
		t.Errorf("return_tokens not sent: %v", body)
	}
	if n := len(fs.requests("/detokenize")); n != 2 {
		t.Errorf("%d /detokenize requests, want 2", n)
	}

	// Ids that never match the text are not returned, and the note says so.
	routes = llama3(reply{file: "completion_return_tokens.json"})
	routes["/detokenize"] = []reply{{body: `{"content":"something else entirely, longer than the text"}`}, {body: `{"content":"x"}`}}
	fs = newFixtureServer(t, routes)
	c = newClient(t, fs, Config{NonStreaming: true})
	resp, err = c.Generate(context.Background(), backend.Request{Mode: backend.ModeRaw, Prompt: llama3Prompt, ReturnTokens: true}, nil)
	if err != nil || resp.Tokens != nil || len(resp.Notes) != 2 {
		t.Errorf("mismatching ids: err %v, tokens %v, notes %q; want no tokens and a note", err, resp.Tokens, resp.Notes)
	}
}

func TestStreamErrorShapes(t *testing.T) {
	for _, file := range []string{"completion_stream_error.sse", "completion_stream_error_old.sse"} {
		fs := newFixtureServer(t, llama3(reply{file: file}))
		c := newClient(t, fs, Config{})
		got, err := run(t, c, backend.Request{Mode: backend.ModeRaw, Prompt: llama3Prompt})
		var be *backend.Error
		if !errors.As(err, &be) || be.Status != 500 || be.Message != "Failed to decode the batch" || !be.Consumed || got.Text != "<tool_call>\n{\"" {
			t.Errorf("%s: %v, text %q; want the 500 error event, consumed, the text kept", file, err, got.Text)
		}
	}
}

func TestRequestErrors(t *testing.T) {
	for _, tt := range []struct {
		file   string
		status int
		kind   backend.Kind
	}{
		{"error_context.json", 400, backend.KindContextOverflow},
		{"error_invalid_tokens.json", 400, backend.KindServer},
		{"error_no_slot.json", 503, backend.KindServer},
	} {
		fs := newFixtureServer(t, llama3(reply{status: tt.status, file: tt.file}))
		c := newClient(t, fs, Config{Retries: -1})
		_, err := run(t, c, backend.Request{Mode: backend.ModeRaw, Prompt: llama3Prompt})
		var be *backend.Error
		if !errors.As(err, &be) || be.Kind != tt.kind || be.Status != tt.status {
			t.Errorf("%s: %v; want %s HTTP %d", tt.file, err, tt.kind, tt.status)
		}
	}
}

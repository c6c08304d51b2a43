package llamacpp

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/toolharness/toolharness/backend"
	"github.com/toolharness/toolharness/backend/internal/transport"
)

// FuzzReadStream feeds arbitrary bytes to the SSE reader, seeded with the
// fixtures. It must never panic, and whatever it returns keeps the
// contract: Text is exactly the delivered chunks, and a success has seen
// the final event.
func FuzzReadStream(f *testing.F) {
	for _, name := range []string{"completion_stream.sse", "completion_stream_word.sse", "completion_stream_cut.sse", "completion_stream_error.sse", "completion_stream_error_old.sse", "completion.json", "completion_return_tokens.json"} {
		f.Add(readFixture(f, name))
	}
	f.Add([]byte("data: {\"content\":\"a\"}\r\n\r\ndata: [DONE]\n\n"))
	f.Add([]byte("error: {\"code\":500,\"message\":\"x\"}\n\n"))
	c, err := New(Config{BaseURL: "http://127.0.0.1:1", StallTimeout: time.Minute})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		k := transport.Watch(context.Background(), Name, c.cfg.StallTimeout)
		defer k.Stop()
		var chunks []string
		var resp answer
		out := transport.NewDelivery(time.Now(), func(s string) error {
			chunks = append(chunks, s)
			return nil
		})
		err := c.readStream(k, bytes.NewReader(data), out, &resp)
		if strings.Join(chunks, "") != out.Text() {
			t.Fatalf("text %q is not the chunks %q", out.Text(), chunks)
		}
		if err == nil && !bytes.Contains(data, []byte("stop")) {
			t.Fatalf("success without a final event in %q", data)
		}
		if err != nil {
			if _, ok := err.(*backend.Error); !ok {
				t.Fatalf("error %v is not a *backend.Error", err)
			}
		}
	})
}

// FuzzMixedPrompt: for any prompt and spans that checkSpans accepts, the
// mixed array holds the text outside the spans, in order, and each span's
// ids in its place; spans it refuses are never built.
func FuzzMixedPrompt(f *testing.F) {
	f.Add(llama3Prompt, 17, 5, 3)
	f.Add("<|im_start|>assistant\nabcabc<|im_end|>\n", 22, 6, 6)
	f.Add("x", 0, 1, 1)
	f.Fuzz(func(t *testing.T, text string, off, n, ids int) {
		span := backend.TokenSpan{Offset: off, Len: n}
		for i := range min(max(ids, 0), 64) {
			span.IDs = append(span.IDs, 1000+i)
		}
		spans := []backend.TokenSpan{span}
		if checkSpans(text, spans) != nil {
			return
		}
		parts, ok := mixedPrompt(text, spans).([]any)
		if !ok {
			t.Fatal("spans given but the prompt is not an array")
		}
		var rebuilt strings.Builder
		seen := 0
		for _, p := range parts {
			switch v := p.(type) {
			case string:
				rebuilt.WriteString(v)
			case int:
				if seen == 0 {
					rebuilt.WriteString(text[off : off+n])
				}
				if v != span.IDs[seen] {
					t.Fatalf("id %d is %d, want %d", seen, v, span.IDs[seen])
				}
				seen++
			}
		}
		if rebuilt.String() != text || seen != len(span.IDs) {
			t.Fatalf("parts %v do not rebuild %q with %d ids", parts, text, len(span.IDs))
		}
	})
}

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
	for _, name := range []string{"completion_stream.sse", "completion_stream_word.sse", "completion_stream_cut.sse", "completion_stream_error.sse", "completion.json"} {
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
		var resp backend.Response
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

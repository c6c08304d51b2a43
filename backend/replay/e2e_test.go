package replay

import (
	"context"
	"testing"
	"time"

	"github.com/tmc/langchaingo/llms/ollama"

	"github.com/toolharness/toolharness/backend"
	"github.com/toolharness/toolharness/backend/langchain"
	"github.com/toolharness/toolharness/chat"
	"github.com/toolharness/toolharness/internal/ollamatest"
)

var tiny ollamatest.Lazy

func TestMain(m *testing.M) { tiny.Main(m) }

// liveSession talks to b as an agent would: two chat turns, a raw prompt
// with a stop sequence, and a turn the caller cancels mid-stream.
func liveSession(t *testing.T, b backend.Backend) []result {
	t.Helper()
	base, cancelAll := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancelAll()
	opts := backend.Options{Temperature: new(0.0), Seed: new(5), MaxTokens: 12}
	var out []result
	gen := func(ctx context.Context, req backend.Request, onChunk func(*result, string)) {
		var r result
		resp, err := b.Generate(ctx, req, func(s string) error {
			r.Chunks = append(r.Chunks, s)
			if onChunk != nil {
				onChunk(&r, s)
			}
			return nil
		})
		// The client-measured times differ between live and replay only in
		// the live run itself; replay returns the recorded ones.
		r.Response = resp
		observe(&r, err)
		out = append(out, r)
	}
	msgs := []chat.Message{{Role: chat.RoleSystem, Content: "You call tools."}, {Role: chat.RoleUser, Content: "Weather in Paris?"}}
	gen(base, backend.Request{Mode: backend.ModeChat, Messages: msgs, Options: opts}, nil)
	msgs = append(msgs, chat.Message{Role: chat.RoleAssistant, Raw: out[0].Response.Text},
		chat.Message{Role: chat.RoleUser, Content: "And <in> Rome & Lyon?"})
	gen(base, backend.Request{Mode: backend.ModeChat, Messages: msgs, Options: opts}, nil)
	gen(base, backend.Request{Mode: backend.ModeRaw, Prompt: "Weather in Paris?", Stop: []string{"\n"}, Options: opts}, nil)
	ctx, cancel := context.WithCancel(base)
	defer cancel()
	long := opts
	long.MaxTokens = 200
	gen(ctx, backend.Request{Mode: backend.ModeChat, Messages: msgs[:2], Options: long}, func(r *result, _ string) {
		if len(r.Chunks) == 3 {
			cancel()
		}
	})
	return out
}

func TestE2ERecordReplayOllama(t *testing.T) {
	srv := tiny.Get(t)
	m, err := ollama.New(ollama.WithServerURL(srv.URL), ollama.WithModel(srv.Model))
	if err != nil {
		t.Fatal(err)
	}
	lb, err := langchain.New(m, langchain.Config{})
	if err != nil {
		t.Fatal(err)
	}
	live, recording := roundTrip(t, lb, func(b backend.Backend) []result { return liveSession(t, b) })
	if live[0].ErrText != "" || len(live[0].Chunks) < 2 || live[3].Kind != backend.KindCanceled || !live[3].Consumed {
		t.Fatalf("live session did not go as planned: %+v", live)
	}
	t.Logf("recorded %d bytes in %d exchanges", len(recording), len(live))
}

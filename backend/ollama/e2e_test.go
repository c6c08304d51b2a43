package ollama

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ollama/ollama/api"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/toolharness/toolharness/backend"
	"github.com/toolharness/toolharness/backend/internal/backendtest"
	"github.com/toolharness/toolharness/backend/internal/stallproxy"
	"github.com/toolharness/toolharness/chat"
	"github.com/toolharness/toolharness/internal/ollamatest"
)

var tiny ollamatest.Lazy

func TestMain(m *testing.M) { tiny.Main(m) }

func newBackend(t *testing.T, srv *ollamatest.Server, cfg Config) *Backend {
	t.Helper()
	cfg.Host = srv.URL
	b, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func ctxFor(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func ptr[T any](v T) *T { return &v }

const chatPrompt = "<|im_start|>system\nYou call tools.<|im_end|>\n<|im_start|>user\nWeather in Paris?<|im_end|>\n<|im_start|>assistant\n"

var chatMessages = []chat.Message{
	{Role: chat.RoleSystem, Content: "You call tools."},
	{Role: chat.RoleUser, Content: "Weather in Paris?"},
}

func request(srv *ollamatest.Server, mode backend.Mode) backend.Request {
	r := backend.Request{Model: srv.Model, Mode: mode, Options: backend.Options{MaxTokens: 20, Seed: ptr(5)}}
	if mode == backend.ModeRaw {
		r.Prompt = chatPrompt
	} else {
		r.Messages = chatMessages
	}
	return r
}

var modes = []backend.Mode{backend.ModeRaw, backend.ModeChat}

func errKind(err error) backend.Kind {
	var e *backend.Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return ""
}

// TestE2EStreamingAndUsage checks both modes stream in several chunks whose
// concatenation is the text, with exact usage figures.
func TestE2EStreamingAndUsage(t *testing.T) {
	srv := tiny.Get(t)
	b := newBackend(t, srv, Config{})
	for _, mode := range modes {
		t.Run(string(mode), func(t *testing.T) {
			resp := backendtest.Stream(t, b, request(srv, mode), 5)
			u := resp.Usage
			// The chat template renders exactly chatPrompt.
			if u.PromptTokens != ollamatest.TokenCount(chatPrompt) || u.GeneratedTokens != 20 || len(resp.Text) != 20 {
				t.Errorf("usage %+v, text %d bytes; want %d prompt tokens, 20 generated", u, len(resp.Text), ollamatest.TokenCount(chatPrompt))
			}
			if resp.StopReason != "length" || u.CachedKnown || u.TimeToFirstChunk <= 0 || u.GenerateDuration <= 0 || u.Total < u.GenerateDuration {
				t.Errorf("stop %q usage %+v", resp.StopReason, u)
			}
		})
	}
}

// TestE2EStopSequence: see backendtest.StopSequence.
func TestE2EStopSequence(t *testing.T) {
	srv := tiny.Get(t)
	b := newBackend(t, srv, Config{})
	for _, mode := range modes {
		t.Run(string(mode), func(t *testing.T) { backendtest.StopSequence(t, b, request(srv, mode)) })
	}
}

const callSchema = `{"type":"object","properties":{"name":{"enum":["get_weather"]},"arguments":{"type":"object","properties":{"city":{"type":"string","maxLength":12}},"required":["city"]}},"required":["name","arguments"]}`

func TestE2EConstrained(t *testing.T) {
	srv := tiny.Get(t)
	b := newBackend(t, srv, Config{})
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(callSchema))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("s.json", doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile("s.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, mode := range modes {
		t.Run(string(mode), func(t *testing.T) {
			req := request(srv, mode)
			req.Format = json.RawMessage(callSchema)
			req.Options.MaxTokens = 300
			resp, err := b.Generate(ctxFor(t), req, nil)
			if err != nil {
				t.Fatal(err)
			}
			v, err := jsonschema.UnmarshalJSON(strings.NewReader(resp.Text))
			if err != nil {
				t.Fatalf("output %q: %v", resp.Text, err)
			}
			if err := sch.Validate(v); err != nil {
				t.Errorf("output %q: %v", resp.Text, err)
			}
			if resp.StopReason != "stop" {
				t.Errorf("stop reason %q, want stop (the grammar ends the object)", resp.StopReason)
			}
		})
	}
}

// TestE2ECancelMidStream abandons streams: canceled, and stopped by the
// callback. Ollama v0.6.5 at times stops answering altogether after a
// client abandons a stream (no first byte for the next request within a
// minute; reproduced on this package's code before backend/internal
// existed, with -count=6), so each check runs on a server of its own and a
// wedged one cannot fail the tests after it.
func TestE2ECancelMidStream(t *testing.T) {
	own := func(t *testing.T) (*ollamatest.Server, *Backend) {
		srv := ollamatest.Start(t, ollamatest.WithOwnProcess())
		return srv, newBackend(t, srv, Config{})
	}
	for _, mode := range modes {
		t.Run(string(mode), func(t *testing.T) {
			srv, b := own(t)
			backendtest.CancelMidStream(t, b, request(srv, mode))
		})
	}
	t.Run("callback error", func(t *testing.T) {
		srv, b := own(t)
		backendtest.CallbackError(t, b, request(srv, backend.ModeRaw))
	})
}

// TestE2EServerKilled kills the server in the middle of a stream, checks the
// typed error, then that a dead server is unreachable (and retried), and
// that the backend works again once it is back.
func TestE2EServerKilled(t *testing.T) {
	srv := ollamatest.Start(t, ollamatest.WithOwnProcess())
	b := newBackend(t, srv, Config{Attempts: 2, Backoff: 100 * time.Millisecond})
	backendtest.ServerKilled(t, b, srv, request(srv, backend.ModeRaw), 100*time.Millisecond)
}

func TestE2EServerErrors(t *testing.T) {
	srv := tiny.Get(t)
	b := newBackend(t, srv, Config{})
	t.Run("unknown model", func(t *testing.T) {
		req := request(srv, backend.ModeChat)
		req.Model = "no-such-model"
		_, err := b.Generate(ctxFor(t), req, nil)
		var e *backend.Error
		if !errors.As(err, &e) || e.Kind != backend.KindServer || e.Status != 404 || !strings.Contains(e.Message, "no-such-model") || backend.Retryable(err) {
			t.Fatalf("err = %#v", err)
		}
	})
	t.Run("500", func(t *testing.T) {
		req := request(srv, backend.ModeChat)
		req.Model = srv.BrokenModel(t)
		_, err := newBackend(t, srv, Config{Attempts: 1}).Generate(ctxFor(t), req, nil)
		var e *backend.Error
		want := `template: :1:32: executing "" at <.Content.Foo>: can't evaluate field Foo in type string`
		if !errors.As(err, &e) || e.Kind != backend.KindServer || e.Status != 500 || e.Message != want || !backend.Retryable(err) {
			t.Fatalf("err = %#v", err)
		}
	})
	t.Run("invalid schema", func(t *testing.T) {
		req := request(srv, backend.ModeRaw)
		req.Format = json.RawMessage(`{"type":"object","properties":{"a":{"$ref":"#/nowhere"}}}`)
		_, err := b.Generate(ctxFor(t), req, nil)
		var e *backend.Error
		// Ollama answers 200 and puts the error in the stream.
		if !errors.As(err, &e) || e.Kind != backend.KindServer || e.Message != "invalid JSON schema in format" {
			t.Fatalf("err = %#v", err)
		}
	})
}

// TestE2EStall puts a proxy between backend and server that stops passing
// data after a given number of response bytes.
func TestE2EStall(t *testing.T) {
	srv := tiny.Get(t)
	for _, tc := range []struct {
		name     string
		limit    int
		consumed bool
		conns    int
	}{
		{"before the first chunk", 0, false, 2}, // nothing consumed: retried
		{"mid-stream", 700, true, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Load the model with this num_ctx first: a load must not be
			// mistaken for a stall.
			if _, err := newBackend(t, srv, Config{}).Generate(ctxFor(t), request(srv, backend.ModeRaw), nil); err != nil {
				t.Fatal(err)
			}
			p := stallproxy.Start(t, srv.URL, tc.limit, "/api/generate", "/api/chat")
			b, err := New(Config{Host: p.URL(), StallTimeout: 1500 * time.Millisecond, Attempts: 2, Backoff: 10 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			req := request(srv, backend.ModeRaw)
			req.Options.MaxTokens = 500
			start := time.Now()
			resp, err := b.Generate(ctxFor(t), req, nil)
			var e *backend.Error
			if !errors.As(err, &e) || e.Kind != backend.KindStalled || e.Consumed != tc.consumed || !errors.Is(err, backend.ErrStalled) {
				t.Fatalf("err = %#v, want stalled with Consumed=%v", err, tc.consumed)
			}
			if tc.consumed != (resp.Text != "") {
				t.Errorf("text %q", resp.Text)
			}
			if d := time.Since(start); d > 10*time.Second {
				t.Errorf("took %v", d)
			}
			// /api/show goes through the proxy too: count generate requests.
			if got := p.Requests("/api/generate"); got != tc.conns {
				t.Errorf("%d generate requests, want %d", got, tc.conns)
			}
		})
	}
}

func TestE2EContextBudget(t *testing.T) {
	srv := tiny.Get(t)
	b := newBackend(t, srv, Config{})
	size, err := b.ContextSize(ctxFor(t), srv.Model)
	if err != nil || size != 8192 {
		t.Fatalf("ContextSize = %d, %v; want 8192", size, err)
	}
	t.Run("refused before sending", func(t *testing.T) {
		req := request(srv, backend.ModeRaw)
		req.Prompt = strings.Repeat("x", 9000) // more bytes than any window here
		req.Options.NumCtx = 2048
		_, err := b.Generate(ctxFor(t), req, nil)
		if errKind(err) != backend.KindContextOverflow || !errors.Is(err, backend.ErrContextOverflow) {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("truncated by the server", func(t *testing.T) {
		// 800 bytes pass the 2-bytes-per-token estimate for num_ctx 512,
		// but this model makes one token per byte: the server truncates,
		// and the backend says so.
		req := request(srv, backend.ModeRaw)
		req.Prompt = strings.Repeat("y", 800)
		req.Options.NumCtx = 512
		req.Options.MaxTokens = 4
		resp, err := b.Generate(ctxFor(t), req, nil)
		if errKind(err) != backend.KindContextOverflow || resp.Usage.PromptTokens != 512 {
			t.Fatalf("err = %v, prompt tokens %d", err, resp.Usage.PromptTokens)
		}
	})
	t.Run("num_ctx capped by MaxNumCtx", func(t *testing.T) {
		small := newBackend(t, srv, Config{MaxNumCtx: 1024})
		req := request(srv, backend.ModeRaw)
		req.Prompt = strings.Repeat("z", 600) // bound 601 + 16 for output fits num_ctx 1024
		req.Options.MaxTokens = 16
		resp, err := small.Generate(ctxFor(t), req, nil)
		if err != nil {
			t.Fatal(err)
		}
		if resp.Usage.PromptTokens != 600 {
			t.Fatalf("prompt tokens %d, want 600 (nothing truncated)", resp.Usage.PromptTokens)
		}
	})
}

// TestE2EDoubleBOS shows what Ollama v0.6.5 does with a rendered BOS in raw
// mode for a model whose tokenizer adds one, and that the backend sends it
// once.
func TestE2EDoubleBOS(t *testing.T) {
	spec := ollamatest.DefaultSpec()
	spec.AddBOS = true
	srv := ollamatest.Start(t, ollamatest.WithOwnProcess(), ollamatest.WithSpec(spec))
	prompt := "<|endoftext|>hello"
	// Straight to the server: BOS twice.
	var direct api.Metrics
	err := srv.Client().Generate(ctxFor(t), &api.GenerateRequest{Model: srv.Model, Prompt: prompt, Raw: true,
		Options: map[string]any{"num_predict": 1}}, func(r api.GenerateResponse) error { direct = r.Metrics; return nil })
	if err != nil {
		t.Fatal(err)
	}
	if direct.PromptEvalCount != 7 {
		t.Errorf("direct prompt_eval_count = %d, want 7 (two BOS + 5 bytes)", direct.PromptEvalCount)
	}
	b := newBackend(t, srv, Config{})
	info, err := b.ModelInfo(ctxFor(t), srv.Model)
	if err != nil || !info.AddsBOS || info.BOS != "<|endoftext|>" {
		t.Fatalf("ModelInfo = %+v, %v", info, err)
	}
	req := backend.Request{Model: srv.Model, Mode: backend.ModeRaw, Prompt: prompt, Options: backend.Options{MaxTokens: 1}}
	resp, err := b.Generate(ctxFor(t), req, nil)
	if err != nil || resp.Usage.PromptTokens != 6 {
		t.Fatalf("err = %v, prompt tokens %d, want 6 (one BOS + 5 bytes)", err, resp.Usage.PromptTokens)
	}
	want := []string{`stripped the rendered BOS "<|endoftext|>" from the raw prompt: the model's tokenizer adds its own`}
	if !slices.Equal(resp.Notes, want) {
		t.Errorf("notes %q, want %q", resp.Notes, want)
	}
}

// TestE2EPromptTokensAreWholePrompt: Ollama v0.6.5's prompt_eval_count is
// the whole prompt, its cached prefix included (the runner's cache-slot
// log line shows the split), and the server reports no reuse figure, so
// the backend leaves the reuse unknown rather than guessing it.
func TestE2EPromptTokensAreWholePrompt(t *testing.T) {
	srv := ollamatest.Start(t, ollamatest.WithOwnProcess())
	b := newBackend(t, srv, Config{})
	mark := srv.Mark()
	req := request(srv, backend.ModeRaw)
	first, err := b.Generate(ctxFor(t), req, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Prompt = chatPrompt + first.Text + "<|im_end|>\n<|im_start|>user\nAnd in Rome?<|im_end|>\n<|im_start|>assistant\n"
	second, err := b.Generate(ctxFor(t), req, nil)
	if err != nil {
		t.Fatal(err)
	}
	slots := srv.WaitCacheSlots(t, mark, 2)
	t.Logf("cache slots %+v; prompt tokens reported %d then %d", slots, first.Usage.PromptTokens, second.Usage.PromptTokens)
	if slots[1].Used == 0 {
		t.Fatalf("the second request reused nothing (%+v): the test shows nothing", slots[1])
	}
	if second.Usage.PromptTokens != slots[1].Prompt || second.Usage.PromptTokens != slots[1].Used+slots[1].Remaining {
		t.Errorf("prompt tokens %d, want the whole prompt %d (used %d + evaluated %d)", second.Usage.PromptTokens, slots[1].Prompt, slots[1].Used, slots[1].Remaining)
	}
	if second.Usage.CachedKnown {
		t.Errorf("a reuse figure (%d) from a server that reports none", second.Usage.CachedTokens)
	}
}

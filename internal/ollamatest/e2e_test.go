package ollamatest

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/ollama/ollama/api"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

var tiny Lazy

func TestMain(m *testing.M) { tiny.Main(m) }

func ctxFor(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// TestE2ERawStreaming generates in raw mode and checks the text arrives in
// several chunks that add up to the reported token count.
func TestE2ERawStreaming(t *testing.T) {
	srv := tiny.Get(t)
	var chunks []string
	var last api.GenerateResponse
	req := &api.GenerateRequest{
		Model:   srv.Model,
		Prompt:  "<|im_start|>user\nSay something.<|im_end|>\n<|im_start|>assistant\n",
		Raw:     true,
		Options: map[string]any{"num_predict": 200, "seed": 7},
	}
	err := srv.Client().Generate(ctxFor(t), req, func(r api.GenerateResponse) error {
		if r.Response != "" {
			chunks = append(chunks, r.Response)
		}
		last = r
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if last.EvalDuration > 0 {
		t.Logf("%d tokens in %v: %.0f tokens/s", last.EvalCount, last.EvalDuration, float64(last.EvalCount)/last.EvalDuration.Seconds())
	}
	if len(chunks) < 5 {
		t.Errorf("got %d chunks %q, want several", len(chunks), chunks)
	}
	if !last.Done || last.DoneReason != "length" || last.EvalCount != 200 {
		t.Errorf("final chunk done=%v reason=%q eval_count=%d, want done, length, 200", last.Done, last.DoneReason, last.EvalCount)
	}
	// One token per byte: the model's vocabulary is byte-level and its
	// output ASCII.
	if text := strings.Join(chunks, ""); len(text) != 200 {
		t.Errorf("text %q has %d bytes, want 200", text, len(text))
	}
}

// toolCallSchema is the JSON Schema of a tool call to one of two tools.
const toolCallSchema = `{
  "type": "object",
  "properties": {
    "name": {"type": "string", "enum": ["get_weather", "search"]},
    "arguments": {
      "type": "object",
      "properties": {"city": {"type": "string", "maxLength": 16}, "days": {"type": "integer"}},
      "required": ["city", "days"]
    }
  },
  "required": ["name", "arguments"]
}`

// TestE2EConstrainedToolCall constrains a random model with a tool-call
// schema and checks the output is a schema-valid call.
func TestE2EConstrainedToolCall(t *testing.T) {
	srv := tiny.Get(t)
	schema, err := jsonschema.UnmarshalJSON(strings.NewReader(toolCallSchema))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("call.json", schema); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile("call.json")
	if err != nil {
		t.Fatal(err)
	}
	for seed := 1; seed <= 3; seed++ {
		var out strings.Builder
		req := &api.GenerateRequest{
			Model:   srv.Model,
			Prompt:  "<|im_start|>user\nWeather in Paris?<|im_end|>\n<|im_start|>assistant\n",
			Raw:     true,
			Format:  json.RawMessage(toolCallSchema),
			Options: map[string]any{"num_predict": 400, "seed": seed},
		}
		err := srv.Client().Generate(ctxFor(t), req, func(r api.GenerateResponse) error {
			out.WriteString(r.Response)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		inst, err := jsonschema.UnmarshalJSON(strings.NewReader(out.String()))
		if err != nil {
			t.Fatalf("seed %d: output %q is not JSON: %v", seed, out.String(), err)
		}
		if err := sch.Validate(inst); err != nil {
			t.Errorf("seed %d: output %q does not satisfy the schema: %v", seed, out.String(), err)
		}
	}
}

// TestE2EPrefixCacheReuse sends a prompt, then the same prompt extended by
// the model's answer and a new turn, and checks from the server log that
// the second request reused the whole first exchange from the KV cache.
func TestE2EPrefixCacheReuse(t *testing.T) {
	started := time.Now()
	srv := Start(t, WithOwnProcess()) // a fresh cache, and a log to read
	t.Logf("server started, model registered and loaded in %v", time.Since(started).Round(time.Millisecond))
	gen := func(prompt string) (string, api.Metrics) {
		var out strings.Builder
		var m api.Metrics
		req := &api.GenerateRequest{Model: srv.Model, Prompt: prompt, Raw: true,
			Options: map[string]any{"num_predict": 16, "seed": 3}}
		err := srv.Client().Generate(ctxFor(t), req, func(r api.GenerateResponse) error {
			out.WriteString(r.Response)
			m = r.Metrics
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return out.String(), m
	}
	first := "<|im_start|>system\nYou are terse.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n"
	firstTokens := TokenCount(first)

	mark := srv.Mark()
	answer, m1 := gen(first)
	if m1.PromptEvalCount != firstTokens {
		t.Fatalf("first prompt_eval_count = %d, want %d", m1.PromptEvalCount, firstTokens)
	}
	second := first + answer + "<|im_end|>\n<|im_start|>user\nAnd?<|im_end|>\n<|im_start|>assistant\n"
	_, m2 := gen(second)
	slots := srv.WaitCacheSlots(t, mark, 2)
	if slots[0].Used != 0 || slots[0].Prompt != firstTokens {
		t.Errorf("first request slot %+v, want used=0 prompt=%d", slots[0], firstTokens)
	}
	// The runner keeps every token it decoded: the first prompt and all
	// generated tokens but the last (sampled, never fed back).
	wantUsed := firstTokens + len(answer) - 1
	if slots[1].Used != wantUsed || slots[1].Prompt != m2.PromptEvalCount {
		t.Errorf("second request slot %+v, want used=%d prompt=%d", slots[1], wantUsed, m2.PromptEvalCount)
	}
	// prompt_eval_count reports the whole prompt even when it was cached.
	t.Logf("cache slots: %+v", slots)
	if m2.PromptEvalCount != slots[1].Used+slots[1].Remaining {
		t.Errorf("prompt_eval_count %d != used %d + remaining %d", m2.PromptEvalCount, slots[1].Used, slots[1].Remaining)
	}
}

// TestE2EKillRestartTwoServers runs two servers at once, kills one and
// checks the other is unaffected and the killed one comes back.
func TestE2EKillRestartTwoServers(t *testing.T) {
	a := tiny.Get(t)
	b := Start(t, WithOwnProcess())
	if a.URL == b.URL {
		t.Fatalf("two servers share %s", a.URL)
	}
	if err := b.Kill(); err != nil {
		t.Fatal(err)
	}
	if err := b.Client().Heartbeat(ctxFor(t)); err == nil {
		t.Fatal("killed server still answers")
	}
	one := func(s *Server) error {
		req := &api.GenerateRequest{Model: s.Model, Prompt: "x", Raw: true, Options: map[string]any{"num_predict": 2}}
		return s.Client().Generate(ctxFor(t), req, func(api.GenerateResponse) error { return nil })
	}
	if err := one(a); err != nil {
		t.Fatalf("other server: %v", err)
	}
	if err := b.Restart(); err != nil {
		t.Fatal(err)
	}
	if err := one(b); err != nil {
		t.Fatalf("restarted server: %v", err)
	}
}

// TestE2EWithParameters registers the model with a larger num_ctx: the
// server reports the parameter, and a request that sets none (as /v1
// cannot) loads the model with it.
func TestE2EWithParameters(t *testing.T) {
	srv := Start(t, WithOwnProcess(), WithParameters(map[string]any{"num_ctx": 8192}))
	if !strings.HasPrefix(srv.Model, "toolharness-tiny:") || strings.Count(srv.Model, "-") != 2 {
		t.Errorf("model name %q: want the parameters in the tag", srv.Model)
	}
	show, err := srv.Client().Show(ctxFor(t), &api.ShowRequest{Model: srv.Model})
	if err != nil {
		t.Fatal(err)
	}
	params := strings.Join(strings.Fields(show.Parameters), " ")
	for _, want := range []string{"num_ctx 8192", "num_thread 1", `stop "<|im_end|>"`} {
		if !strings.Contains(params, want) {
			t.Errorf("parameters %q lack %q", show.Parameters, want)
		}
	}
	// The warm-up request set no options: the runner started with the
	// registered context size.
	if log := srv.Log(); !strings.Contains(log, "--ctx-size 8192") {
		t.Errorf("the runner did not start with --ctx-size 8192; log tail:\n%s", Tail(log, 3000))
	}
}

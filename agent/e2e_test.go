package agent

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/toolharness/toolharness/backend"
	"github.com/toolharness/toolharness/backend/ollama"
	"github.com/toolharness/toolharness/backend/openai"
	"github.com/toolharness/toolharness/internal/ollamatest"
	"github.com/toolharness/toolharness/registry"
	"github.com/toolharness/toolharness/registry/builtin"
)

// e2eCtx bounds an end-to-end test.
func e2eCtx(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// bigContext is the tiny model with a context window large enough for a
// ten-message session whose every byte is a token.
func bigContext() ollamatest.Option {
	spec := ollamatest.DefaultSpec()
	spec.ContextLength = 32768
	return ollamatest.WithSpec(spec)
}

// e2eWorkspace is a small workspace for the built-in tools.
func e2eWorkspace(t *testing.T) string {
	ws := t.TempDir()
	for name, body := range map[string]string{"a.go": "package a\n", "README.md": "# demo\n", "docs/notes.txt": "notes\n"} {
		p := filepath.Join(ws, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return ws
}

// e2eTools are the read-only built-in tools over ws (write tools refused).
func e2eTools(t *testing.T, r Renderer, ws string) (*registry.Registry, Toolbox) {
	reg := registry.New(registry.Options{Approver: registry.DenyAll{}, FormatCall: r.FormatCall, RenderCatalog: r.Catalog})
	if err := builtin.RegisterGroups(reg, []string{builtin.GroupFS}, builtin.Options{Workspace: ws}); err != nil {
		t.Fatal(err)
	}
	keep := map[string]bool{"read_file": true, "list_dir": true, "glob": true}
	return reg, Subset(RegistryTools(reg), func(n string) bool { return keep[n] })
}

// kvRun is one scripted session and what the server logged about it.
type kvRun struct {
	steps []Step
	slots []ollamatest.CacheSlot
	calls int
}

// coverage is the share of what could have been reused (the previous
// prompt and output, less the final token) that was reused.
func (k kvRun) coverage() float64 {
	used, could := 0, 0
	for i := 1; i < len(k.slots); i++ {
		used += k.slots[i].Used
		could += k.slots[i-1].Prompt + k.steps[i-1].Usage.GeneratedTokens - 1
	}
	return 100 * float64(min(used, could)) / float64(could)
}

// reuse is the share of the prompt tokens of every request after the
// first that came from the KV cache.
func (k kvRun) reuse() (used, prompt int) {
	for _, s := range k.slots[1:] {
		used += s.Used
		prompt += s.Prompt
	}
	return used, prompt
}

var userTurns = []string{
	"What files are in the workspace?", "Read a.go.", "Is there a README?", "List the docs folder.",
	"Find the Go files.", "What does notes.txt say?", "Read README.md again.", "Any text files?",
	"Show a.go once more.", "Summarise what you found.",
}

// runKVSession runs the ten-message session of the KV tests with
// constrained, required calls against srv.
// kvRenderer is the renderer of a KV-reuse session in template's family.
func kvRenderer(t *testing.T, template string) Renderer {
	t.Helper()
	r, err := NewRenderer(RendererOptions{Template: template})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// checkCalls fails the test unless every message's first reply was a call.
func (run kvRun) checkCalls(t *testing.T) {
	t.Helper()
	if run.calls < len(userTurns) {
		t.Errorf("%d tool calls in %d messages: every message's first reply must be a call", run.calls, len(userTurns))
	}
}

// log reports the session's KV-cache reuse under label.
func (run kvRun) log(t *testing.T, label string) {
	t.Helper()
	used, prompt := run.reuse()
	t.Logf("%s: %d generations, %d calls, KV reuse %d/%d prompt tokens = %.1f%%, %.1f%% of the reusable prefix",
		label, len(run.steps), run.calls, used, prompt, 100*float64(used)/float64(prompt), run.coverage())
}

func runKVSession(t *testing.T, srv *ollamatest.Server, b backend.Backend, mode backend.Mode, r Renderer) kvRun {
	t.Helper()
	return runKVSessionCtx(t, srv, b, mode, r, 32768)
}

// runKVSessionCtx is runKVSession asking for num_ctx numCtx (0: the
// backend's choice).
func runKVSessionCtx(t *testing.T, srv *ollamatest.Server, b backend.Backend, mode backend.Mode, r Renderer, numCtx int) kvRun {
	t.Helper()
	ctx := e2eCtx(t, 8*time.Minute)
	ws := e2eWorkspace(t)
	_, tools := e2eTools(t, r, ws)
	temp, seed := 0.7, 42
	s, err := New(ctx, Config{
		Backend: b, Model: srv.Model, Mode: mode, Renderer: r, Tools: tools, Env: testEnv,
		Constrained: true, RequireCall: true, ConstrainMaxString: 16, MaxTurns: 2, MaxRetries: 2,
		Options: backend.Options{MaxTokens: 96, NumCtx: numCtx, Temperature: &temp, Seed: &seed},
	})
	if err != nil {
		t.Fatal(err)
	}
	var run kvRun
	mark := srv.Mark()
	for i, msg := range userTurns {
		ex, err := s.Send(ctx, msg)
		if err != nil && !errors.Is(err, ErrLimit) {
			t.Fatalf("message %d: %v", i+1, err)
		}
		run.steps = append(run.steps, ex.Steps...)
		run.calls += ex.Calls
	}
	run.slots = srv.WaitCacheSlots(t, mark, len(run.steps))
	if len(run.slots) != len(run.steps) {
		t.Fatalf("%d cache-slot lines for %d generations", len(run.slots), len(run.steps))
	}
	return run
}

// checkFullReuse asserts that every request after the first reused the
// whole previous prompt and generated output, but at most its final token.
func checkFullReuse(t *testing.T, run kvRun) {
	t.Helper()
	for i := 1; i < len(run.slots); i++ {
		prev, cur := run.slots[i-1], run.slots[i]
		gen := run.steps[i-1].Usage.GeneratedTokens
		if want := prev.Prompt + gen - 1; cur.Used < want {
			t.Errorf("generation %d reused %d tokens, want at least %d (previous prompt %d + output %d - 1); raw output %q",
				i+1, cur.Used, want, prev.Prompt, gen, run.steps[i-1].Raw)
		}
		if d := run.steps[i].Divergence; d != nil {
			t.Errorf("generation %d: prefix diverged: %+v", i+1, d)
		}
		if sh := run.steps[i].Shrunk; sh != nil {
			t.Errorf("generation %d: the server truncated the prompt: %+v", i+1, sh)
		}
	}
}

func TestE2EChatSessionKVReuseRaw(t *testing.T) {
	srv := ollamatest.Start(t, ollamatest.WithOwnProcess(), bigContext())
	b, err := ollama.New(ollama.Config{Host: srv.URL, StallTimeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	r := kvRenderer(t, "qwen2.5")
	run := runKVSession(t, srv, b, backend.ModeRaw, r)
	run.checkCalls(t)
	checkFullReuse(t, run)
	run.log(t, "raw mode, stable prefix")
	used, prompt := run.reuse()

	// The same session with a timestamp in the system block, re-rendered
	// every turn: the deliberately unstable baseline, measured the same way.
	base := ollamatest.Start(t, ollamatest.WithOwnProcess(), bigContext())
	bb, err := ollama.New(ollama.Config{Host: base.URL, StallTimeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	unstable := &clockRenderer{Renderer: r, atEnd: true, stamp: func(int) string {
		return "Current time: " + time.Now().UTC().Format(time.RFC3339Nano)
	}}
	brun := runKVSession(t, base, bb, backend.ModeRaw, unstable)
	bused, bprompt := brun.reuse()
	diverged := 0
	for _, s := range brun.steps[1:] {
		if s.Divergence != nil {
			diverged++
		}
	}
	t.Logf("raw mode, timestamp in the system block: %d generations, KV reuse %d/%d prompt tokens = %.1f%%, %.1f%% of the reusable prefix, divergence reported on %d of %d",
		len(brun.steps), bused, bprompt, 100*float64(bused)/float64(bprompt), brun.coverage(), diverged, len(brun.steps)-1)
	if diverged != len(brun.steps)-1 {
		t.Errorf("divergence reported on %d of %d unstable generations", diverged, len(brun.steps)-1)
	}
	if float64(bused)/float64(bprompt) >= float64(used)/float64(prompt) {
		t.Errorf("the unstable baseline reused as much as the stable prefix")
	}
}

func TestE2EChatSessionKVReuseChatMode(t *testing.T) {
	srv := ollamatest.Start(t, ollamatest.WithOwnProcess(), bigContext())
	b, err := ollama.New(ollama.Config{Host: srv.URL, StallTimeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	r := kvRenderer(t, "chatml")
	run := runKVSession(t, srv, b, backend.ModeChat, r)
	run.checkCalls(t)
	checkFullReuse(t, run)
	run.log(t, "chat mode (/api/chat)")
}

func TestE2EChatSessionKVReuseOpenAI(t *testing.T) {
	// /v1 takes no num_ctx per request: the model's own must fit the
	// session, or Ollama silently drops the oldest messages (v0.6.5
	// ignores OLLAMA_CONTEXT_LENGTH). A model registered with a larger
	// num_ctx:
	srv := ollamatest.Start(t, ollamatest.WithOwnProcess(), bigContext(), ollamatest.WithParameters(map[string]any{"num_ctx": 32768}))
	b, err := openai.New(openai.Config{BaseURL: srv.URL + "/v1", StallTimeout: time.Minute, Quirks: openai.OllamaQuirks()})
	if err != nil {
		t.Fatal(err)
	}
	r := kvRenderer(t, "chatml")
	run := runKVSession(t, srv, b, backend.ModeChat, r)
	run.checkCalls(t)
	checkFullReuse(t, run)
	run.log(t, "chat mode through /v1/chat/completions")
}

// TestE2ESilentTruncationIsReported runs the session through /v1 against a
// model whose num_ctx (4096) is too small for it: Ollama drops old
// messages without a word, and the loop must say so.
func TestE2ESilentTruncationIsReported(t *testing.T) {
	srv := ollamatest.Start(t, ollamatest.WithOwnProcess(), bigContext(), ollamatest.WithParameters(map[string]any{"num_ctx": 4096}))
	b, err := openai.New(openai.Config{BaseURL: srv.URL + "/v1", StallTimeout: time.Minute, Quirks: openai.OllamaQuirks()})
	if err != nil {
		t.Fatal(err)
	}
	r := kvRenderer(t, "chatml")
	run := runKVSession(t, srv, b, backend.ModeChat, r)
	shrunk := 0
	for _, s := range run.steps {
		if s.Shrunk != nil {
			shrunk++
		}
	}
	if shrunk == 0 {
		t.Fatalf("no truncation reported; server prompt sizes: %+v", run.slots)
	}
	t.Logf("truncation reported on %d of %d generations; KV coverage %.1f%%", shrunk, len(run.steps), run.coverage())
}

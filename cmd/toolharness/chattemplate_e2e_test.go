package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ollama/ollama/api"

	"github.com/toolharness/toolharness/agent"
	"github.com/toolharness/toolharness/backend"
	"github.com/toolharness/toolharness/bench"
	"github.com/toolharness/toolharness/chat"
	"github.com/toolharness/toolharness/internal/ollamatest"
	"github.com/toolharness/toolharness/llmtools"
	"github.com/toolharness/toolharness/templates/ollamatmpl"
)

// glmTemplate is GLM-4.5's chat template: none of the 13 built-in
// families.
func glmTemplate(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "templates", "testdata", "conformance", "templates", "zai-org-GLM-4.5.jinja"))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// generatePrompt finds the raw prompts the server logged (OLLAMA_DEBUG:
// `msg="generate request" … prompt="…"`).
var generatePromptRE = regexp.MustCompile(`msg="generate request".* prompt=("(?:[^"\\]|\\.)*")`)

// TestE2ERunOwnChatTemplate registers the tiny model with GLM-4.5's chat
// template in its GGUF (Ollama itself serves it with a ChatML TEMPLATE),
// runs a task in raw mode with no --template, and checks that toolharness
// found the GGUF blob through the server's manifest and sent the prompt
// GLM-4.5's template renders: the server logged it, and its hash is the
// one the trace records.
func TestE2ERunOwnChatTemplate(t *testing.T) {
	spec := ollamatest.DefaultSpec()
	spec.ChatTemplate = glmTemplate(t)
	srv := ollamatest.Start(t, ollamatest.WithSpec(spec), ollamatest.WithOwnProcess())
	t.Setenv("OLLAMA_MODELS", srv.ModelsDir())
	trace := filepath.Join(t.TempDir(), "run.jsonl")
	ws, _ := agentWorkspace(t)
	mark := srv.Mark()
	code, _, stderr := runAgentCLI("", "--host", srv.URL, "run", "--model", srv.Model, "--mode", "raw", "--workspace", ws,
		"--max-tokens", "8", "--max-turns", "1", "--num-ctx", "4096", "--seed", "5", "--trace", trace, "say hi")
	if code == exitHarnessError {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr)
	}
	if !strings.Contains(stderr, "from GGUF tokenizer.chat_template of Ollama model "+srv.Model+", no built-in family matches") {
		t.Errorf("stderr does not say the model's own template was loaded from its GGUF:\n%s", stderr)
	}
	m := generatePromptRE.FindAllStringSubmatch(srv.LogSince(mark), -1)
	if len(m) != 1 {
		t.Fatalf("%d generate requests logged, want 1; log:\n%s", len(m), srv.LogSince(mark))
	}
	prompt, err := strconv.Unquote(m[0][1])
	if err != nil {
		t.Fatal(err)
	}
	// GLM-4.5 opens with [gMASK]<sop>, writes turns as <|role|>TEXT and
	// asks for a reply with <|assistant|> (Jinja2 renders it so: the
	// conformance goldens).
	if !strings.HasPrefix(prompt, "[gMASK]<sop><|system|>\n") || !strings.HasSuffix(prompt, "<|user|>say hi<|assistant|>") {
		t.Errorf("prompt is not GLM-4.5's rendering:\n%s", prompt)
	}
	if strings.Contains(prompt, "<|im_start|>") {
		t.Errorf("prompt is ChatML (the server's TEMPLATE), not the model's own template:\n%s", prompt)
	}
	sum := sha256.Sum256([]byte(prompt))
	var hashes []string
	for _, r := range traceRecords(t, trace) {
		if r["type"] == "step" {
			h, _ := r["prompt_sha256"].(string)
			hashes = append(hashes, h)
		}
	}
	if len(hashes) != 1 || hashes[0] != hex.EncodeToString(sum[:]) {
		t.Errorf("trace prompt hashes %v, want the logged prompt's %x", hashes, sum)
	}
}

// TestE2ENoSilentChatMLFallback checks every path that used to fall back
// to ChatML: each now uses the model's own template, says plainly which
// template it uses, or fails with a one-line error naming the flags.
func TestE2ENoSilentChatMLFallback(t *testing.T) {
	srv := ollamatest.Start(t)
	t.Setenv("OLLAMA_MODELS", srv.ModelsDir())
	const flags = "--template FAMILY or --chat-template FILE"
	wantFlagsErr := func(what string, err error) {
		t.Helper()
		if err == nil || !strings.Contains(err.Error(), flags) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: err = %v, want a one-line error naming %s", what, err, flags)
		}
	}

	// The libraries: no template named is an error, not ChatML.
	_, err := agent.NewRenderer(agent.RendererOptions{})
	if !errors.Is(err, agent.ErrNoTemplate) {
		t.Errorf("agent.NewRenderer without a template: err = %v, want ErrNoTemplate", err)
	}
	b, err := newBackend("ollama", srv.URL, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := llmtools.New(b, llmtools.Options{Model: srv.Model}); !errors.Is(err, agent.ErrNoTemplate) {
		t.Errorf("llmtools.New without a template: err = %v, want ErrNoTemplate", err)
	}
	d := &bench.AgentDriver{Backends: map[string]backend.Backend{srv.URL: b}}
	_, err = d.RunCase(context.Background(), srv.URL, bench.Cell{Model: srv.Model, Format: "auto", Mode: "raw"},
		bench.Case{Messages: []chat.Message{{Role: chat.RoleUser, Content: "x"}}})
	if !errors.Is(err, agent.ErrNoTemplate) {
		t.Errorf("bench.AgentDriver without a template: err = %v, want ErrNoTemplate", err)
	}

	// The command's resolution, per server kind.
	var notes bytes.Buffer
	ctx := context.Background()
	_, err = modelFamily(ctx, serverRef{kind: "openai", host: srv.URL + "/v1"}, srv.Model, true, &notes)
	wantFlagsErr("openai backend", err)
	// A model the server does not have is not a template problem: the
	// fix is to pull it.
	pull := `model "no-such-model" not found on ` + srv.URL + `: pull it first (ollama pull no-such-model)`
	if _, err = modelFamily(ctx, serverRef{kind: "ollama", host: srv.URL}, "no-such-model", true, &notes); err == nil || err.Error() != pull {
		t.Errorf("unknown Ollama model: err = %v, want %q", err, pull)
	}
	// A server that is not there is said so (TestE2EModelFamilyServerErrors
	// covers both kinds), not mistaken for a model without a template.
	_, err = modelFamily(ctx, serverRef{kind: "llamacpp", host: "http://127.0.0.1:1"}, "m", true, &notes)
	if err == nil || err.Error() != "cannot reach llama.cpp at http://127.0.0.1:1: connection refused" {
		t.Errorf("unreachable llama.cpp server: err = %v", err)
	}

	// The tiny model's GGUF has no chat template: its Ollama template
	// (ChatML) is used, and the command says so.
	notes.Reset()
	f, err := modelFamily(ctx, serverRef{kind: "ollama", host: srv.URL}, srv.Model, true, &notes)
	if err != nil || f.Name != "chatml" || !strings.Contains(notes.String(), "Hugging Face chat template of "+srv.Model+" is not available") {
		t.Errorf("model without a GGUF template: family %q, err %v, notes %q", f.Name, err, notes.String())
	}

	// The commands: render without a template fails with the flags to
	// pass, run on an unknown model with the pull command, run on an
	// OpenAI-compatible server without a template with the flags.
	conv := filepath.Join(t.TempDir(), "conv.json")
	if err := os.WriteFile(conv, []byte(`[{"role": "user", "content": "hi"}]`), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runAgentCLI("", "render", "--messages", conv)
	if code == 0 || !strings.Contains(stderr, flags) {
		t.Errorf("render without a template: exit %d, stderr %q", code, stderr)
	}
	code, _, stderr = runAgentCLI("", "--host", srv.URL, "run", "--model", "no-such-model", "--max-tokens", "4", "hi")
	if code != exitHarnessError || stderr != "toolharness: run: "+pull+"\n" {
		t.Errorf("run on an unknown model: exit %d, stderr %q", code, stderr)
	}
	code, _, stderr = runAgentCLI("", "--host", srv.URL, "run", "--backend", "openai", "--model", srv.Model, "--max-tokens", "4", "hi")
	if code != exitHarnessError || !strings.Contains(stderr, flags) {
		t.Errorf("run on an openai backend without a template: exit %d, stderr %q", code, stderr)
	}
}

// chatPromptRE finds the prompts the server rendered for /api/chat.
var chatPromptRE = regexp.MustCompile(`msg="chat request".* prompt=("(?:[^"\\]|\\.)*")`)

// TestE2EOllamaTemplateInProcess renders a conversation with the tiny
// model's Ollama Go template in-process (ollamatmpl.Template) and
// compares with what the server itself rendered for /api/chat.
func TestE2EOllamaTemplateInProcess(t *testing.T) {
	srv := ollamatest.Start(t, ollamatest.WithOwnProcess())
	msgs := []chat.Message{{Role: chat.RoleSystem, Content: "be brief"}, {Role: chat.RoleUser, Content: "hi <b>"},
		{Role: chat.RoleAssistant, Content: "hello"}, {Role: chat.RoleUser, Content: "again"}}
	o, err := ollamatmpl.Compile(srv.Model, ollamatest.ChatMLTemplate)
	if err != nil {
		t.Fatal(err)
	}
	want, err := o.Render(msgs, nil)
	if err != nil {
		t.Fatal(err)
	}
	mark := srv.Mark()
	var req []api.Message
	for _, m := range msgs {
		req = append(req, api.Message{Role: string(m.Role), Content: m.Content})
	}
	stream := false
	err = srv.Client().Chat(context.Background(), &api.ChatRequest{Model: srv.Model, Messages: req, Stream: &stream,
		Options: map[string]any{"num_predict": 1}}, func(api.ChatResponse) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	m := chatPromptRE.FindAllStringSubmatch(srv.LogSince(mark), -1)
	if len(m) != 1 {
		t.Fatalf("%d chat requests logged, want 1", len(m))
	}
	got, err := strconv.Unquote(m[0][1])
	if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Errorf("server rendered %q, in-process %q", got, want)
	}
}

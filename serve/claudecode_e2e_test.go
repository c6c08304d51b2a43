package serve

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolharness/toolharness/backend"
)

// claudeBin is Claude Code as `make claude-code` installs it.
func claudeBin(t *testing.T) string {
	if b := os.Getenv("TOOLHARNESS_CLAUDE_BIN"); b != "" {
		return b
	}
	cache := os.Getenv("TOOLHARNESS_CACHE")
	if cache == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			t.Fatal(err)
		}
		cache = filepath.Join(home, ".cache", "toolharness")
	}
	return filepath.Join(cache, "claude-code", "node_modules", ".bin", "claude")
}

// TestE2EClaudeCode runs Claude Code itself, headless, against the
// server and a scripted model that reads a file with Claude Code's Read
// tool and then answers from what it read: Claude Code must run the call
// the server returned and send the result back.
func TestE2EClaudeCode(t *testing.T) {
	bin := claudeBin(t)
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("Claude Code is not installed (run make claude-code, or scripts/install-claude-code.sh): %v", err)
	}
	work := t.TempDir()
	file := filepath.Join(work, "hello.txt")
	if err := os.WriteFile(file, []byte("The secret word is marmalade.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var prompts []string
	var maxTokens int
	b := &scriptBackend{next: func(req backend.Request) string {
		mu.Lock()
		prompts, maxTokens = append(prompts, req.Prompt), max(maxTokens, req.Options.MaxTokens)
		mu.Unlock()
		switch {
		case strings.Contains(req.Prompt, "secret word is marmalade"):
			return "The secret word is marmalade."
		case strings.Contains(req.Prompt, `"Read"`):
			return "I will read the file.\n" + call("Read", `{"file_path": "`+file+`"}`)
		}
		return "OK"
	}}
	srv := startServer(t, Config{}, testModel(t, b))
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "-p", "What is the secret word in hello.txt? Read the file, then answer in one sentence.",
		"--output-format", "json", "--allowedTools", "Read")
	cmd.Dir = work
	cmd.Env = append(os.Environ(), "ANTHROPIC_BASE_URL="+srv.URL, "ANTHROPIC_API_KEY=sk-ant-dummy", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"DISABLE_AUTOUPDATER=1", "HOME="+t.TempDir())
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("claude -p: %v\nstdout: %s\nstderr: %s", err, out, stderr.String())
	}
	var res struct {
		Type    string `json:"type"`
		IsError bool   `json:"is_error"`
		Result  string `json:"result"`
		Turns   int    `json:"num_turns"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("claude -p output is not one JSON object: %v\n%s", err, out)
	}
	if res.IsError || !strings.Contains(res.Result, "marmalade") {
		t.Errorf("claude -p result %+v: want the answer read from the file", res)
	}
	mu.Lock()
	defer mu.Unlock()
	read := false
	for _, p := range prompts {
		read = read || strings.Contains(p, "secret word is marmalade")
	}
	if !read {
		t.Errorf("no request carried the file's content back: Claude Code did not run the Read call (%d requests)", len(prompts))
	}
	t.Logf("Claude Code: %d requests, %d turns, first prompt %d bytes, largest max_tokens sent upstream %d", len(prompts), res.Turns, len(prompts[0]), maxTokens)
}

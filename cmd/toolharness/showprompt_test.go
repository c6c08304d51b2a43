package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// shownRequests splits --show-prompt output into the requests it shows.
func shownRequests(t *testing.T, out string) []string {
	t.Helper()
	head := regexp.MustCompile(`(?m)^=== request (\d+): \w+ mode, model \S+, (\d+) bytes ===\n`)
	var reqs []string
	for _, m := range head.FindAllStringSubmatchIndex(out, -1) {
		n, size := out[m[2]:m[3]], 0
		fmt.Sscanf(out[m[4]:m[5]], "%d", &size)
		body := out[m[1]:]
		end := fmt.Sprintf(showEnd, mustAtoi(t, n))
		i := strings.Index(body, end)
		if i < 0 {
			t.Fatalf("request %s has no end line", n)
		}
		if i != size {
			t.Errorf("request %s: header says %d bytes, %d shown", n, size, i)
		}
		reqs = append(reqs, body[:i])
	}
	return reqs
}

func mustAtoi(t *testing.T, s string) int {
	var n int
	if _, err := fmt.Sscanf(s, "%d", &n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestShowPrompt: --show-prompt shows each request exactly as the server
// received it: in raw mode the prompt byte for byte, in chat mode the
// messages; --trace-prompts keeps the same prompts in the trace.
func TestShowPrompt(t *testing.T) {
	call := `<tool_call>{"name":"list_dir","arguments":{"path":"."}}</tool_call>`
	t.Run("raw to a file, and the trace", func(t *testing.T) {
		srv := newScriptedOllama(t, call, "Two files.")
		dir := t.TempDir()
		shown, trace := filepath.Join(dir, "prompts.txt"), filepath.Join(dir, "trace.jsonl")
		_, stderr, code := runCLI(t, "", "run", "--host", srv.URL, "--model", "m", "--template", "qwen2.5", "--tools", "builtin:fs",
			"--workspace", t.TempDir(), "--show-prompt="+shown, "--trace", trace, "--trace-prompts", "list the files")
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		received := receivedPrompts(t, srv, 2)
		checkShownFile(t, shown, received)
		var traced []string
		for _, rec := range traceRecords(t, trace) {
			if _, ok := rec["prompt_sha256"]; ok { // a generation
				p, _ := rec["prompt"].(string)
				traced = append(traced, p)
			}
		}
		if diff := cmp.Diff(received, traced); diff != "" {
			t.Errorf("traced prompts differ from what the server received (-received +traced):\n%s", diff)
		}
	})
	t.Run("chat on stderr", func(t *testing.T) {
		srv := newScriptedOllama(t, "Hello.")
		_, stderr, code := runCLI(t, "", "run", "--host", srv.URL, "--model", "m", "--template", "qwen2.5", "--mode", "chat",
			"--tools", "builtin:fs", "--workspace", t.TempDir(), "--show-prompt", "say hello")
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		type msg struct {
			Role    string `json:"role"`
			Content string `json:"content"`
		}
		var received, shown struct {
			Messages []msg `json:"messages"`
		}
		if err := json.Unmarshal(srv.requests()[0], &received); err != nil {
			t.Fatal(err)
		}
		reqs := shownRequests(t, stderr)
		if len(reqs) != 1 {
			t.Fatalf("%d requests shown:\n%s", len(reqs), stderr)
		}
		if err := json.Unmarshal([]byte(reqs[0]), &shown); err != nil {
			t.Fatal(err)
		}
		if len(received.Messages) == 0 || !strings.Contains(received.Messages[0].Content, "list_dir") {
			t.Fatalf("the server got no catalog: %+v", received)
		}
		if diff := cmp.Diff(received, shown); diff != "" {
			t.Errorf("shown messages differ from what the server received (-received +shown):\n%s", diff)
		}
	})
}

// receivedPrompts is the raw prompts the server received; there must be
// want of them.
func receivedPrompts(t *testing.T, srv *scriptedOllama, want int) []string {
	t.Helper()
	var received []string
	for _, body := range srv.requests() {
		var req struct {
			Prompt string `json:"prompt"`
		}
		if err := json.Unmarshal(body, &req); err != nil {
			t.Fatal(err)
		}
		received = append(received, req.Prompt)
	}
	if len(received) != want {
		t.Fatalf("%d requests, want %d", len(received), want)
	}
	return received
}

// checkShownFile checks that the --show-prompt file holds exactly the
// prompts received.
func checkShownFile(t *testing.T, shown string, received []string) {
	t.Helper()
	data, err := os.ReadFile(shown)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(received, shownRequests(t, string(data))); diff != "" {
		t.Errorf("shown prompts differ from what the server received (-received +shown):\n%s", diff)
	}
}

// TestShowPromptEveryCommand: chat, bench run and compare show their
// requests as run does, byte for byte what the server received.
func TestShowPromptEveryCommand(t *testing.T) {
	call := `<tool_call>{"name":"get_weather","arguments":{"city":"Paris"}}</tool_call>`
	for _, tc := range []struct {
		name  string // the command
		stdin string
		args  func(dir string) []string
	}{
		{"chat", "list the files\n", func(dir string) []string {
			return []string{"chat", "--model", "m", "--template", "qwen2.5", "--tools", "builtin:fs", "--workspace", t.TempDir()}
		}},
		{"bench run", "", func(dir string) []string {
			return []string{"bench", "run", "--models", "m", "--formats", "hermes", "--suite", smallSuite(t, dir), "--out", filepath.Join(dir, "out")}
		}},
		{"compare", "", func(dir string) []string {
			return []string{"compare", "--model", "m", "--formats", "hermes", "--suite", smallSuite(t, dir), "--out", filepath.Join(dir, "out")}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			first := call
			if tc.name == "chat" {
				first = `<tool_call>{"name":"list_dir","arguments":{"path":"."}}</tool_call>`
			}
			srv := newScriptedOllama(t, first, "No call needed.")
			dir := t.TempDir()
			shown := filepath.Join(dir, "prompts.txt")
			host := "--host"
			if tc.name != "chat" {
				host = "--endpoint"
			}
			args := append(tc.args(dir), host, srv.URL, "--template", "qwen2.5", "--max-retries", "0", "--show-prompt="+shown)
			if _, stderr, code := runCLI(t, tc.stdin, args...); code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			checkShownFile(t, shown, receivedPrompts(t, srv, 2))
		})
	}
}

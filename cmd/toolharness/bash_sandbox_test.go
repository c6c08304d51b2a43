package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolharness/toolharness/registry/builtin"
)

// TestRunBashSandboxed: run --yes with builtin:bash runs the model's
// command in the sandbox, where a file outside the workspace is not
// there; without bwrap, --yes refuses builtin:bash unless --unsafe-bash.
func TestRunBashSandboxed(t *testing.T) {
	if builtin.FindSandbox() == "" {
		t.Fatal("bwrap is not installed (Debian package bubblewrap; make deps installs it)")
	}
	outside := filepath.Join(t.TempDir(), "conv.json")
	if err := os.WriteFile(outside, []byte("private conversation"), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := newScriptedOllama(t, `<tool_call>{"name":"bash","arguments":{"command":"cat `+outside+`"}}</tool_call>`, "Done.")
	args := []string{"run", "--host", srv.URL, "--model", "m", "--template", "qwen2.5", "--tools", "builtin:bash",
		"--workspace", t.TempDir(), "--yes", "read it"}
	_, stderr, code := runCLI(t, "", args...)
	if code != 0 || strings.Contains(stderr, "private conversation") || !strings.Contains(stderr, "No such file or directory") {
		t.Errorf("exit %d, stderr:\n%s", code, stderr)
	}

	t.Setenv("PATH", t.TempDir()) // no bwrap
	_, stderr, code = runCLI(t, "", args...)
	want := "toolharness: run: --tools builtin:bash with --yes: bwrap (Debian package bubblewrap) is not installed, so every command would run unconfined, approved unseen; install bubblewrap, or pass --unsafe-bash (see toolharness run --help)\n"
	if code != 1 || stderr != want {
		t.Errorf("without bwrap: exit %d, stderr %q", code, stderr)
	}
	dead := append([]string{"run", "--host", deadHost(t)}, args[3:]...)
	if _, stderr, code = runCLI(t, "", append(dead[:len(dead)-1], "--unsafe-bash", "read it")...); code != 1 || !strings.Contains(stderr, "cannot reach") {
		t.Errorf("--unsafe-bash without bwrap: exit %d, stderr %q", code, stderr)
	}
}

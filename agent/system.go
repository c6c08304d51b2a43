package agent

import (
	"bytes"
	"context"
	"embed"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"text/template"
	"time"
)

//go:embed prompts/*.tmpl
var promptFS embed.FS

// prompts are parsed once; templates are immutable after parsing, so
// sharing them is not mutable package state.
var prompts = template.Must(template.New("").ParseFS(promptFS, "prompts/*.tmpl"))

// Env describes where the session runs. It is captured once, at session
// start, and goes into the system block.
type Env struct {
	Name      string // the agent's name in the identity prompt
	Date      string // YYYY-MM-DD from the injected clock
	OS        string
	Shell     string
	Model     string
	Workspace string
	// VCS is the version-control snapshot text ("" outside a repository).
	VCS string
}

// CommandRunner runs a read-only command in dir and returns its output.
// Injected so tests need no git repository.
type CommandRunner func(ctx context.Context, dir, name string, args ...string) (string, error)

func execRunner(ctx context.Context, dir, name string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	out, err := cmd.Output()
	return string(out), err
}

// CaptureEnv describes the environment of a session in workspace, with
// the date from now and a version-control snapshot from run (nil: git).
func CaptureEnv(ctx context.Context, model, workspace string, now time.Time, run CommandRunner) Env {
	if run == nil {
		run = execRunner
	}
	shell := os.Getenv("SHELL")
	if shell == "" {
		shell = "sh"
	}
	if abs, err := filepath.Abs(workspace); err == nil {
		workspace = abs
	}
	return Env{
		Name: "toolharness", Date: now.Format("2006-01-02"), OS: runtime.GOOS + "/" + runtime.GOARCH,
		Shell: filepath.Base(shell), Model: model, Workspace: workspace,
		VCS: vcsSnapshot(ctx, workspace, run),
	}
}

// vcsSnapshot is branch, short status and recent commits, bounded so a
// dirty tree cannot flood the system block.
func vcsSnapshot(ctx context.Context, dir string, run CommandRunner) string {
	branch, err := run(ctx, dir, "git", "rev-parse", "--abbrev-ref", "HEAD")
	if err != nil {
		return ""
	}
	status, _ := run(ctx, dir, "git", "status", "--short")
	log, _ := run(ctx, dir, "git", "log", "--oneline", "-n", "5")
	var b strings.Builder
	fmt.Fprintf(&b, "- Branch: %s\n", strings.TrimSpace(branch))
	b.WriteString("- Status:")
	if s := limitLines(status, 20); s != "" {
		b.WriteString("\n" + indent(s))
	} else {
		b.WriteString(" clean")
	}
	b.WriteString("\n- Recent commits:")
	if l := limitLines(log, 5); l != "" {
		b.WriteString("\n" + indent(l))
	} else {
		b.WriteString(" none")
	}
	return b.String()
}

func limitLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) == 1 && lines[0] == "" {
		return ""
	}
	if len(lines) > n {
		more := len(lines) - n
		lines = append(lines[:n], fmt.Sprintf("… and %d more", more))
	}
	return strings.Join(lines, "\n")
}

func indent(s string) string {
	return "  " + strings.ReplaceAll(s, "\n", "\n  ")
}

// SystemText renders the identity, rules and environment of the system
// block (the renderer appends the tool catalog).
func SystemText(env Env) (string, error) { return execPrompt("system.tmpl", env) }

// SubagentText is the system text of a sub-agent.
func SubagentText(env Env) (string, error) { return execPrompt("subagent.tmpl", env) }

func execPrompt(name string, data any) (string, error) {
	var b bytes.Buffer
	if err := prompts.ExecuteTemplate(&b, name, data); err != nil {
		return "", fmt.Errorf("agent: prompt %s: %w", name, err)
	}
	return strings.TrimRight(b.String(), "\n"), nil
}

// InstructionsReminder is the reminder text carrying a project
// instructions file.
func InstructionsReminder(source, text string) (string, error) {
	return execPrompt("reminder_instructions.tmpl", struct{ Source, Text string }{source, strings.TrimSpace(text)})
}

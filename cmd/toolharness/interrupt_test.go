package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/toolharness/toolharness/registry/mcp/mcptest"
)

// lockedBuffer collects a child's output while the test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// waitFor waits until buf holds want.
func waitFor(t *testing.T, buf *lockedBuffer, want string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(buf.String(), want) {
		if time.Now().After(deadline) {
			t.Fatalf("no %q within 30s; have:\n%s", want, buf.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// waitStall waits until the server is streaming a stalled generation.
func waitStall(t *testing.T, srv *scriptedOllama) {
	t.Helper()
	select {
	case <-srv.stalled:
	case <-time.After(30 * time.Second):
		t.Fatal("the generation to interrupt never started")
	}
}

// child is the built binary running one command.
type child struct {
	cmd            *exec.Cmd
	stdin          io.WriteCloser
	stdout, stderr *lockedBuffer
	done           chan int
}

func startChild(t *testing.T, args ...string) *child {
	t.Helper()
	ch := &child{stdout: &lockedBuffer{}, stderr: &lockedBuffer{}, done: make(chan int, 1)}
	ch.cmd = exec.Command(toolharnessBinary(t), args...)
	ch.cmd.Stdout, ch.cmd.Stderr = ch.stdout, ch.stderr
	// A process the child started (an MCP server) may outlive it holding
	// its stderr: the child's end is its own exit.
	ch.cmd.WaitDelay = 500 * time.Millisecond
	var err error
	if ch.stdin, err = ch.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	if err := ch.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		ch.cmd.Wait()
		ch.done <- ch.cmd.ProcessState.ExitCode()
	}()
	t.Cleanup(func() { ch.cmd.Process.Kill() })
	return ch
}

func (ch *child) signal(t *testing.T) {
	t.Helper()
	if err := ch.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
}

// exit waits for the child to end and returns its status.
func (ch *child) exit(t *testing.T) int {
	t.Helper()
	select {
	case code := <-ch.done:
		return code
	case <-time.After(30 * time.Second):
		t.Fatalf("still running 30s later\nstderr: %s", ch.stderr)
	}
	return -1
}

// TestInterruptRun: Ctrl-C during a generation of run cancels it; run
// exits 130 with one line saying what was kept, and the trace keeps the
// generation that finished before it.
func TestInterruptRun(t *testing.T) {
	srv := newScriptedOllama(t, `<tool_call>{"name":"list_dir","arguments":{"path":"."}}</tool_call>`, stallReply)
	ws := t.TempDir()
	trace := filepath.Join(t.TempDir(), "run.jsonl")
	ch := startChild(t, "run", "--host", srv.URL, "--model", "m", "--template", "qwen2.5", "--tools", "builtin:fs",
		"--workspace", ws, "--trace", trace, "list the files")
	waitStall(t, srv)
	ch.signal(t)
	if code := ch.exit(t); code != exitInterrupted {
		t.Fatalf("exit %d, want 130\nstderr: %s", code, ch.stderr)
	}
	lines := strings.Split(strings.TrimSpace(ch.stderr.String()), "\n")
	last := lines[len(lines)-1]
	if want := "toolharness: run: interrupted; 1 results kept in " + trace; last != want {
		t.Errorf("last line %q, want %q\nstderr: %s", last, want, ch.stderr)
	}
	if strings.Contains(ch.stderr.String(), "context canceled") {
		t.Errorf("the interrupt is reported as a failure:\n%s", ch.stderr)
	}
	data, err := os.ReadFile(trace)
	if err != nil || !bytes.Contains(data, []byte("list_dir")) {
		t.Errorf("trace lost the finished generation (%v):\n%s", err, data)
	}
}

// TestInterruptChat: Ctrl-C during a chat message cancels that message
// only: the session goes on with the next message and ends normally; at
// the prompt, Ctrl-C ends the session with status 130.
func TestInterruptChat(t *testing.T) {
	srv := newScriptedOllama(t, stallReply, "Hello again.")
	ch := startChild(t, "chat", "--host", srv.URL, "--model", "m", "--template", "qwen2.5", "--workspace", t.TempDir())
	io.WriteString(ch.stdin, "first\n")
	waitStall(t, srv)
	ch.signal(t)
	waitFor(t, ch.stderr, "toolharness: message 1: interrupted; 0 results kept, back to the prompt")
	io.WriteString(ch.stdin, "second\n")
	waitFor(t, ch.stdout, "Hello again.")
	// At the prompt: the session ends.
	ch.signal(t)
	if code := ch.exit(t); code != exitInterrupted {
		t.Fatalf("exit %d, want 130\nstderr: %s", code, ch.stderr)
	}
	if !strings.HasSuffix(ch.stderr.String(), "toolharness: chat: interrupted at the prompt; 2 message(s) handled\n") {
		t.Errorf("stderr:\n%s", ch.stderr)
	}
	if strings.Contains(ch.stderr.String(), "context canceled") {
		t.Errorf("the interrupt is reported as a failure:\n%s", ch.stderr)
	}

	// Without an interrupt at the prompt, the session ends at the end of
	// its input, successfully, though one message was interrupted.
	srv = newScriptedOllama(t, stallReply, "Done.")
	ch = startChild(t, "chat", "--host", srv.URL, "--model", "m", "--template", "qwen2.5", "--workspace", t.TempDir())
	io.WriteString(ch.stdin, "first\n")
	waitStall(t, srv)
	ch.signal(t)
	waitFor(t, ch.stderr, "back to the prompt")
	io.WriteString(ch.stdin, "second\n")
	ch.stdin.Close()
	if code := ch.exit(t); code != 0 {
		t.Fatalf("exit %d, want 0\nstderr: %s", code, ch.stderr)
	}
	if ch.stdout.String() != "Done.\n" {
		t.Errorf("stdout %q", ch.stdout)
	}
}

// TestInterruptsSecondSignal: the first signal cancels the work under
// way; a second before the work ended exits at once with 130, as does a
// signal with no work under way.
func TestInterruptsSecondSignal(t *testing.T) {
	for _, tc := range []struct {
		name    string
		signals int
		working bool
		line    string
	}{
		{"one signal cancels", 1, true, ""},
		{"a second exits", 2, true, "toolharness: run: interrupted again; exiting at once\n"},
		{"idle exits", 1, false, "toolharness: run: interrupted\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var errw lockedBuffer
			exited := make(chan int, 1)
			in := newInterrupts(&errw, "run", func(code int) { exited <- code })
			defer close(in.done)
			ctx := context.Background()
			var end func() bool
			if tc.working {
				ctx, end = in.work(ctx)
			}
			for range tc.signals {
				in.sigs <- syscall.SIGINT
			}
			if tc.line == "" {
				select {
				case <-ctx.Done():
				case <-time.After(10 * time.Second):
					t.Fatal("the work was not cancelled")
				}
				if !end() {
					t.Error("end does not report the interrupt")
				}
				select {
				case code := <-exited:
					t.Fatalf("exited %d on the first signal", code)
				case <-time.After(50 * time.Millisecond):
				}
				return
			}
			select {
			case code := <-exited:
				if code != exitInterrupted {
					t.Errorf("exit %d", code)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("no exit")
			}
			if errw.String() != tc.line {
				t.Errorf("line %q, want %q", errw.String(), tc.line)
			}
		})
	}
}

// TestInterruptBench: Ctrl-C during a generation of bench run or compare
// (the built binary, a real SIGINT) keeps the finished cases and exits
// 130 with one line: how many results were kept, and how to resume.
func TestInterruptBench(t *testing.T) {
	for _, cmd := range []string{"bench run", "compare"} {
		t.Run(cmd, func(t *testing.T) {
			srv := newScriptedOllama(t, `<tool_call>{"name":"get_weather","arguments":{"city":"Paris"}}</tool_call>`, stallReply)
			dir := t.TempDir()
			out := filepath.Join(dir, "out")
			args := append(strings.Fields(cmd), "--suite", smallSuite(t, dir), "--endpoint", srv.URL, "--template", "qwen2.5",
				"--formats", "hermes", "--max-retries", "0", "--out", out)
			if cmd == "compare" {
				args = append(args, "--model", "m")
			} else {
				args = append(args, "--models", "m")
			}
			ch := startChild(t, args...)
			waitStall(t, srv)
			ch.signal(t)
			if code := ch.exit(t); code != exitInterrupted {
				t.Fatalf("exit %d, want 130\nstderr: %s", code, ch.stderr)
			}
			lines := strings.Split(strings.TrimSpace(ch.stderr.String()), "\n")
			want := "toolharness: " + cmd + ": interrupted; 1 results kept in " + out + " (1 new); continue with --resume --out " + out
			if last := lines[len(lines)-1]; last != want {
				t.Errorf("last line %q, want %q\nstderr: %s", last, want, ch.stderr)
			}
			if strings.Contains(ch.stderr.String(), "context canceled") {
				t.Errorf("the interrupt is reported as a failure:\n%s", ch.stderr)
			}
			data, err := os.ReadFile(filepath.Join(out, "results.jsonl"))
			if err != nil || bytes.Count(data, []byte("\n")) != 1 || !bytes.Contains(data, []byte("get_weather")) {
				t.Errorf("results lost the finished case (%v):\n%s", err, data)
			}
		})
	}
}

// exitWithin waits up to d for the child to end and returns its status.
func (ch *child) exitWithin(t *testing.T, d time.Duration) int {
	t.Helper()
	select {
	case code := <-ch.done:
		return code
	case <-time.After(d):
		t.Fatalf("still running %s after the second Ctrl-C\nstderr: %s", d, ch.stderr)
	}
	return -1
}

// TestInterruptTwiceRun: a second Ctrl-C while run is still ending the
// interrupted work exits at once with 130. The work's cleanup here is slow
// on purpose: the session's MCP server ignores the end of its input and
// SIGTERM, so closing it takes about 10s (see envLingerMCP); one Ctrl-C
// waits for that, two do not.
func TestInterruptTwiceRun(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if strings.ContainsAny(exe, " \t") {
		t.Fatalf("test binary path %q has spaces; --mcp splits the command at spaces: set GOTMPDIR to a path without spaces", exe)
	}
	t.Setenv(mcptest.EnvServe, "1") // inherited by the MCP server process
	t.Setenv(envLingerMCP, "1")
	srv := newScriptedOllama(t, stallReply)
	ch := startChild(t, "run", "--host", srv.URL, "--model", "m", "--template", "qwen2.5",
		"--mcp", "slow="+exe+" -test.run=^$", "--workspace", t.TempDir(), "add 2 and 3")
	waitStall(t, srv)
	ch.signal(t)
	// The first Ctrl-C cancelled the generation; run is now closing the
	// MCP server, which takes about 10s.
	time.Sleep(300 * time.Millisecond)
	ch.signal(t)
	if code := ch.exitWithin(t, 5*time.Second); code != exitInterrupted {
		t.Fatalf("exit %d, want 130\nstderr: %s", code, ch.stderr)
	}
	if !strings.HasSuffix(ch.stderr.String(), "toolharness: run: interrupted again; exiting at once\n") {
		t.Errorf("stderr:\n%s", ch.stderr)
	}
}

// TestInterruptTwiceChat: two Ctrl-Cs in a row during a chat message end
// the session at once with 130 (the first alone brings the prompt back,
// see TestInterruptChat), whether the second lands while the message is
// still being cancelled or once the prompt is back.
func TestInterruptTwiceChat(t *testing.T) {
	srv := newScriptedOllama(t, stallReply)
	ch := startChild(t, "chat", "--host", srv.URL, "--model", "m", "--template", "qwen2.5", "--workspace", t.TempDir())
	io.WriteString(ch.stdin, "first\n")
	waitStall(t, srv)
	ch.signal(t)
	// The second Ctrl-C goes once the first has reached the child (its
	// generation's request was cancelled): a SIGINT that arrives while
	// another is still pending, in the kernel or in the Go runtime (which
	// keeps one pending signal of each kind), is merged with it. A fixed
	// 5 ms gap allowed that on a loaded machine: the child saw one.
	select {
	case <-srv.left:
	case <-time.After(30 * time.Second):
		t.Fatal("the first Ctrl-C did not cancel the generation")
	}
	ch.signal(t)
	// stdin stays open: only the second Ctrl-C can end the session.
	if code := ch.exitWithin(t, 5*time.Second); code != exitInterrupted {
		t.Fatalf("exit %d, want 130\nstderr: %s", code, ch.stderr)
	}
	last := ch.stderr.String()
	if !strings.HasSuffix(last, "toolharness: chat: interrupted again; exiting at once\n") &&
		!strings.HasSuffix(last, "toolharness: chat: interrupted at the prompt; 1 message(s) handled\n") {
		t.Errorf("stderr:\n%s", last)
	}
}

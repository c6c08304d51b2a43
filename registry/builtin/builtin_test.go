package builtin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolharness/toolharness/chat"
	"github.com/toolharness/toolharness/registry"
)

// setup makes a workspace with files, and an outside directory the
// symlinks point to.
func setup(t *testing.T) (ws, outside string) {
	t.Helper()
	base := t.TempDir()
	ws = filepath.Join(base, "ws")
	outside = filepath.Join(base, "outside")
	for _, d := range []string{ws, outside, filepath.Join(ws, "sub"), filepath.Join(ws, ".git")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	files := map[string]string{
		filepath.Join(ws, "a.txt"):          "one\ntwo\nthree\n",
		filepath.Join(ws, "sub", "b.go"):    "package sub\n\nfunc Hello() {}\n",
		filepath.Join(ws, ".git", "config"): "Hello secret\n",
		filepath.Join(outside, "secret"):    "top secret\n",
	}
	for p, c := range files {
		if err := os.WriteFile(p, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	links := map[string]string{
		filepath.Join(ws, "out"):         outside,                          // dir link leaving
		filepath.Join(ws, "secret.txt"):  filepath.Join(outside, "secret"), // file link leaving
		filepath.Join(ws, "sub", "up"):   "../..",                          // relative link leaving
		filepath.Join(ws, "dangling"):    filepath.Join(outside, "nope"),   // dangling
		filepath.Join(ws, "inside_link"): filepath.Join(ws, "sub"),         // stays inside
	}
	for l, target := range links {
		if err := os.Symlink(target, l); err != nil {
			t.Fatal(err)
		}
	}
	return ws, outside
}

func newReg(t *testing.T, ws string, o Options) *registry.Registry {
	t.Helper()
	r := registry.New(registry.Options{Approver: registry.ApproveAll{}})
	o.Workspace = ws
	if err := Register(r, o); err != nil {
		t.Fatal(err)
	}
	return r
}

func call(t *testing.T, r *registry.Registry, name string, args any) registry.Outcome {
	t.Helper()
	data, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	return r.ExecuteOne(context.Background(), chat.ToolCall{Name: name, Arguments: data})
}

func TestWorkspaceEscapesRefused(t *testing.T) {
	ws, outside := setup(t)
	r := newReg(t, ws, Options{})
	escapes := []struct {
		tool string
		args map[string]any
	}{
		{"read_file", map[string]any{"path": "../outside/secret"}},
		{"read_file", map[string]any{"path": "sub/../../outside/secret"}},
		{"read_file", map[string]any{"path": filepath.Join(outside, "secret")}},
		{"read_file", map[string]any{"path": "/etc/passwd"}},
		{"read_file", map[string]any{"path": "secret.txt"}},
		{"read_file", map[string]any{"path": "out/secret"}},
		{"read_file", map[string]any{"path": "sub/up/outside/secret"}},
		{"read_file", map[string]any{"path": "dangling"}},
		{"list_dir", map[string]any{"path": ".."}},
		{"list_dir", map[string]any{"path": "out"}},
		{"grep", map[string]any{"pattern": "secret", "path": "out"}},
		{"grep", map[string]any{"pattern": "secret", "path": "../outside"}},
		{"glob", map[string]any{"pattern": "../outside/*"}},
		{"glob", map[string]any{"pattern": "/etc/*"}},
		{"write_file", map[string]any{"path": "../evil.txt", "content": "x"}},
		{"write_file", map[string]any{"path": "out/evil.txt", "content": "x"}},
		{"write_file", map[string]any{"path": "out/new/dir/evil.txt", "content": "x"}},
		{"write_file", map[string]any{"path": "dangling", "content": "x"}},
		{"write_file", map[string]any{"path": "secret.txt", "content": "x"}},
		{"edit_file", map[string]any{"path": "secret.txt", "old_string": "top", "new_string": "x"}},
		{"edit_file", map[string]any{"path": filepath.Join(outside, "secret"), "old_string": "top", "new_string": "x"}},
	}
	for _, e := range escapes {
		o := call(t, r, e.tool, e.args)
		if o.Err == nil || o.Err.Kind != registry.KindToolError || !errors.Is(o.Err, ErrOutsideWorkspace) {
			t.Errorf("%s %v: not refused as outside the workspace: %+v", e.tool, e.args, o.Result)
			continue
		}
		if !strings.Contains(o.Result.Content, "outside the workspace") {
			t.Errorf("%s %v: unclear message %q", e.tool, e.args, o.Result.Content)
		}
	}
	data, _ := os.ReadFile(filepath.Join(outside, "secret"))
	if string(data) != "top secret\n" {
		t.Error("a file outside the workspace was changed")
	}
	if _, err := os.Stat(filepath.Join(outside, "evil.txt")); err == nil {
		t.Error("a file was written outside the workspace")
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(ws), "evil.txt")); err == nil {
		t.Error("a file was written outside the workspace")
	}
}

func TestFileTools(t *testing.T) {
	ws, _ := setup(t)
	r := newReg(t, ws, Options{})
	tests := []struct {
		tool string
		args map[string]any
		want string
		err  bool
	}{
		{"read_file", map[string]any{"path": "a.txt"}, "one\ntwo\nthree\n", false},
		{"read_file", map[string]any{"path": "a.txt", "offset": 2, "limit": 1}, "two\n", false},
		{"read_file", map[string]any{"path": filepath.Join(ws, "a.txt")}, "one\ntwo\nthree\n", false},
		{"read_file", map[string]any{"path": "inside_link/b.go", "limit": 1}, "package sub\n", false},
		{"read_file", map[string]any{"path": "sub/../a.txt", "offset": 3}, "three\n", false},
		{"read_file", map[string]any{"path": "missing.txt"}, "Error: cannot read missing.txt: no such file or directory", true},
		{"read_file", map[string]any{"path": "sub"}, "Error: sub is a directory; use list_dir", true},
		{"list_dir", map[string]any{"path": "sub"}, "b.go\nup", false},
		{"glob", map[string]any{"pattern": "**/*.go"}, "sub/b.go", false},
		{"glob", map[string]any{"pattern": "*.txt"}, "a.txt\nsecret.txt", false},
		{"grep", map[string]any{"pattern": "Hel+o"}, "sub/b.go:3: func Hello() {}", false},
		{"grep", map[string]any{"pattern": "t", "include": "*.txt"}, "a.txt:2: two\na.txt:3: three", false},
		{"grep", map[string]any{"pattern": "("}, "", true},
		{"write_file", map[string]any{"path": "new/dir/c.txt", "content": "hi <b> & c"}, "wrote 10 bytes to new/dir/c.txt", false},
		{"read_file", map[string]any{"path": "new/dir/c.txt"}, "hi <b> & c", false},
		{"edit_file", map[string]any{"path": "a.txt", "old_string": "two", "new_string": "2"}, "replaced 1 occurrence(s) in a.txt", false},
		{"edit_file", map[string]any{"path": "a.txt", "old_string": "zzz", "new_string": "2"}, "", true},
		{"edit_file", map[string]any{"path": "a.txt", "old_string": "e", "new_string": "E"}, "", true},
		{"edit_file", map[string]any{"path": "a.txt", "old_string": "e", "new_string": "E", "replace_all": true}, "replaced 3 occurrence(s) in a.txt", false},
		{"read_file", map[string]any{"path": "a.txt"}, "onE\n2\nthrEE\n", false},
	}
	for _, tt := range tests {
		o := call(t, r, tt.tool, tt.args)
		if (o.Err != nil) != tt.err {
			t.Errorf("%s %v: err %v, result %q", tt.tool, tt.args, o.Err, o.Result.Content)
			continue
		}
		if tt.want != "" && o.Result.Content != tt.want {
			t.Errorf("%s %v:\n got %q\nwant %q", tt.tool, tt.args, o.Result.Content, tt.want)
		}
	}
}

func TestSideEffectsAndGroups(t *testing.T) {
	ws, _ := setup(t)
	r := registry.New(registry.Options{Approver: registry.DenyAll{}})
	if err := RegisterGroups(r, []string{GroupFS}, Options{Workspace: ws}); err != nil {
		t.Fatal(err)
	}
	for name, side := range map[string]bool{"read_file": false, "list_dir": false, "glob": false, "grep": false, "write_file": true, "edit_file": true} {
		if r.SideEffects(name) != side {
			t.Errorf("%s: side effects %v", name, !side)
		}
	}
	if _, ok := r.Lookup("bash"); ok {
		t.Error("bash registered without being enabled")
	}
	o := call(t, r, "write_file", map[string]any{"path": "x.txt", "content": "x"})
	if o.Err == nil || o.Err.Kind != registry.KindDenied {
		t.Errorf("denied write ran: %+v", o)
	}
	if _, err := os.Stat(filepath.Join(ws, "x.txt")); err == nil {
		t.Error("denied write created the file")
	}
	if err := RegisterGroups(registry.New(registry.Options{}), []string{"net"}, Options{Workspace: ws}); err == nil {
		t.Error("unknown group accepted")
	}
}

func TestBash(t *testing.T) {
	ws, _ := setup(t)
	r := newReg(t, ws, Options{Bash: true, BashAllow: []string{"ls", "cat", "false"}})
	tests := []struct {
		cmd  string
		want string
		err  bool
	}{
		{"ls sub", "b.go\nup", false},
		{"cat 'a.txt'", "one\ntwo\nthree", false},
		{"false", "\n[exit status 1]", false},
		{"rm -rf /", "", true},
		{"ls; rm a.txt", "", true},
		{"cat a.txt | wc", "", true},
		{"ls $(HOME)", "", true},
		{"cat 'a.txt", "", true},
	}
	for _, tt := range tests {
		o := call(t, r, "bash", map[string]any{"command": tt.cmd})
		if (o.Err != nil) != tt.err || (!tt.err && o.Result.Content != tt.want) {
			t.Errorf("%q: err %v, got %q", tt.cmd, o.Err, o.Result.Content)
		}
	}
	if _, err := os.Stat(filepath.Join(ws, "a.txt")); err != nil {
		t.Error("a refused command removed a file")
	}
	if !r.SideEffects("bash") {
		t.Error("bash is not side-effecting")
	}
}

// TestBashSandbox: with bwrap, bash sees the workspace and nothing else
// of the host: a file outside it (directly or through a symlink) cannot
// be read, /etc is not there, and no socket can be opened, not even to
// the host's loopback; the workspace is writable. The same commands
// unconfined do reach the file and the socket, so the checks can fail.
func TestBashSandbox(t *testing.T) {
	bwrap := FindSandbox()
	if bwrap == "" {
		t.Fatal("bwrap is not installed (Debian package bubblewrap; make deps installs it)")
	}
	ws, outside := setup(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	secret := filepath.Join(outside, "secret")
	connect := fmt.Sprintf("exec 3<>/dev/tcp/127.0.0.1/%d && echo connected", port)
	confined := newReg(t, ws, Options{Bash: true, BashAllow: []string{"*"}, BashSandbox: bwrap})
	open := newReg(t, ws, Options{Bash: true, BashAllow: []string{"*"}})
	run := func(r *registry.Registry, cmd string) string {
		o := call(t, r, "bash", map[string]any{"command": cmd})
		if o.Err != nil {
			t.Fatalf("%q: %v", cmd, o.Err)
		}
		return o.Result.Content
	}
	for _, cmd := range []string{"cat " + secret, "cat out/secret"} {
		if got := run(open, cmd); !strings.Contains(got, "top secret") {
			t.Fatalf("unconfined %q: %q (the check cannot fail)", cmd, got)
		}
		if got := run(confined, cmd); strings.Contains(got, "top secret") || !strings.Contains(got, "[exit status") {
			t.Errorf("sandboxed %q read outside the workspace: %q", cmd, got)
		}
	}
	if got := run(open, connect); !strings.Contains(got, "connected") {
		t.Fatalf("unconfined connect: %q (the check cannot fail)", got)
	}
	if got := run(confined, connect); strings.Contains(got, "connected") {
		t.Errorf("sandboxed bash opened a socket: %q", got)
	}
	if got := run(confined, "ls /etc/hostname /root"); !strings.Contains(got, "No such file") {
		t.Errorf("sandboxed bash sees /etc or /root: %q", got)
	}
	if got := run(confined, "cat a.txt && echo made > new.txt && pwd"); got != "one\ntwo\nthree\n"+ws {
		t.Errorf("sandboxed bash in the workspace: %q", got)
	}
	if data, err := os.ReadFile(filepath.Join(ws, "new.txt")); err != nil || string(data) != "made\n" {
		t.Errorf("a write in the workspace did not reach it: %q %v", data, err)
	}
	// The allow-list runs through the sandbox too.
	listed := newReg(t, ws, Options{Bash: true, BashAllow: []string{"cat"}, BashSandbox: bwrap})
	if got := run(listed, "cat "+secret); strings.Contains(got, "top secret") {
		t.Errorf("allow-listed cat read outside the workspace: %q", got)
	}
}

package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/toolharness/toolharness/agent"
	"github.com/toolharness/toolharness/internal/ollamatest"
	"github.com/toolharness/toolharness/registry/mcp/mcptest"
)

// agentWorkspace is a workspace with a file and a skills directory.
func agentWorkspace(t *testing.T) (ws, skills string) {
	t.Helper()
	root := t.TempDir()
	ws, skills = filepath.Join(root, "ws"), filepath.Join(root, "skills")
	for path, body := range map[string]string{
		filepath.Join(ws, "a.go"):             "package a\n",
		filepath.Join(ws, "docs", "x.md"):     "# x\n",
		filepath.Join(skills, "review.md"):    "---\nname: review\ndescription: Review a file.\n---\nRead $ARGUMENTS with read_file and list its bugs.\n",
		filepath.Join(skills, "summarise.md"): "Summarise the workspace.\n",
	} {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return ws, skills
}

// runAgentCLI runs toolharness in-process.
func runAgentCLI(stdin string, args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	code = run(append([]string{"toolharness"}, args...), strings.NewReader(stdin), &out, &errb)
	return code, out.String(), errb.String()
}

// traceRecords reads a trace file.
func traceRecords(t *testing.T, path string) []map[string]any {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var recs []map[string]any
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 4<<20)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("trace line %q: %v", sc.Text(), err)
		}
		recs = append(recs, m)
	}
	return recs
}

// tiny are the flags that make the random test model call tools: calls
// constrained by the server, the first reply a call, strings bounded.
func tinyFlags(srv *ollamatest.Server, trace string) []string {
	return []string{"--model", srv.Model, "--template", "chatml", "--constrained", "--require-call",
		"--constrained-max-string", "16", "--max-tokens", "256", "--num-ctx", "16384", "--seed", "5", "--trace", trace}
}

func TestE2ERunBuiltinTools(t *testing.T) {
	srv := ollamatest.Start(t)
	ws, _ := agentWorkspace(t)
	trace := filepath.Join(t.TempDir(), "run.jsonl")
	args := append([]string{"--host", srv.URL, "run", "--tools", "builtin:fs", "--workspace", ws, "--max-turns", "1"}, tinyFlags(srv, trace)...)
	code, stdout, stderr := runAgentCLI("", append(args, "list the files")...)
	// The first reply must be a call; with one generation allowed, the task
	// then hits the turn limit: exit status 2.
	if code != exitLimit {
		t.Fatalf("exit %d, want %d (limit); stderr:\n%s", code, exitLimit, stderr)
	}
	if !strings.Contains(stderr, "● ") || !strings.Contains(stderr, "⎿ ") || !strings.Contains(stderr, "max_turns") {
		t.Errorf("stderr lacks the call line, its result or the limit:\n%s", stderr)
	}
	if stdout != "" {
		t.Errorf("stdout %q: no answer was given", stdout)
	}
	var steps []map[string]any
	for _, r := range traceRecords(t, trace) {
		if r["type"] == "step" {
			steps = append(steps, r)
		}
	}
	if len(steps) != 1 || steps[0]["calls"] == nil || steps[0]["results"] == nil {
		t.Fatalf("trace steps %v", steps)
	}
	name := steps[0]["calls"].([]any)[0].(map[string]any)["name"].(string)
	builtins := map[string]bool{"read_file": true, "list_dir": true, "glob": true, "grep": true, "write_file": true, "edit_file": true}
	if !builtins[name] {
		t.Errorf("called %q, not a built-in tool", name)
	}

	// Without tools the random model writes text until the token limit
	// cuts it: a limit, never an answer (exit status 2, stop "length");
	// the template is detected from the model's.
	code, stdout, stderr = runAgentCLI("", "--host", srv.URL, "run", "--model", srv.Model, "--max-tokens", "16", "say hi")
	if code != exitLimit || strings.TrimSpace(stdout) == "" || strings.Contains(stderr, "using chatml") ||
		!strings.Contains(stderr, "cut by the token limit (16 tokens)") {
		t.Errorf("exit %d, stdout %q, stderr:\n%s", code, stdout, stderr)
	}

	// run --json (with --host after the command, as the README writes
	// it): one object, on stdout only, saying the reply was cut.
	code, stdout, stderr = runAgentCLI("", "run", "--host", srv.URL, "--model", srv.Model, "--max-tokens", "16", "--json", "say hi")
	var rec chatRecord
	if err := json.Unmarshal([]byte(stdout), &rec); err != nil || code != exitLimit || strings.Count(stdout, "\n") != 1 ||
		rec.Message != "say hi" || rec.Stop != "length" || !strings.Contains(rec.Error, "token limit (16 tokens)") {
		t.Errorf("run --json: exit %d, %+v (%v), stdout %q, stderr:\n%s", code, rec, err, stdout, stderr)
	}
}

func TestE2ERunSkillAndSubagent(t *testing.T) {
	srv := ollamatest.Start(t)
	ws, skills := agentWorkspace(t)

	// A skill: /review expands into the user turn, and the only tool is
	// skill, so the forced first call loads one (its name is an enum).
	trace := filepath.Join(t.TempDir(), "skill.jsonl")
	args := append([]string{"--host", srv.URL, "run", "--skills", skills, "--workspace", ws, "--max-turns", "2"}, tinyFlags(srv, trace)...)
	code, _, stderr := runAgentCLI("", append(args, "/review a.go")...)
	if code != 0 && code != exitLimit {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr)
	}
	recs := traceRecords(t, trace)
	if recs[0]["type"] != "user" || !strings.Contains(recs[0]["content"].(string), "Read a.go with read_file") {
		t.Errorf("the skill was not expanded into the user turn: %v", recs[0])
	}
	if rem := recs[0]["reminders"]; rem == nil || !strings.Contains(rem.([]any)[0].(string), "- review: Review a file.") {
		t.Errorf("no skills reminder: %v", rem)
	}
	call := recs[1]["calls"].([]any)[0].(map[string]any)
	result := recs[1]["results"].([]any)[0].(map[string]any)
	if call["name"] != "skill" || result["is_error"] == true || !strings.Contains(stderr, "● skill(") {
		t.Errorf("skill call %v result %v", call, result)
	}

	// A sub-agent: the only tool is task; the sub-agent runs in its own
	// conversation and only its final text comes back.
	trace = filepath.Join(t.TempDir(), "task.jsonl")
	args = append([]string{"--host", srv.URL, "run", "--task", "--workspace", ws, "--max-turns", "2"}, tinyFlags(srv, trace)...)
	code, _, stderr = runAgentCLI("", append(args, "look around")...)
	if code != 0 && code != exitLimit {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr)
	}
	var mainTask, subSteps int
	var taskResult string
	for _, r := range traceRecords(t, trace) {
		if r["type"] != "step" {
			continue
		}
		switch r["agent"] {
		case "sub1":
			subSteps++
		case "main":
			if cs, ok := r["calls"].([]any); ok && cs[0].(map[string]any)["name"] == "task" {
				mainTask++
				taskResult = r["results"].([]any)[0].(map[string]any)["content"].(string)
			}
		}
	}
	if mainTask == 0 || subSteps == 0 {
		t.Fatalf("task calls %d, sub-agent steps %d; stderr:\n%s", mainTask, subSteps, stderr)
	}
	if taskResult == "" {
		t.Error("the task tool returned nothing")
	}
}

func TestE2EChatScripted(t *testing.T) {
	srv := ollamatest.Start(t)
	ws, skills := agentWorkspace(t)
	trace := filepath.Join(t.TempDir(), "chat.jsonl")
	args := append([]string{"--host", srv.URL, "chat", "--tools", "builtin:fs", "--skills", skills, "--task", "--workspace", ws, "--max-turns", "2"}, tinyFlags(srv, trace)...)
	code, _, stderr := runAgentCLI("what is here?\n\n/review a.go\nthanks\n", args...)
	if code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr)
	}
	exchanges, calls := 0, 0
	for _, r := range traceRecords(t, trace) {
		switch {
		case r["type"] == "exchange" && r["agent"] == "main":
			exchanges++
		case r["type"] == "step" && r["agent"] == "main" && r["calls"] != nil:
			calls++
		}
	}
	if exchanges != 3 || calls < 3 {
		t.Errorf("%d exchanges with %d generations that called tools, want 3 and at least 3", exchanges, calls)
	}

	// A harness error (a model the server does not have) fails every
	// message, the session still reads them all, and the exit status says so.
	code, stdout, stderr := runAgentCLI("one\ntwo\n", "--host", srv.URL, "chat", "--json", "--model", "no-such-model", "--template", "chatml", "--max-tokens", "8")
	if code != exitHarnessError || strings.Count(stderr, "toolharness: message ") != 2 {
		t.Errorf("exit %d; stderr:\n%s", code, stderr)
	}
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	if len(lines) != 2 {
		t.Fatalf("--json printed %q", stdout)
	}
	var rec chatRecord
	if err := json.Unmarshal([]byte(lines[1]), &rec); err != nil || rec.Message != "two" || rec.Stop != "error" || !strings.Contains(rec.Error, "no-such-model") {
		t.Errorf("record %+v (%v)", rec, err)
	}
}

// TestE2EModelFamilyServerErrors: a model the server does not have is an
// error naming the flags to pass, and a server that is not there is an
// error saying so, never a reason to guess a template.
func TestE2EModelFamilyServerErrors(t *testing.T) {
	srv := ollamatest.Start(t)
	var notes bytes.Buffer
	ollama := serverRef{kind: "ollama", host: srv.URL}
	// The model is not there: the fix is to pull it, not a template flag.
	want := `model "no-such-model" not found on ` + srv.URL + `: pull it first (ollama pull no-such-model)`
	if _, err := modelFamily(context.Background(), ollama, "no-such-model", false, &notes); err == nil || err.Error() != want {
		t.Errorf("unknown model: error %v, notes %q", err, notes.String())
	}
	dead := deadHost(t)
	for _, kind := range []string{"ollama", "llamacpp"} {
		_, err := modelFamily(context.Background(), serverRef{kind: kind, host: dead}, srv.Model, false, &notes)
		if err == nil || !strings.HasPrefix(err.Error(), "cannot reach ") || !strings.HasSuffix(err.Error(), dead+": connection refused") {
			t.Errorf("%s, dead server: error %v", kind, err)
		}
	}
}

// TestE2ERunMCP runs a task whose only tools come from a real MCP server
// over stdio (this test binary serving mcptest's server, see TestMain in
// tools_test.go): the constrained, required first reply calls one of them,
// the loop runs it through the server, and the trace holds the call and
// the server's own result.
func TestE2ERunMCP(t *testing.T) {
	srv := ollamatest.Start(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if strings.ContainsAny(exe, " \t") {
		t.Fatalf("test binary path %q has spaces; --mcp splits the command at spaces: set GOTMPDIR to a path without spaces", exe)
	}
	t.Setenv(mcptest.EnvServe, "1") // inherited by the server process
	ws, _ := agentWorkspace(t)
	trace := filepath.Join(t.TempDir(), "mcp.jsonl")
	args := append([]string{"--host", srv.URL, "run", "--mcp", "calc=" + exe + " -test.run=^$", "--yes", "--workspace", ws, "--max-turns", "1"},
		tinyFlags(srv, trace)...)
	code, stdout, stderr := runAgentCLI("", append(args, "add 2 and 3")...)
	// One generation allowed and it must be a call: the task hits the turn
	// limit after the call ran.
	if code != exitLimit {
		t.Fatalf("exit %d, want %d (limit); stderr:\n%s", code, exitLimit, stderr)
	}
	if stdout != "" {
		t.Errorf("stdout %q: no answer was given", stdout)
	}
	type step struct {
		Calls   []agent.TraceCall   `json:"calls"`
		Results []agent.TraceResult `json:"results"`
		Ran     []string            `json:"ran"`
	}
	var steps []step
	for _, r := range traceRecords(t, trace) {
		if r["type"] != "step" {
			continue
		}
		data, _ := json.Marshal(r)
		var s step
		if err := json.Unmarshal(data, &s); err != nil {
			t.Fatal(err)
		}
		steps = append(steps, s)
	}
	if len(steps) != 1 || len(steps[0].Calls) != 1 || len(steps[0].Results) != 1 {
		t.Fatalf("trace steps %+v; stderr:\n%s", steps, stderr)
	}
	call, res := steps[0].Calls[0], steps[0].Results[0]
	if res.CallID != call.ID || res.Name != call.Name || len(steps[0].Ran) != 1 || steps[0].Ran[0] != call.ID {
		t.Errorf("call %+v, result %+v, ran %v: the result must be the call's, and its handler must have run", call, res, steps[0].Ran)
	}
	if !strings.Contains(stderr, "● "+call.Name+"(") || !strings.Contains(stderr, "⎿ ") {
		t.Errorf("stderr lacks the call line or its result:\n%s", stderr)
	}
	// The result is what the MCP server computes from the arguments.
	switch call.Name {
	case "mcp__calc__add":
		var a struct{ A, B int64 }
		if err := json.Unmarshal(call.Arguments, &a); err != nil {
			t.Fatalf("arguments %s: %v", call.Arguments, err)
		}
		if want := strconv.FormatInt(a.A+a.B, 10); res.Content != want || res.IsError {
			t.Errorf("add(%d, %d) returned %q (error %v), want %s", a.A, a.B, res.Content, res.IsError, want)
		}
	case "mcp__calc__shout":
		var a struct{ Text string }
		if err := json.Unmarshal(call.Arguments, &a); err != nil {
			t.Fatalf("arguments %s: %v", call.Arguments, err)
		}
		switch {
		case a.Text == "" && (!res.IsError || !strings.Contains(res.Content, "nothing to shout")):
			t.Errorf("shout(%q) returned %q (error %v), want the server's error", a.Text, res.Content, res.IsError)
		case a.Text != "" && (res.Content != strings.ToUpper(a.Text) || res.IsError):
			t.Errorf("shout(%q) returned %q (error %v)", a.Text, res.Content, res.IsError)
		}
	default:
		t.Fatalf("called %q, not a tool of the MCP server", call.Name)
	}
	t.Logf("%s(%s) → %q", call.Name, call.Arguments, res.Content)
}

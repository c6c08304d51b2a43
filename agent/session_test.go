package agent

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/toolharness/toolharness/backend"
	"github.com/toolharness/toolharness/chat"
	"github.com/toolharness/toolharness/registry"
)

var testEnv = Env{Name: "toolharness", Date: "2026-11-29", OS: "linux/amd64", Shell: "bash", Model: "m", Workspace: "/ws"}

type harness struct {
	b     *scriptBackend
	runs  *counting
	s     *Session
	trace *bytes.Buffer
	notes []string
}

func newHarness(t *testing.T, replies []reply, mod func(*Config)) *harness {
	t.Helper()
	r, err := NewRenderer(RendererOptions{Template: "qwen2.5", Format: "hermes"})
	if err != nil {
		t.Fatal(err)
	}
	reg, runs := newCountingRegistry()
	h := &harness{b: &scriptBackend{replies: replies}, runs: runs, trace: &bytes.Buffer{}}
	cfg := Config{
		Backend: h.b, Model: "m", Mode: backend.ModeRaw, Renderer: r, Tools: RegistryTools(reg),
		Env: testEnv, MaxTurns: 6, MaxRetries: 2, Trace: h.trace,
		Hooks: Hooks{OnNotice: func(m string) { h.notes = append(h.notes, m) }},
		Clock: func() time.Time { return time.Date(2026, 11, 29, 20, 0, 0, 0, time.UTC) },
	}
	if mod != nil {
		mod(&cfg)
	}
	if s, err := New(context.Background(), cfg); err != nil {
		t.Fatal(err)
	} else {
		h.s = s
	}
	return h
}

// traceLines decodes the trace.
func (h *harness) traceLines(t *testing.T) []map[string]any {
	t.Helper()
	var out []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(h.trace.Bytes()))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("trace line %q: %v", sc.Text(), err)
		}
		out = append(out, m)
	}
	return out
}

// checkPrefix asserts every raw prompt extends the previous one plus the
// model's output.
func checkPrefix(t *testing.T, reqs []backend.Request, outputs []string) {
	t.Helper()
	for i := 1; i < len(reqs); i++ {
		want := reqs[i-1].Prompt + outputs[i-1]
		if !strings.HasPrefix(reqs[i].Prompt, want) {
			t.Errorf("prompt %d does not extend prompt %d plus its output", i, i-1)
		}
	}
}

func TestCallThenAnswer(t *testing.T) {
	call := hermesCall("read_file", `{"path": "a.txt"}`)
	h := newHarness(t, []reply{{text: "Let me look.\n" + call}, {text: "It says hello."}}, nil)
	ex, err := h.s.Send(context.Background(), "What is in a.txt?")
	if err != nil {
		t.Fatal(err)
	}
	if ex.Answer != "It says hello." || ex.Stop != StopAnswered || ex.Calls != 1 || ex.Retries != 0 {
		t.Errorf("exchange %+v", ex)
	}
	if n := h.runs.n("a.txt"); n != 1 {
		t.Errorf("read_file ran %d times", n)
	}
	reqs := h.b.reqs()
	if len(reqs) != 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	checkPrefix(t, reqs, []string{"Let me look.\n" + call})
	if !strings.Contains(reqs[1].Prompt, "contents of a.txt") {
		t.Errorf("the result is not in the second prompt:\n%s", reqs[1].Prompt)
	}
	if len(reqs[0].Stop) == 0 {
		t.Error("no stop sequences sent")
	}
	for _, st := range ex.Steps {
		if st.Divergence != nil {
			t.Errorf("step %d diverged: %+v", st.Step, st.Divergence)
		}
	}
	lines := h.traceLines(t)
	if len(lines) != 4 || lines[0]["type"] != "user" || lines[1]["type"] != "step" || lines[3]["type"] != "exchange" {
		t.Fatalf("trace: %v", lines)
	}
	lines = lines[1:]
	for _, k := range []string{"prompt_sha256", "prompt_bytes", "raw", "events", "calls", "results", "usage", "duration_ms", "attempts"} {
		if _, ok := lines[0][k]; !ok {
			t.Errorf("trace step lacks %q", k)
		}
	}
}

func TestSecondMessageKeepsPrefix(t *testing.T) {
	h := newHarness(t, []reply{{text: "Hi."}, {text: hermesCall("read_file", `{"path": "b"}`)}, {text: "Done."}}, nil)
	for _, msg := range []string{"hello", "read b"} {
		if _, err := h.s.Send(context.Background(), msg); err != nil {
			t.Fatal(err)
		}
	}
	reqs := h.b.reqs()
	checkPrefix(t, reqs, []string{"Hi.", hermesCall("read_file", `{"path": "b"}`)})
	sys := h.s.System()
	if !strings.HasPrefix(reqs[2].Prompt, reqs[0].Prompt[:strings.Index(reqs[0].Prompt, "hello")]) || sys.Text == "" {
		t.Error("system block changed")
	}
}

func TestInvalidCallIsRetried(t *testing.T) {
	bad := hermesCall("read_file", `{"paht": "a"}`)
	good := hermesCall("read_file", `{"path": "a"}`)
	h := newHarness(t, []reply{{text: bad}, {text: good}, {text: "ok"}}, nil)
	ex, err := h.s.Send(context.Background(), "read a")
	if err != nil {
		t.Fatal(err)
	}
	if ex.Retries != 1 || ex.Answer != "ok" || h.runs.n("a") != 1 {
		t.Errorf("retries %d answer %q runs %d", ex.Retries, ex.Answer, h.runs.n("a"))
	}
	if ms := ex.Steps[0].Mistakes; len(ms) != 1 || ms[0].Kind != "invalid_arguments" {
		t.Errorf("mistakes %+v", ms)
	}
	// The model-facing error went back as the call's result.
	p := h.b.reqs()[1].Prompt
	if !strings.Contains(p, "path") || !strings.Contains(p[strings.LastIndex(p, bad):], "<tool_response>") {
		t.Errorf("no error result after the bad call:\n%s", p)
	}
}

func TestRetryLimit(t *testing.T) {
	bad := hermesCall("nosuch", `{}`)
	h := newHarness(t, []reply{{text: bad}, {text: bad}, {text: bad}, {text: bad}}, nil)
	ex, err := h.s.Send(context.Background(), "go")
	var le *LimitError
	if !errors.As(err, &le) || !errors.Is(err, ErrLimit) || le.Stop != StopRetries {
		t.Fatalf("err %v", err)
	}
	if ex.Stop != StopRetries || len(h.b.reqs()) != 3 || ex.Retries != 2 {
		t.Errorf("stop %s after %d requests, %d retries", ex.Stop, len(h.b.reqs()), ex.Retries)
	}
	// The session goes on after a limit.
	h.b.replies = []reply{{text: "fine"}}
	if ex, err := h.s.Send(context.Background(), "next"); err != nil || ex.Answer != "fine" {
		t.Errorf("after the limit: %v %+v", err, ex)
	}
}

func TestMaxTurns(t *testing.T) {
	var rs []reply
	for i := 0; i < 10; i++ {
		rs = append(rs, reply{text: hermesCall("read_file", `{"path": "x"}`)})
	}
	h := newHarness(t, rs, func(c *Config) { c.MaxTurns = 3 })
	ex, err := h.s.Send(context.Background(), "loop")
	var le *LimitError
	if !errors.As(err, &le) || le.Stop != StopMaxTurns || ex.Stop != StopMaxTurns {
		t.Fatalf("err %v", err)
	}
	if len(h.b.reqs()) != 3 || h.runs.n("x") != 3 {
		t.Errorf("%d requests, %d runs", len(h.b.reqs()), h.runs.n("x"))
	}
}

func TestRequireCallNudgesOnce(t *testing.T) {
	h := newHarness(t, []reply{{text: "I think it is fine."}, {text: hermesCall("read_file", `{"path": "n"}`)}, {text: "done"}},
		func(c *Config) { c.RequireCall = true })
	ex, err := h.s.Send(context.Background(), "check n")
	if err != nil {
		t.Fatal(err)
	}
	if ex.Retries != 1 || ex.Answer != "done" || h.runs.n("n") != 1 {
		t.Errorf("%+v", ex)
	}
	if !strings.Contains(h.b.reqs()[1].Prompt, "You must call one of the tools") {
		t.Error("no nudge in the second prompt")
	}
}

func TestUnclosedBlockIsReported(t *testing.T) {
	broken := "<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"a\"}\n<tool_call>\n" + `{"name": "read_file", "arguments": {"path": "b"}}` + "\n</tool_call>"
	h := newHarness(t, []reply{{text: broken}, {text: "ok"}}, nil)
	ex, err := h.s.Send(context.Background(), "x")
	if err != nil {
		t.Fatal(err)
	}
	if len(ex.Steps[0].Mistakes) == 0 {
		t.Fatalf("no mistake recorded; events %+v", ex.Steps[0].Events)
	}
	if ex.Retries != 1 {
		t.Errorf("retries %d", ex.Retries)
	}
}

func TestFaultBeforeOutputIsRetried(t *testing.T) {
	h := newHarness(t, []reply{
		{failBefore: &backend.Error{Kind: backend.KindUnreachable, Backend: "script", Message: "connection refused"}},
		{text: "hello"},
	}, nil)
	ex, err := h.s.Send(context.Background(), "hi")
	if err != nil {
		t.Fatal(err)
	}
	if ex.Answer != "hello" || ex.Steps[0].Attempts != 2 || len(h.notes) == 0 {
		t.Errorf("%+v notes %v", ex, h.notes)
	}
}

func TestFaultAfterOutputIsNotRetried(t *testing.T) {
	call := hermesCall("write_file", `{"path": "w"}`)
	text := call + "\nand more text"
	h := newHarness(t, []reply{{text: text, cutAfter: len(call) + 5}, {text: "should not be asked"}}, nil)
	ex, err := h.s.Send(context.Background(), "write w")
	if !errors.Is(err, backend.ErrStreamCut) {
		t.Fatalf("err %v", err)
	}
	if !strings.Contains(err.Error(), "not retried") {
		t.Errorf("error %q does not say it was not retried", err)
	}
	if len(h.b.reqs()) != 1 || h.runs.n("w") != 1 || ex.Stop != StopError {
		t.Errorf("%d requests, %d runs, stop %s", len(h.b.reqs()), h.runs.n("w"), ex.Stop)
	}
	lines := h.traceLines(t)
	if len(lines) != 2 || lines[1]["fault"] == nil || lines[1]["ran"] == nil {
		t.Errorf("trace %v", lines)
	}
	// The session keeps what happened; the next message sees the result.
	h.b.replies = []reply{{text: "ok"}}
	if _, err := h.s.Send(context.Background(), "again?"); err != nil {
		t.Fatal(err)
	}
	if n := h.runs.n("w"); n != 1 {
		t.Errorf("write_file ran %d times", n)
	}
	if p := h.b.reqs()[1].Prompt; !strings.Contains(p, "contents of w") {
		t.Errorf("the result of the call that ran is lost:\n%s", p)
	}
}

func TestDivergenceIsReported(t *testing.T) {
	h := newHarness(t, []reply{{text: hermesCall("read_file", `{"path": "d"}`)}, {text: "ok"}}, func(c *Config) {
		c.Renderer = &clockRenderer{Renderer: c.Renderer}
	})
	ex, err := h.s.Send(context.Background(), "x")
	if err != nil {
		t.Fatal(err)
	}
	d := ex.Steps[1].Divergence
	if d == nil {
		t.Fatal("no divergence reported")
	}
	p0 := h.b.reqs()[0].Prompt
	if want := strings.Index(p0, "Turn 1") + len("Turn "); d.Offset != want {
		t.Errorf("offset %d, want %d", d.Offset, want)
	}
	if len(h.notes) == 0 || !strings.Contains(h.notes[0], "diverged at byte") {
		t.Errorf("notes %v", h.notes)
	}
}

// clockRenderer re-renders every prompt whole with a counter in the
// system text: a deliberately unstable prefix.
type clockRenderer struct {
	Renderer
	stamp func(n int) string
	atEnd bool // the stamp ends the system text instead of starting it
}

func (c *clockRenderer) Transcript(sys System) (Transcript, error) {
	return &clockTranscript{c: c, sys: sys}, nil
}

type clockTranscript struct {
	c   *clockRenderer
	sys System
	n   int
}

func (t *clockTranscript) system() System {
	t.n++
	sys := t.sys
	stamp := fmt.Sprintf("Turn %d", t.n)
	if t.c.stamp != nil {
		stamp = t.c.stamp(t.n)
	}
	if t.c.atEnd {
		sys.Text += "\n" + stamp
	} else {
		sys.Text = stamp + "\n" + sys.Text
	}
	return sys
}

func (t *clockTranscript) Prompt(hist []Msg) (string, error) {
	return t.c.Renderer.Prompt(t.system(), hist)
}

func (t *clockTranscript) Messages(hist []Msg) ([]chat.Message, error) {
	return t.c.Renderer.Messages(t.system(), hist)
}

func TestChatMode(t *testing.T) {
	call := hermesCall("read_file", `{"path": "c"}`)
	h := newHarness(t, []reply{{text: call}, {text: "ok"}}, func(c *Config) { c.Mode = backend.ModeChat })
	ex, err := h.s.Send(context.Background(), "read c")
	if err != nil {
		t.Fatal(err)
	}
	reqs := h.b.reqs()
	if ex.Answer != "ok" || len(reqs) != 2 || reqs[0].Prompt != "" || len(reqs[1].Messages) < 3 {
		t.Fatalf("%+v %d", ex, len(reqs))
	}
	if reqs[1].Messages[0].Role != chat.RoleSystem || !strings.Contains(reqs[1].Messages[0].Content, "read_file") {
		t.Errorf("catalog not in the system message: %+v", reqs[1].Messages[0])
	}
	if ex.Steps[1].Divergence != nil {
		t.Errorf("divergence %+v", ex.Steps[1].Divergence)
	}
}

func TestConstrained(t *testing.T) {
	h := newHarness(t, []reply{{text: `{"name":"read_file","arguments":{"path":"k"}}`}, {text: `{"answer":"k is fine"}`}}, func(c *Config) {
		c.Constrained, c.RequireCall = true, true
		c.Backend.(*scriptBackend).constrain = true
	})
	ex, err := h.s.Send(context.Background(), "k?")
	if err != nil {
		t.Fatal(err)
	}
	if ex.Answer != "k is fine" || h.runs.n("k") != 1 {
		t.Errorf("%+v", ex)
	}
	reqs := h.b.reqs()
	if strings.Contains(string(reqs[0].Format), `"answer"`) || !strings.Contains(string(reqs[1].Format), `"answer"`) {
		t.Errorf("first request must be calls only, the second may answer:\n%s\n%s", reqs[0].Format, reqs[1].Format)
	}
	checkPrefix(t, reqs, []string{`{"name":"read_file","arguments":{"path":"k"}}`})
}

func TestConstrainedNeedsBackendSupport(t *testing.T) {
	r, err := NewRenderer(RendererOptions{Template: "qwen2.5"})
	if err != nil {
		t.Fatal(err)
	}
	reg, _ := newCountingRegistry()
	_, err = New(context.Background(), Config{Backend: &scriptBackend{}, Renderer: r, Tools: RegistryTools(reg), Constrained: true, Env: testEnv})
	if !errors.Is(err, backend.ErrUnsupported) {
		t.Errorf("err %v", err)
	}
}

func TestContextOverflowIsALimit(t *testing.T) {
	h := newHarness(t, []reply{{failBefore: &backend.Error{Kind: backend.KindContextOverflow, Backend: "script", Message: "prompt of 9000 tokens exceeds 8192"}}}, nil)
	ex, err := h.s.Send(context.Background(), "x")
	var le *LimitError
	if !errors.As(err, &le) || le.Stop != StopContext || !errors.Is(err, backend.ErrContextOverflow) || ex.Stop != StopContext {
		t.Fatalf("err %v stop %s", err, ex.Stop)
	}
}

func TestChatModeKeepsRemindersInPlace(t *testing.T) {
	call := hermesCall("read_file", `{"path": "c"}`)
	h := newHarness(t, []reply{{text: call}, {text: "ok"}, {text: "bye"}}, func(c *Config) {
		c.Mode = backend.ModeChat
		c.Instructions, c.InstructionsSource = "Use tabs.", "AGENTS.md"
	})
	for _, m := range []string{"read c", "thanks"} {
		if _, err := h.s.Send(context.Background(), m); err != nil {
			t.Fatal(err)
		}
	}
	reqs := h.b.reqs()
	first := reqs[0].Messages
	if len(first) != 2 || !strings.Contains(first[1].Content, "<system-reminder>") || !strings.Contains(first[1].Content, "Use tabs.") {
		t.Fatalf("first request %+v", first)
	}
	for i, r := range reqs[1:] {
		if len(r.Messages) < len(first) {
			t.Fatalf("request %d has %d messages", i+1, len(r.Messages))
		}
		for j := range first {
			if r.Messages[j].Role != first[j].Role || r.Messages[j].Content != first[j].Content {
				t.Errorf("request %d rewrote message %d:\n%q\nwas\n%q", i+1, j, r.Messages[j].Content, first[j].Content)
			}
		}
		if n := strings.Count(promptKey("", r.Messages), "Use tabs."); n != 1 {
			t.Errorf("request %d carries %d reminders", i+1, n)
		}
	}
}

func TestRawModeReminderStaysWithItsMessage(t *testing.T) {
	h := newHarness(t, []reply{{text: "hi"}, {text: "bye"}}, func(c *Config) {
		c.Instructions, c.InstructionsSource = "Use tabs.", "AGENTS.md"
	})
	for _, m := range []string{"hello", "thanks"} {
		if _, err := h.s.Send(context.Background(), m); err != nil {
			t.Fatal(err)
		}
	}
	reqs := h.b.reqs()
	p1 := reqs[1].Prompt
	if strings.Count(p1, "Use tabs.") != 1 || strings.Index(p1, "Use tabs.") > strings.Index(p1, "hello") {
		t.Errorf("the reminder must stay once, before the first message:\n%s", p1)
	}
}

func TestNoTools(t *testing.T) {
	h := newHarness(t, []reply{{text: hermesCall("read_file", `{"path": "a"}`)}, {text: "fine"}}, func(c *Config) { c.Tools = nil })
	ex, err := h.s.Send(context.Background(), "hi")
	if err != nil {
		t.Fatal(err)
	}
	// The call names no tool of this session: refused, and the model retries.
	if ex.Answer != "fine" || ex.Retries != 1 || ex.Steps[0].Mistakes[0].Kind != "unknown_tool" || h.runs.n("a") != 0 {
		t.Errorf("%+v", ex)
	}
	if strings.Contains(h.b.reqs()[0].Prompt, "<tools>") {
		t.Error("a catalog without tools")
	}
}

func TestDeferredToolCalledDirectly(t *testing.T) {
	var ran int
	h := newHarness(t, []reply{{text: hermesCall("secret", `{"path": "s"}`)}, {text: "done"}}, func(c *Config) {
		reg, _ := newCountingRegistry()
		err := reg.Register(registry.Spec{Deferred: true,
			Tool:    chat.Tool{Name: "secret", Description: "A deferred tool.", Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)},
			Handler: func(context.Context, json.RawMessage) (string, error) { ran++; return "found", nil }})
		if err != nil {
			t.Fatal(err)
		}
		c.Tools = RegistryTools(reg)
	})
	ex, err := h.s.Send(context.Background(), "use the secret tool")
	if err != nil {
		t.Fatal(err)
	}
	if ran != 1 || ex.Retries != 0 || ex.Answer != "done" {
		t.Errorf("ran %d, %+v", ran, ex)
	}
	p := h.b.reqs()[0].Prompt
	sys := p[:strings.Index(p, "<|im_start|>user")]
	if strings.Contains(sys, `"name": "secret"`) || !strings.Contains(sys, "tool_search") || !strings.Contains(p[len(sys):], "secret") {
		t.Errorf("the deferred tool must be named in a reminder, not in the system block:\n%s", p)
	}
}

func TestBackendNotesAreReported(t *testing.T) {
	note := "ollama: stripped the rendered BOS: the server adds its own"
	h := newHarness(t, []reply{{text: "a", notes: []string{note}}, {text: "b", notes: []string{note}}}, nil)
	for _, m := range []string{"x", "y"} {
		if _, err := h.s.Send(context.Background(), m); err != nil {
			t.Fatal(err)
		}
	}
	if len(h.notes) != 1 || h.notes[0] != note {
		t.Errorf("notices %q: the note must be said once", h.notes)
	}
	steps := 0
	for _, l := range h.traceLines(t) {
		if l["type"] == "step" && l["notes"] != nil {
			steps++
		}
	}
	if steps != 2 {
		t.Errorf("%d trace steps carry the note, want 2", steps)
	}
}

package main

import (
	"strings"
	"testing"
)

// TestAddedCatalogSaidOnce: a template that renders no tools gets the
// harness's hermes catalog, and render, run, chat (raw and chat mode),
// parse and templates inspect say so once, in the same words; parse reads the calls in that
// format, so a run's output parses back with the same flags.
func TestAddedCatalogSaidOnce(t *testing.T) {
	noCalls := writeFile(t, "nocalls.jinja", "{% for m in messages %}<|{{ m.role }}|>{{ m.content }}{% endfor %}{% if add_generation_prompt %}<|assistant|>{% endif %}")
	conv := writeFile(t, "conv.json", `[{"role":"system","content":"Be brief."},{"role":"user","content":"hi"}]`)
	call := `<tool_call>{"name":"list_dir","arguments":{"path":"."}}</tool_call>`
	line := "toolharness: " + catalogNote("hermes") + "\n"
	once := func(name, stderr string) {
		t.Helper()
		if n := strings.Count(stderr, line); n != 1 {
			t.Errorf("%s says %q %d times:\n%s", name, line, n, stderr)
		}
	}

	out, stderr, code := runCLI(t, "", "render", "--chat-template", noCalls, "--messages", conv, "--tools", "builtin:fs")
	if code != 0 || !strings.Contains(out, "<|system|>Be brief.") || !strings.Contains(out, "<tools>") || !strings.Contains(out, "list_dir") {
		t.Errorf("render: exit %d\n%s", code, out)
	}
	once("render", stderr)

	out, stderr, code = runCLI(t, "", "render", "--mode", "chat", "--chat-template", noCalls, "--messages", conv, "--tools", "builtin:fs")
	if code != 0 || !strings.Contains(out, `"content":"Be brief.\n\n# Tools`) || !strings.Contains(out, "list_dir") {
		t.Errorf("render --mode chat: exit %d\n%s", code, out)
	}
	once("render --mode chat", stderr)

	out, stderr, code = runCLI(t, call, "parse", "--chat-template", noCalls, "--tools", "builtin:fs")
	if code != 0 || !strings.Contains(out, `{"type":"call","id":"call_0","name":"list_dir","arguments":{"path":"."}`) {
		t.Errorf("parse: exit %d\n%s%s", code, out, stderr)
	}
	once("parse", stderr)

	_, stderr, code = runCLI(t, "", "templates", "inspect", noCalls)
	if code != 0 {
		t.Errorf("templates inspect: exit %d: %s", code, stderr)
	}
	once("templates inspect", stderr)

	for _, cmd := range []string{"run", "chat"} {
		for _, mode := range []string{"raw", "chat"} {
			srv := newScriptedOllama(t, call, "Done.")
			args := []string{cmd, "--host", srv.URL, "--model", "m", "--mode", mode, "--chat-template", noCalls, "--tools", "builtin:fs", "--workspace", t.TempDir()}
			stdin := ""
			if cmd == "run" {
				args = append(args, "list the files")
			} else {
				stdin = "list the files\n"
			}
			out, stderr, code := runCLI(t, stdin, args...)
			if code != 0 || out != "Done.\n" || !strings.Contains(stderr, "● list_dir(") {
				t.Errorf("%s --mode %s: exit %d\nstdout: %s\nstderr: %s", cmd, mode, code, out, stderr)
			}
			once(cmd+" --mode "+mode, stderr)
		}
	}
}

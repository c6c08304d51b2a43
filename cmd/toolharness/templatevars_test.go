package main

import (
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

// TestTemplateVars: --bos and --eos give a bare .jinja its tokens, and one
// that prints them without says so naming the flags; --template-var
// passes keyword arguments to the template, JSON values typed.
func TestTemplateVars(t *testing.T) {
	bare := writeFile(t, "bare.jinja", "{{ bos_token }}{% for m in messages %}[{{ m.role }}]{{ m.content }}{{ eos_token }}{% endfor %}{% if add_generation_prompt %}[assistant]{% endif %}")
	qwen3 := writeFile(t, "qwen3.jinja", readTestFile(t, "../../templates/testdata/official/Qwen-Qwen3-0.6B.jinja"))
	conv := writeFile(t, "conv.json", `[{"role":"user","content":"hi"}]`)

	out, stderr, code := runCLI(t, "", "render", "--chat-template", bare, "--messages", conv)
	want := "prints bos_token (--bos TEXT) and eos_token (--eos TEXT), which"
	if code != 0 || out != "[user]hi[assistant]" || !strings.Contains(stderr, "toolharness: warning: the template of ") || !strings.Contains(stderr, want) {
		t.Errorf("without --bos: exit %d, stdout %q, stderr %q", code, out, stderr)
	}
	out, stderr, code = runCLI(t, "", "render", "--chat-template", bare, "--bos", "<s>", "--eos", "</s>", "--messages", conv)
	if code != 0 || out != "<s>[user]hi</s>[assistant]" || strings.Contains(stderr, "warning") {
		t.Errorf("with --bos: exit %d, stdout %q, stderr %q", code, out, stderr)
	}

	out, stderr, code = runCLI(t, "", "render", "--chat-template", qwen3, "--messages", conv)
	if code != 0 || strings.Contains(out, "<think>") {
		t.Fatalf("qwen3: exit %d, stdout %q, stderr %q", code, out, stderr)
	}
	out, stderr, code = runCLI(t, "", "render", "--chat-template", qwen3, "--template-var", "enable_thinking=false", "--messages", conv)
	if code != 0 || !strings.HasSuffix(out, "<|im_start|>assistant\n<think>\n\n</think>\n\n") {
		t.Errorf("enable_thinking=false: exit %d, stdout %q, stderr %q", code, out, stderr)
	}
	// "false" is JSON false, not the string "false" (which is true).
	out, _, _ = runCLI(t, "", "render", "--chat-template", qwen3, "--template-var", `enable_thinking="false"`, "--messages", conv)
	if strings.Contains(out, "<think>") {
		t.Errorf("a string value was read as JSON false: %q", out)
	}

	for _, tc := range []struct{ args []string }{
		{[]string{"render", "--template", "qwen3", "--template-var", "enable_thinking=false", "--messages", conv}},
		{[]string{"render", "--chat-template", qwen3, "--template-var", "no value", "--messages", conv}},
	} {
		if _, stderr, code := runCLI(t, "", tc.args...); code != 1 || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, "--template-var") {
			t.Errorf("%v: exit %d, stderr %q", tc.args, code, stderr)
		}
	}
}

// TestTemplateVarsOnEveryCommand: every command that takes --chat-template
// takes --bos, --eos and --template-var, and reads them (a malformed
// --template-var is its one-line error).
func TestTemplateVarsOnEveryCommand(t *testing.T) {
	srv := newScriptedOllama(t, "Hi.")
	tmpl := writeFile(t, "bare.jinja", "{% for m in messages %}[{{ m.role }}]{{ m.content }}{% endfor %}{% if add_generation_prompt %}[assistant]{% endif %}")
	conv := writeFile(t, "conv.json", `[{"role":"user","content":"hi"}]`)
	suite := smallSuite(t, t.TempDir())
	cases := map[string][]string{
		"run":              {"--host", srv.URL, "--model", "m", "hi"},
		"chat":             {"--host", srv.URL, "--model", "m"},
		"serve":            {"--host", srv.URL, "--model", "m"},
		"render":           {"--messages", conv},
		"parse":            nil,
		"templates show":   nil,
		"templates verify": {"--host", srv.URL, "--messages", conv},
		"bench run":        {"--endpoint", srv.URL, "--models", "m", "--suite", suite, "--out", t.TempDir()},
		"compare":          {"--endpoint", srv.URL, "--model", "m", "--suite", suite, "--out", t.TempDir()},
	}
	seen := 0
	var walk func(prefix string, cmds []*cli.Command)
	walk = func(prefix string, cmds []*cli.Command) {
		for _, cmd := range cmds {
			path := strings.TrimSpace(prefix + " " + cmd.Name)
			walk(path, cmd.Subcommands)
			has := func(name string) bool {
				return slices.ContainsFunc(cmd.Flags, func(f cli.Flag) bool { return slices.Contains(f.Names(), name) })
			}
			if !has("chat-template") {
				continue
			}
			seen++
			if !has("bos") || !has("eos") || !has("template-var") {
				t.Errorf("%s takes --chat-template but not --bos, --eos and --template-var", path)
				continue
			}
			extra, ok := cases[path]
			if !ok {
				t.Errorf("%s takes --chat-template but has no case here", path)
				continue
			}
			args := append(append(strings.Fields(path), "--chat-template", tmpl, "--template-var", "no value"), extra...)
			_, stderr, code := runCLI(t, "", args...)
			if code == 0 || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, `--template-var "no value"`) {
				t.Errorf("%s --template-var 'no value': exit %d, stderr %q", path, code, stderr)
			}
			if !has("template") {
				continue
			}
			// With a family they are refused: they apply to a model's own template.
			args = append(append(strings.Fields(path), "--template", "qwen2.5", "--bos", "<s>"), extra...)
			_, stderr, code = runCLI(t, "", args...)
			if code == 0 || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, "apply to a model's own template") {
				t.Errorf("%s --template qwen2.5 --bos: exit %d, stderr %q", path, code, stderr)
			}
		}
	}
	walk("", newApp(nil, io.Discard, io.Discard).Commands)
	if seen != len(cases) {
		t.Errorf("%d commands take --chat-template, %d cases", seen, len(cases))
	}
}

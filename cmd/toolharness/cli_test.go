package main

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/toolharness/toolharness/internal/ollamatest"
	"github.com/toolharness/toolharness/internal/reach/reachtest"
)

// deadHost is the URL of a port with no server.
func deadHost(t *testing.T) string { return reachtest.DeadURL(t) }

// cliCase is one command line and what it must do.
type cliCase struct {
	name  string
	args  []string
	stdin string
	code  int
	// stderr is the whole stderr, one line without "toolharness: ", for
	// failures; for successes a substring ("" = anything).
	stderr string
	// stdout: for failures it must be empty; for successes a substring.
	stdout string
}

// TestCLIConventions runs every bad input of issue 13 and of the README's
// commands: a failure exits non-zero with exactly one line on stderr that
// names what the user gave, and nothing on stdout; the forms that must
// work (--host after the command, - for stdin, parse FILE) work. None of
// the failures may reach the network: the host is a closed port, so a
// probe would answer with "cannot reach" instead of the expected line.
func TestCLIConventions(t *testing.T) {
	dead := deadHost(t)
	dir := t.TempDir()
	file := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tools := file("tools.json", toolsFixture)
	noName := file("noname.json", `[{"description":"no name here"}]`)
	garbage := file("garbage.bin", "\x00\x01\x02\xff\xfe binary\n\x7fELF\x02\x01\n")
	empty := file("empty.jsonl", "")
	noTools := file("notools.jsonl", `{"id":"a","raw":"<tool_call>{\"name\":\"f\",\"arguments\":{}}</tool_call>"}`+"\n")
	halfBad := file("halfbad.jsonl", `{"id":"a","raw":"hi","tools":[{"name":"f"}]}`+"\n[1]\n{\"id\":\"c\"}\n")
	raw := file("raw.txt", `<tool_call>{"name":"read_file","arguments":{"path":"a.txt"}}</tool_call>`)
	conv := `[{"role":"user","content":"hi"}]`
	convFile := file("conv.json", conv)
	missing := filepath.Join(dir, "missing.json")
	notGGUF := file("model.gguf", "<html>404 Not Found</html>\n")
	convAsTemplate := file("messages.json", conv)
	binTemplate := file("model.jinja", "\x00\x01GGUX\xff\xfe")
	nameNumber := file("namenumber.json", `[{"name":7}]`)
	toolsNumber := file("toolsnumber.json", `{"tools":5}`)
	toolNumber := file("toolnumber.json", `[5]`)
	qwenFolder := file("qwen3/chat_template.jinja", readTestFile(t, "../../templates/testdata/official/Qwen-Qwen3-0.6B.jinja"))
	ggufQwen3Tokens := ollamatest.TemplateModel(t, dir, "{% for m in messages %}{{ m.content }}{% endfor %}")
	noCalls := file("nocalls.jinja", "{% for m in messages %}<|{{ m.role }}|>{{ m.content }}{% endfor %}{% if add_generation_prompt %}<|assistant|>{% endif %}")
	raises := file("raises.jinja", `{{ raise_exception("roles must alternate user/assistant") }}`)
	glm := filepath.Join("..", "..", "templates", "testdata", "conformance", "templates", "zai-org-GLM-4.5.jinja")
	unreachable := "cannot reach Ollama at " + dead + ": connection refused"
	model := []string{"--host", dead, "--model", "m"}
	noCases := file("nocases.yaml", "name: x\ncases: []\n")

	cases := []cliCase{
		// A server that is not there: one line, before any retry.
		{name: "run --host after the command", args: append([]string{"run"}, append(model, "hi")...), code: 1, stderr: "run: " + unreachable},
		{name: "global --host", args: []string{"--host", dead, "run", "--model", "m", "hi"}, code: 1, stderr: "run: " + unreachable},
		{name: "chat stops at a dead server", args: append([]string{"chat"}, model...), stdin: "one\ntwo\nthree\n", code: 1, stderr: "chat: " + unreachable},
		{name: "bench run dead", args: []string{"--host", dead, "bench", "run", "--models", "x", "--out", filepath.Join(dir, "dead-run")}, code: 1,
			stderr: "bench run: " + unreachable + "; nothing measured, 15 case(s) not run (results in " + filepath.Join(dir, "dead-run") + "; continue with --resume)"},
		{name: "compare dead", args: []string{"compare", "--host", dead, "--model", "x", "--formats", "hermes,xml", "--out", filepath.Join(dir, "dead-cmp")}, code: 1,
			stderr: "compare: " + unreachable + "; nothing measured, 31 case(s) not run (results in " + filepath.Join(dir, "dead-cmp") + "; continue with --resume)"},

		// Checked before any network call.
		{name: "run --tools missing", args: append(append([]string{"run"}, model...), "--tools", missing, "hi"), code: 1, stderr: "run: " + missing + ": no such file or directory"},
		{name: "run --tools without a name", args: append(append([]string{"run"}, model...), "--tools", noName, "hi"), code: 1, stderr: "run: " + noName + ": tool 1 has no name"},
		{name: "run --workspace", args: append(append([]string{"run"}, model...), "--workspace", "/nonexistent", "hi"), code: 1,
			stderr: "run: --workspace /nonexistent: not a directory (see toolharness run --help)"},
		{name: "run --format nope", args: append(append([]string{"run"}, model...), "--format", "nope", "hi"), code: 1, stderr: `run: --format "nope": want one of `},
		{name: "run --format glm45", args: append(append([]string{"run"}, model...), "--format", "glm45", "hi"), code: 1,
			stderr: "run: --format glm45: toolharness parses glm45 but does not write a prompt in it; leave --format out"},
		{name: "render --format glm4", args: []string{"render", "--template", "qwen2.5", "--format", "glm4", "--messages", convFile}, code: 1,
			stderr: "render: --format glm4: toolharness parses glm4 but does not write a prompt in it"},
		{name: "run --format auto", args: append(append([]string{"run"}, model...), "--format", "auto", "hi"), code: 1, stderr: "run: --format auto: auto means guessing"},
		{name: "run --max-turns -1", args: append(append([]string{"run"}, model...), "--max-turns", "-1", "hi"), code: 1, stderr: "run: --max-turns -1: must not be negative (see toolharness run --help)"},
		{name: "run --max-retries -1", args: append(append([]string{"run"}, model...), "--max-retries", "-1", "hi"), code: 1, stderr: "run: --max-retries -1: must not be negative"},
		{name: "run --max-tokens -1", args: append(append([]string{"run"}, model...), "--max-tokens", "-1", "hi"), code: 1, stderr: "run: --max-tokens -1: must not be negative"},
		{name: "run --stall-timeout -1s", args: append(append([]string{"run"}, model...), "--stall-timeout", "-1s", "hi"), code: 1, stderr: "run: --stall-timeout -1s: must not be negative"},
		{name: "run --backend", args: append(append([]string{"run"}, model...), "--backend", "vllm", "hi"), code: 1, stderr: `run: --backend "vllm": want one of ollama, llamacpp, openai`},
		{name: "run --template", args: append(append([]string{"run"}, model...), "--template", "nope", "hi"), code: 1, stderr: `run: --template "nope": want one of `},
		{name: "run --yes --deny", args: append(append([]string{"run"}, model...), "--yes", "--deny", "hi"), code: 1, stderr: "run: --yes and --deny exclude each other"},
		{name: "run no model", args: []string{"run", "--host", dead, "hi"}, code: 1, stderr: "run: --model is required (or TOOLHARNESS_MODEL)"},
		{name: "run no task", args: append([]string{"run"}, model...), code: 1, stderr: `run: no task given: toolharness run [flags] "task"`},
		{name: "run --tools builtin:nope", args: append(append([]string{"run"}, model...), "--tools", "builtin:net", "hi"), code: 1, stderr: `run: --tools builtin:net: unknown builtin group "net" (want fs, bash)`},
		{name: "chat --workspace", args: append(append([]string{"chat"}, model...), "--workspace", "/nonexistent"), stdin: "hi\n", code: 1, stderr: "chat: --workspace /nonexistent: not a directory"},
		{name: "bench run --formats nope", args: []string{"--host", dead, "bench", "run", "--models", "x", "--formats", "hermes,nope", "--out", filepath.Join(dir, "r1")}, code: 1,
			stderr: `bench run: --formats "nope": want one of `},
		{name: "bench run --modes nope", args: []string{"bench", "run", "--host", dead, "--models", "x", "--modes", "nope"}, code: 1, stderr: `bench run: --modes "nope": want raw, chat or server`},
		{name: "compare --modes server --constrained", args: []string{"compare", "--host", dead, "--model", "x", "--modes", "raw,server", "--constrained"}, code: 1,
			stderr: "compare: --constrained cannot be used with --modes server: the server constrains its own tool calls (or not)"},
		{name: "run --mode server --constrained", args: append(append([]string{"run"}, model...), "--mode", "server", "--constrained", "hi"), code: 1,
			stderr: "run: --constrained cannot be used with --mode server: the server constrains its own tool calls (or not)"},
		{name: "run --mode nope", args: append(append([]string{"run"}, model...), "--mode", "nope", "hi"), code: 1, stderr: `run: --mode "nope": want one of raw, chat, server`},
		{name: "bench run --repeats -1", args: []string{"bench", "run", "--host", dead, "--models", "x", "--repeats", "-1"}, code: 1, stderr: "bench run: --repeats -1: must not be negative"},
		{name: "bench run --concurrency -1", args: []string{"bench", "run", "--host", dead, "--models", "x", "--concurrency", "-1"}, code: 1, stderr: "bench run: --concurrency -1: must not be negative"},
		{name: "bench run --max-retries -2", args: []string{"bench", "run", "--host", dead, "--models", "x", "--max-retries", "-2"}, code: 1, stderr: "bench run: --max-retries -2: must not be negative"},
		{name: "bench run --suite missing", args: []string{"bench", "run", "--host", dead, "--models", "x", "--suite", missing}, code: 1, stderr: "bench run: " + missing + ": no such file or directory"},
		{name: "bench run no models", args: []string{"bench", "run", "--host", dead}, code: 1, stderr: "bench run: --models is required (see toolharness bench run --help)"},
		{name: "compare --formats nope", args: []string{"compare", "--host", dead, "--model", "x", "--formats", "nope"}, code: 1, stderr: `compare: --formats "nope": want one of `},
		{name: "tools check --format bogus", args: []string{"tools", "check", "--tools", tools, "--format", "bogus"}, code: 1, stderr: `tools check: --format "bogus": want one of `},
		{name: "tools check --tools -", args: []string{"tools", "check", "--tools", "-"}, stdin: toolsFixture, code: 1, stderr: "tools check: --tools -: standard input is already the command's input"},
		{name: "parse --chunk -1", args: []string{"parse", "--chunk", "-1", raw}, code: 1, stderr: "parse: --chunk -1: must not be negative"},
		{name: "parse --format nope", args: []string{"parse", "--format", "nope", raw}, code: 1, stderr: `parse: --format "nope": want one of `},

		// A package's input error, read with errors.As: the file or flag,
		// then the cause, without the package's words ("bench: suite: ").
		{name: "bench run --suite without cases", args: []string{"bench", "run", "--host", dead, "--models", "x", "--suite", noCases},
			code: 1, stderr: "bench run: " + noCases + ": no cases"},
		{name: "run --mcp empty", args: append(append([]string{"run"}, model...), "--mcp", "x=", "hi"), code: 1,
			stderr: `run: --mcp "x=": empty server spec (see toolharness run --help)`},

		// bench corpus inputs.
		{name: "bench corpus garbage", args: []string{"bench", "corpus", "--in", garbage}, code: 1, stderr: "bench corpus: " + garbage + ": none of the 2 non-empty lines is a record (line 1: not a JSON record: invalid character"},
		{name: "bench corpus without a catalog", args: []string{"bench", "corpus", "--in", noTools}, code: 0,
			stdout: "format auto, mode recorded", stderr: "1 record(s) have no tools and no --tools was given: every call they make names an unknown tool and counts as schema-invalid"},
		{name: "bench corpus some lines unreadable", args: []string{"bench", "corpus", "--in", halfBad}, code: 0,
			stdout: "format auto, mode recorded", stderr: halfBad + ": 2 of 3 line(s) unreadable, recorded as errors: input line 2: not a JSON record: a JSON array, not an object; input line 3: no \"raw\" field;"},
		{name: "parse --jsonl names no Go type", args: []string{"parse", "--jsonl"}, stdin: "[1]\n", code: 0, stdout: `"line 1: not a JSON record: a JSON array, not an object"`},
		{name: "bench corpus missing", args: []string{"bench", "corpus", "--in", missing}, code: 1, stderr: "bench corpus: " + missing + ": no such file or directory"},

		// Standard input, file arguments, positional arguments.
		{name: "parse FILE", args: []string{"parse", "--format", "hermes", raw}, code: 0, stdout: `"name":"read_file"`},
		{name: "parse -", args: []string{"parse", "--format", "hermes", "-"}, stdin: "hello", code: 0, stdout: `{"type":"text","text":"hello"}`},
		{name: "parse --tools builtin:fs", args: []string{"parse", "--tools", "builtin:fs", raw}, code: 0, stdout: `"arguments":{"path":"a.txt"}`},
		{name: "parse extra args", args: []string{"parse", raw, raw}, code: 1, stderr: fmt.Sprintf("parse: unexpected argument %q (see toolharness parse --help)", raw)},
		{name: "parse --tools - with stdin input", args: []string{"parse", "--tools", "-"}, stdin: "x", code: 1, stderr: "parse: --tools -: standard input is already the command's input"},
		{name: "render --messages -", args: []string{"render", "--template", "qwen2.5", "--messages", "-"}, stdin: conv, code: 0, stdout: "<|im_start|>user\nhi<|im_end|>"},
		{name: "render --format auto", args: []string{"render", "--template", "qwen2.5", "--format", "auto", "--messages", convFile}, code: 1, stderr: "render: --format auto: auto means guessing"},
		{name: "render -m is not --messages", args: []string{"render", "--template", "qwen2.5", "-m", convFile}, code: 1, stderr: "render: unknown flag --m (see toolharness render --help)"},
		{name: "render missing --messages", args: []string{"render", "--template", "qwen2.5"}, code: 1, stderr: "render: --messages is required (see toolharness render --help)"},
		{name: "render --messages missing", args: []string{"render", "--template", "qwen2.5", "--messages", missing}, code: 1, stderr: "render: " + missing + ": no such file or directory"},
		{name: "render --template nope", args: []string{"render", "--template", "nope", "--messages", convFile}, code: 1, stderr: `render: --template "nope": want one of `},
		{name: "render --now bad", args: []string{"render", "--template", "qwen2.5", "--messages", convFile, "--now", "yesterday"}, code: 1, stderr: `render: --now "yesterday" is neither RFC3339`},
		{name: "templates detect --file -", args: []string{"templates", "detect", "--file", "-"}, stdin: "{% for message in messages %}<|im_start|>{{ message.role }}\n{{ message.content }}<|im_end|>\n{% endfor %}", code: 0, stdout: "family: "},
		{name: "templates show extra", args: []string{"templates", "show", "qwen3", "x"}, code: 1, stderr: `templates show: unexpected argument "x" (see toolharness templates show --help)`},
		{name: "templates show no family", args: []string{"templates", "show"}, code: 1, stderr: "templates show: give one family name"},
		{name: "bench import-bfcl -", args: []string{"bench", "import-bfcl", "-"}, stdin: firstLine(t, "../../testdata/bench/bfcl_v1_sample.jsonl"), code: 0, stdout: `"cases"`},
		{name: "bench corpus empty", args: []string{"bench", "corpus", "--in", empty}, code: 0, stdout: "model  cases  errors  strict fail"},
		{name: "version extra", args: []string{"version", "x"}, code: 1, stderr: `version: unexpected argument "x" (see toolharness version --help)`},
		{name: "tools list extra", args: []string{"tools", "list", "x"}, code: 1, stderr: `tools list: unexpected argument "x" (see toolharness tools list --help)`},
		{name: "tools list no name", args: []string{"tools", "list", "--tools", noName}, code: 1, stderr: "tools list: " + noName + ": tool 1 has no name"},
		{name: "tools lint -", args: []string{"tools", "lint", "--tools", "-"}, stdin: toolsFixture, code: 0},

		// The README's commands, each with a bad input.
		{name: "README parse, tools missing", args: []string{"parse", "--format", "hermes", "--tools", missing}, stdin: "x", code: 1, stderr: "parse: " + missing + ": no such file or directory"},
		{name: "README render, tools missing", args: []string{"render", "--template", "qwen3", "--messages", convFile, "--tools", missing}, code: 1, stderr: "render: " + missing + ": no such file or directory"},
		{name: "README compare, repeats", args: []string{"compare", "--host", dead, "--model", "qwen2.5:7b", "--formats", "hermes,xml,json", "--repeats", "-3"}, code: 1, stderr: "compare: --repeats -3: must not be negative"},
		{name: "README bench run, endpoint twice", args: []string{"bench", "run", "--models", "qwen2.5:7b,llama3.2", "--formats", "native,hermes,xml", "--modes", "raw,chat",
			"--endpoint", dead, "--endpoint", dead, "--out", filepath.Join(dir, "twice")}, code: 1, stderr: "bench run: --endpoint " + dead + " given twice"},
		{name: "README chat, no model", args: []string{"chat", "--host", dead, "--tools", "builtin:fs"}, stdin: "list the files\n", code: 1, stderr: "chat: --model is required (or TOOLHARNESS_MODEL)"},
		{name: "README run, trace dir missing", args: append(append([]string{"run"}, model...), "--trace", filepath.Join(dir, "no", "such", "t.jsonl"), "hi"), code: 1,
			stderr: "run: --trace " + filepath.Join(dir, "no", "such", "t.jsonl") + ": no directory " + filepath.Join(dir, "no", "such")},

		// --chat-template FILE: a file that is no template is an error, never
		// rendered as literal template text.
		{name: "templates inspect .gguf that is not one", args: []string{"templates", "inspect", notGGUF}, code: 1,
			stderr: "templates inspect: " + notGGUF + " is not a GGUF file (it does not start with the GGUF magic)"},
		{name: "render --chat-template .gguf that is not one", args: []string{"render", "--chat-template", notGGUF, "--messages", convFile}, code: 1,
			stderr: "render: --chat-template: " + notGGUF + " is not a GGUF file"},
		{name: "render --chat-template messages.json", args: []string{"render", "--chat-template", convAsTemplate, "--messages", convFile}, code: 1,
			stderr: "render: --chat-template: " + convAsTemplate + " is not a tokenizer_config.json or chat_template.json (not a JSON object)"},
		{name: "parse --chat-template binary", args: []string{"parse", "--chat-template", binTemplate, raw}, code: 1,
			stderr: "parse: --chat-template: " + binTemplate + " is binary, not a chat template"},
		{name: "render --chat-template - binary", args: []string{"render", "--chat-template", "-", "--messages", convFile}, stdin: "\x00\x01\x02", code: 1,
			stderr: "render: --chat-template: standard input is binary, not a chat template"},
		{name: "templates detect a .gguf", args: []string{"templates", "detect", "--file", ggufQwen3Tokens}, code: 1, stdout: "unknown: ", stderr: "templates: template not recognised"},
		{name: "templates detect a folder", args: []string{"templates", "detect", "--file", filepath.Dir(qwenFolder)}, code: 0, stdout: "family: qwen3\n"},
		// A loaded template's note does not make a failure two lines.
		{name: "run --chat-template, dead server", args: append(append([]string{"run"}, model...), "--chat-template", glm, "hi"), code: 1, stderr: "run: " + unreachable},
		{name: "render --chat-template that raises", args: []string{"render", "--chat-template", raises, "--messages", convFile}, code: 1,
			stderr: "render: derive: the template renders no probe conversation: templates: raises: roles must alternate user/assistant"},
		{name: "bench run --chat-template, dead server", args: []string{"bench", "run", "--host", dead, "--models", "x", "--chat-template", glm, "--out", filepath.Join(dir, "ct4")}, code: 1,
			stderr: "bench run: " + unreachable + "; nothing measured"},
		{name: "templates verify --chat-template, dead server", args: []string{"templates", "verify", "--host", dead, "--chat-template", glm, "--messages", convFile}, code: 1,
			stderr: "templates verify: cannot reach llama.cpp at " + dead + ": connection refused"},
		{name: "render --mode chat with an own template", args: []string{"render", "--mode", "chat", "--chat-template", glm, "--messages", convFile, "--tools", tools}, code: 0,
			stdout: `"role":"system"`},
		{name: "parse --chat-template that writes no calls", args: []string{"parse", "--chat-template", noCalls, raw}, code: 0,
			stderr: catalogNote("hermes"), stdout: `"name":"read_file"`},
		// A model's own template writes its calls in its own syntax.
		{name: "templates show own template derives calls", args: []string{"templates", "show", "--chat-template", glm}, code: 0, stdout: "native format: \"glm45\"\ndefault format: glm45\n"},

		// Catalog errors name the file's fields, not Go types.
		{name: "tools list name is a number", args: []string{"tools", "list", "--tools", nameNumber}, code: 1,
			stderr: "tools list: " + nameNumber + `: tool 1: "name" is a number, want a string`},
		{name: "tools list tools is a number", args: []string{"tools", "list", "--tools", toolsNumber}, code: 1,
			stderr: "tools list: " + toolsNumber + `: tools: "tools" is a number, want a list`},
		{name: "tools list tool is a number", args: []string{"tools", "list", "--tools", toolNumber}, code: 1,
			stderr: "tools list: " + toolNumber + `: tool 1: a JSON number where an object was expected`},
		{name: "tools lint finds every error", args: []string{"tools", "lint", "--tools", nameNumber}, code: 1, stdout: "tool 1", stderr: "tools lint: 1 error(s)"},

		// bench run and compare load --chat-template once, before any case.
		{name: "bench run --chat-template not a GGUF", args: []string{"bench", "run", "--host", dead, "--models", "x", "--chat-template", notGGUF, "--out", filepath.Join(dir, "ct1")}, code: 1,
			stderr: "bench run: --chat-template: " + notGGUF + " is not a GGUF file"},
		{name: "bench run --chat-template -", args: []string{"bench", "run", "--host", dead, "--models", "x", "--chat-template", "-", "--out", filepath.Join(dir, "ct2")}, code: 1,
			stderr: "bench run: --chat-template -: this command cannot read the template from standard input; give a file"},
		{name: "compare --chat-template not a GGUF", args: []string{"compare", "--host", dead, "--model", "x", "--chat-template", notGGUF, "--out", filepath.Join(dir, "ct3")}, code: 1,
			stderr: "compare: --chat-template: " + notGGUF + " is not a GGUF file"},

		// templates verify: one line for a dead server; -m is --model elsewhere.
		{name: "templates verify dead", args: []string{"templates", "verify", "--host", dead, "--template", "qwen2.5", "--messages", convFile}, code: 1,
			stderr: "templates verify: cannot reach llama.cpp at " + dead + ": connection refused"},
		{name: "templates verify dead, own template", args: []string{"templates", "verify", "--host", dead, "--messages", convFile}, code: 1,
			stderr: "templates verify: cannot reach llama.cpp at " + dead + ": connection refused"},
		{name: "templates verify -m is not --messages", args: []string{"templates", "verify", "--host", dead, "--template", "qwen2.5", "-m", convFile}, code: 1,
			stderr: "templates verify: unknown flag --m (see toolharness templates verify --help)"},
		{name: "flag after the arguments", args: []string{"parse", raw, "--format", "hermes"}, code: 1,
			stderr: `parse: unexpected argument "--format": flags go before the arguments (see toolharness parse --help)`},
		{name: "flag after the template file", args: []string{"templates", "inspect", glm, "--json"}, code: 1,
			stderr: `templates inspect: unexpected argument "--json": flags go before the arguments`},
		{name: "flag after the family", args: []string{"templates", "show", "qwen3", "--json"}, code: 1,
			stderr: `templates show: unexpected argument "--json": flags go before the arguments`},

		// Usage errors: one line, a hint, no help dump.
		{name: "unknown flag", args: []string{"run", "--hostx", dead}, code: 1, stderr: "run: unknown flag --hostx (see toolharness run --help)"},
		{name: "unknown command", args: []string{"bogus"}, code: 1, stderr: `unknown command "bogus" (see toolharness --help)`},
		{name: "unknown subcommand", args: []string{"bench", "bogus"}, code: 1, stderr: `bench: unknown command "bogus" (want run, corpus, report, import-bfcl) (see toolharness bench --help)`},
		{name: "missing required", args: []string{"tools", "lint"}, code: 1, stderr: "tools lint: --tools is required (see toolharness tools lint --help)"},
		{name: "bench report no dir", args: []string{"bench", "report"}, code: 1, stderr: "bench report: give exactly one results directory (see toolharness bench report --help)"},

		// Help says what the commands accept.
		{name: "compare help lists openai", args: []string{"compare", "--help"}, code: 0, stdout: "openai"},
		{name: "bench run help lists openai", args: []string{"bench", "run", "--help"}, code: 0, stdout: "openai"},
		{name: "run help has --json", args: []string{"run", "--help"}, code: 0, stdout: "--json"},
		{name: "run help has --host", args: []string{"run", "--help"}, code: 0, stdout: "--host URL"},
		{name: "tools list help has --mcp-timeout", args: []string{"tools", "list", "--help"}, code: 0, stdout: "--mcp-timeout"},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			stdout, stderr, code := runCLI(t, tt.stdin, tt.args...)
			if code != tt.code {
				t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", code, tt.code, stdout, stderr)
			}
			if tt.code == 0 {
				if !strings.Contains(stdout, tt.stdout) || !strings.Contains(stderr, tt.stderr) {
					t.Errorf("stdout %q does not contain %q, or stderr %q does not contain %q", stdout, tt.stdout, stderr, tt.stderr)
				}
				return
			}
			if tt.stdout == "" && stdout != "" {
				t.Errorf("a failure wrote on stdout:\n%s", stdout)
			}
			lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
			last := lines[len(lines)-1]
			if tt.stdout == "" && len(lines) != 1 {
				t.Errorf("stderr has %d lines, want one:\n%s", len(lines), stderr)
			}
			if !strings.HasPrefix(last, "toolharness: "+tt.stderr) {
				t.Errorf("stderr:\n%s\nwant it to start with:\ntoolharness: %s", last, tt.stderr)
			}
			if strings.Contains(stderr, "Go struct") || strings.Contains(stderr, "main.") || strings.Contains(stderr, "chat: tools[") || strings.Contains(stderr, "Incorrect Usage") {
				t.Errorf("Go internals or a help dump in the message: %s", stderr)
			}
		})
	}
}

func readTestFile(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func firstLine(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	line, _, _ := strings.Cut(string(data), "\n")
	return line + "\n"
}

// TestOllamaHostEnv checks that OLLAMA_HOST is the host when no --host is
// given, and that --host wins over it.
func TestOllamaHostEnv(t *testing.T) {
	dead := deadHost(t)
	t.Setenv("OLLAMA_HOST", dead)
	_, stderr, code := runCLI(t, "", "run", "--model", "m", "hi")
	if want := "toolharness: run: cannot reach Ollama at " + dead + ": connection refused\n"; code != 1 || stderr != want {
		t.Errorf("OLLAMA_HOST: exit %d, stderr %q, want %q", code, stderr, want)
	}
	other := deadHost(t)
	_, stderr, _ = runCLI(t, "", "run", "--host", other, "--model", "m", "hi")
	if !strings.Contains(stderr, other) {
		t.Errorf("--host did not win over OLLAMA_HOST: %q", stderr)
	}
}

// TestMCPInitTimeout: a server that never answers initialize is an error
// naming it, not a hang.
func TestMCPInitTimeout(t *testing.T) {
	stdout, stderr, code := runCLI(t, "", "tools", "list", "--mcp", "sleeper=sleep 1000", "--mcp-timeout", "300ms")
	want := `toolharness: tools list: mcp: server "sleeper" did not answer initialize within 300ms`
	if code != 1 || stdout != "" || !strings.HasPrefix(stderr, want) || strings.Count(stderr, "\n") != 1 {
		t.Errorf("exit %d, stdout %q, stderr %q, want %q…", code, stdout, stderr, want)
	}
	_, stderr, code = runCLI(t, "", "tools", "list", "--mcp", "x=sleep 1", "--mcp-timeout", "0s")
	if code != 1 || !strings.Contains(stderr, "--mcp-timeout 0s: must be positive") {
		t.Errorf("--mcp-timeout 0: exit %d, %q", code, stderr)
	}
}

func TestReadBuildFacts(t *testing.T) {
	tests := []struct {
		name string
		info *debug.BuildInfo
		ok   bool
		want buildFacts
	}{
		{"no build info", nil, false, buildFacts{Version: version, Go: unknown, Revision: unknown, Time: unknown}},
		{"built without vcs", &debug.BuildInfo{GoVersion: "go1.27.3"}, true,
			buildFacts{Version: version, Go: "go1.27.3", Revision: unknown, Time: unknown}},
		{"built in a checkout", &debug.BuildInfo{GoVersion: "go1.27.3", Settings: []debug.BuildSetting{
			{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: "cd87733f"}, {Key: "vcs.time", Value: "2026-12-01T20:00:00Z"}, {Key: "vcs.modified", Value: "true"},
		}}, true, buildFacts{Version: version, Go: "go1.27.3", Revision: "cd87733f", Time: "2026-12-01T20:00:00Z", Modified: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, readBuildFacts(tt.info, tt.ok)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	// The test binary itself: whatever its build recorded, never "".
	stdout, _, code := runCLI(t, "", "version", "--json")
	if code != 0 || !strings.Contains(stdout, `"revision":"`) || strings.Contains(stdout, `"revision":""`) {
		t.Errorf("version --json: exit %d, %s", code, stdout)
	}
}

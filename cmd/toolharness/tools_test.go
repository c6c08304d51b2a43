package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/urfave/cli/v2"

	"github.com/toolharness/toolharness/registry/mcp/mcptest"
)

// TestMain lets the test binary double as a real MCP server (mcptest) for
// the --mcp tests: started again with mcptest.EnvServe=1, it serves over
// stdio instead of running tests.
func TestMain(m *testing.M) {
	if os.Getenv(envLingerMCP) == "1" && os.Getenv(mcptest.EnvServe) == "1" {
		serveLingering()
	}
	mcptest.ServeIfAsked()
	os.Exit(m.Run())
}

// envLingerMCP, set to "1" beside mcptest.EnvServe, makes the served MCP
// server slow to stop, as a real one can be: it ignores SIGTERM and stays
// 12s after its input ends, so closing it takes the MCP SDK's grace
// periods (about 10s): a cleanup that a second Ctrl-C must not wait for.
const envLingerMCP = "TOOLHARNESS_TEST_MCP_LINGER"

func serveLingering() {
	signal.Ignore(syscall.SIGTERM)
	mcptest.NewServer().Run(context.Background(), &sdk.StdioTransport{})
	time.Sleep(12 * time.Second)
	os.Exit(0)
}

const toolsFixture = `[
{"type":"function","function":{"name":"get_weather","description":"Current weather for a city.","parameters":{"type":"object","properties":{"city":{"type":"string","description":"city name"},"days":{"type":"integer","minimum":1,"description":"forecast days"}},"required":["city"],"additionalProperties":false}}},
{"name":"set_alarm","description":"Set an alarm.","input_schema":{"type":"object","properties":{"at":{"type":"string","description":"time, HH:MM"}},"required":["at"]}}
]`

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func runCLI(t *testing.T, stdin string, args ...string) (string, string, int) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(append([]string{"toolharness"}, args...), strings.NewReader(stdin), &out, &errOut)
	return out.String(), errOut.String(), code
}

func TestToolsCheck(t *testing.T) {
	tools := writeFile(t, "tools.json", toolsFixture)
	in := strings.Join([]string{
		`{"name":"get_weather","arguments":{"city":"Paris","days":2}}`,
		`{"name":"get_weather","arguments":"{\"days\":\"3\",\"city\":\"Oslo\"}"}`,
		`{"name":"get_weather","arguments":{"days":0}}`,
		`{"name":"get_wether","arguments":{}}`,
		`not json`,
		``,
	}, "\n")
	out, stderr, code := runCLI(t, in, "tools", "check", "--tools", tools, "--format", "xml")
	if code != 1 || stderr != "toolharness: tools check: 3 of 5 call(s) invalid\n" {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	want := `{"ok":true,"name":"get_weather","arguments":{"city":"Paris","days":2}}
{"ok":true,"name":"get_weather","arguments":{"days":3,"city":"Oslo"},"coercions":[{"path":"days","from":"\"3\"","to":"3"}]}
{"ok":false,"name":"get_weather","kind":"invalid_arguments","error":"Invalid arguments for get_weather:\n- city: missing (required, expected string)\n- days: expected an integer >= 1, given 0\nA valid call looks like:\n{\"name\":\"get_weather\",\"arguments\":{\"city\":\"<city>\",\"days\":1}}"}
{"ok":false,"name":"get_wether","kind":"unknown_tool","error":"There is no tool named \"get_wether\". Did you mean: get_weather?\nA valid call looks like:\n{\"name\":\"get_weather\",\"arguments\":{\"city\":\"<city>\"}}"}
{"ok":false,"kind":"input","error":"not a JSON object: invalid character 'o' in literal null (expecting 'u')"}
`
	if out != want {
		t.Errorf("got\n%s\nwant\n%s", out, want)
	}
	// Without a text format, "3" stays a string and is refused.
	out, _, _ = runCLI(t, `{"name":"get_weather","arguments":{"city":"Oslo","days":"3"}}`, "tools", "check", "--tools", tools, "--format", "hermes")
	if !strings.HasPrefix(out, `{"ok":false,"name":"get_weather","kind":"invalid_arguments"`) {
		t.Errorf("hermes coerced: %s", out)
	}
}

// TestToolsCheckReadsParse: parse's events go straight into tools check:
// text and call_start events are skipped, each call is checked and its
// line carries its name and id, the parser's errors are reported, and an
// invalid call makes the exit status 1.
func TestToolsCheckReadsParse(t *testing.T) {
	raw := `Let me look. <tool_call>{"name":"read_file","arguments":{"path":5}}</tool_call>` +
		`<tool_call>{"name":"read_file","arguments":{"path":"a.txt"}}</tool_call><tool_call>{"name":`
	events, stderr, code := runCLI(t, raw, "parse", "--format", "hermes", "--tools", "builtin:fs")
	if code != 0 {
		t.Fatalf("parse: exit %d: %s", code, stderr)
	}
	out, stderr, code := runCLI(t, events, "tools", "check", "--tools", "builtin:fs")
	if code != 1 || stderr != "toolharness: tools check: 2 of 3 call(s) invalid\n" {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 {
		t.Fatalf("%d lines, want one per call and one for the unfinished call:\n%s", len(lines), out)
	}
	for i, want := range []string{
		`{"ok":false,"name":"read_file","id":"call_0","kind":"invalid_arguments",`,
		`{"ok":true,"name":"read_file","id":"call_1","arguments":{"path":"a.txt"}}`,
		`{"ok":false,"kind":"truncated",`,
	} {
		if !strings.HasPrefix(lines[i], want) {
			t.Errorf("line %d: %s\nwant it to start with %s", i+1, lines[i], want)
		}
	}
	// Every call valid: exit 0.
	events, _, _ = runCLI(t, `<tool_call>{"name":"list_dir","arguments":{"path":"."}}</tool_call>`, "parse", "--format", "hermes")
	if out, stderr, code := runCLI(t, events, "tools", "check", "--tools", "builtin:fs"); code != 0 || strings.Count(out, "\n") != 1 {
		t.Errorf("exit %d: %s%s", code, out, stderr)
	}
}

// TestToolsFlagEverywhere: --tools builtin:GROUP works on render as on
// every command, and --tools reads back what tools list --json writes.
func TestToolsFlagEverywhere(t *testing.T) {
	conv := writeFile(t, "conv.json", `[{"role":"user","content":"hi"}]`)
	out, stderr, code := runCLI(t, "", "render", "--template", "qwen2.5", "--messages", conv, "--tools", "builtin:fs+bash")
	if code != 0 || !strings.Contains(out, `"name": "read_file"`) && !strings.Contains(out, `"name":"read_file"`) {
		t.Fatalf("render --tools builtin:fs: exit %d\n%s%s", code, out, stderr)
	}
	listed, _, code := runCLI(t, "", "tools", "list", "--tools", "builtin:fs+bash", "--json")
	if code != 0 {
		t.Fatal("tools list failed")
	}
	file := writeFile(t, "listed.jsonl", listed)
	relisted, stderr, code := runCLI(t, "", "tools", "list", "--tools", file, "--json")
	if code != 0 {
		t.Fatalf("tools list --tools FILE of tools list --json: exit %d: %s", code, stderr)
	}
	// Read from a file, the tools are declared only: the same catalog
	// but for side effects, which a file does not say to the registry.
	strip := func(s string) string {
		return strings.NewReplacer(`"side_effects":true`, `"side_effects":false`).Replace(s)
	}
	if strip(relisted) != strip(listed) {
		t.Errorf("round trip changed the catalog:\n%s\nwas\n%s", relisted, listed)
	}
	fromFile, _, code := runCLI(t, "", "render", "--template", "qwen2.5", "--messages", conv, "--tools", file)
	if code != 0 || fromFile != out {
		t.Errorf("render with the listed catalog differs from builtin:fs (exit %d)", code)
	}
}

func TestToolsLint(t *testing.T) {
	bad := writeFile(t, "bad.json", `[
{"name":"get_weather","description":"Weather","parameters":{"type":"object","properties":{"city":{"type":"string"},"units":{"type":"string","enum":["c","f"],"description":"units"}}}},
{"name":"GetWeather","description":"Weather for a city.","parameters":{"type":"object","properties":{"x":{"type":"strng","description":"x"}}}}
]`)
	out, stderr, code := runCLI(t, "", "tools", "lint", "--tools", bad)
	want := `error: GetWeather: name differs from "get_weather" only in case or separators; a model will confuse them
error: GetWeather: schema does not compile at /properties/x/type: value must be one of 'array', 'boolean', 'integer', 'null', 'number', 'object', 'string'
warning: get_weather: one-word description "Weather": say what the tool does and when to use it
warning: get_weather.city: parameter has no description
warning: get_weather.units: enum values are not explained in the description
`
	if out != want || code != 1 || !strings.Contains(stderr, "2 error(s)") {
		t.Errorf("exit %d, stderr %q, got\n%s", code, stderr, out)
	}
	good := writeFile(t, "good.json", toolsFixture)
	if out, _, code := runCLI(t, "", "tools", "lint", "--tools", good); code != 0 || out != "" {
		t.Errorf("clean catalog: exit %d: %s", code, out)
	}
	// --json: the same findings, one object a line, same exit status.
	out, _, code = runCLI(t, "", "tools", "lint", "--tools", bad, "--json")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	wantFirst := `{"severity":"error","tool":"GetWeather","message":"name differs from \"get_weather\" only in case or separators; a model will confuse them"}`
	if code != 1 || len(lines) != 5 || lines[0] != wantFirst || !strings.Contains(lines[3], `"param":"city"`) {
		t.Errorf("--json: exit %d, got\n%s", code, out)
	}
}

// TestToolsLintReportsEverything: a catalog file with a tool that cannot
// be read and a name given twice gets every finding, not the loader's
// first error.
func TestToolsLintReportsEverything(t *testing.T) {
	for _, tt := range []struct {
		name, catalog string
		code          int
		want          []string
	}{
		{name: "nameless and duplicate in one file", code: 1,
			catalog: `[{"name":"a","description":"Read a file.","parameters":{"type":"object","properties":{}}},` +
				`{"description":"no name"},` +
				`{"name":"a","description":"Read a file.","parameters":{"type":"object","properties":{"p":{"type":"string","description":"p"}},"required":["q"]}}]`,
			want: []string{"error: (catalog): CATALOG: tool 2 has no name\n", "error: a: defined 2 times: the model cannot tell them apart\n",
				`error: a: required names "q", which is not a property`}},
		{name: "object with tools and a name that is a number", code: 1,
			catalog: `{"tools":[{"name":"b","description":"Say b.","parameters":{"type":"object","properties":{}}},{"name":7}]}`,
			want:    []string{"error: (catalog): CATALOG: tool 2: \"name\" is a number, want a string\n"}},
		{name: "no tools", code: 0, catalog: `[]`, want: []string{"warning: (catalog): the catalog has no tools\n"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := writeFile(t, "catalog.json", tt.catalog)
			out, stderr, code := runCLI(t, "", "tools", "lint", "--tools", path)
			if code != tt.code {
				t.Fatalf("exit %d, want %d; stdout:\n%s\nstderr: %s", code, tt.code, out, stderr)
			}
			for _, w := range tt.want {
				if !strings.Contains(out, strings.ReplaceAll(w, "CATALOG", path)) {
					t.Errorf("findings lack %q:\n%s\nstderr: %s", w, out, stderr)
				}
			}
		})
	}
}

func TestToolsList(t *testing.T) {
	tools := writeFile(t, "tools.json", toolsFixture)
	out, stderr, code := runCLI(t, "", "tools", "list", "--tools", tools, "--builtin", "--workspace", t.TempDir(), "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var names []string
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var v struct {
			Name        string `json:"name"`
			SideEffects bool   `json:"side_effects"`
		}
		if err := json.Unmarshal([]byte(line), &v); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		names = append(names, v.Name)
		if v.Name == "write_file" && !v.SideEffects {
			t.Error("write_file listed as read-only")
		}
	}
	if got := strings.Join(names, ","); got != "get_weather,set_alarm,read_file,list_dir,glob,grep,write_file,edit_file" {
		t.Errorf("names %s", got)
	}
	out, _, _ = runCLI(t, "", "tools", "list", "--tools", tools)
	want := "get_weather (read-only)\n    Current weather for a city.\n    - city: string (required) — city name\n    - days: integer — forecast days\n"
	if !strings.HasPrefix(out, want) {
		t.Errorf("text list:\n%s", out)
	}
}

// TestToolsListMCP loads the catalog from a real MCP server started as an
// --mcp command (this test binary, serving mcptest's server over stdio).
func TestToolsListMCP(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if strings.ContainsAny(exe, " \t") {
		t.Fatalf("test binary path %q has spaces; --mcp splits the command at spaces: set GOTMPDIR to a path without spaces", exe)
	}
	t.Setenv(mcptest.EnvServe, "1") // inherited by the server process
	spec := "calc=" + exe + " -test.run=^$"
	out, stderr, code := runCLI(t, "", "tools", "list", "--mcp", spec, "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	type line struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Parameters  json.RawMessage `json:"parameters"`
		SideEffects bool            `json:"side_effects"`
	}
	var got []line
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var v line
		if err := json.Unmarshal([]byte(l), &v); err != nil {
			t.Fatalf("%q: %v", l, err)
		}
		got = append(got, v)
	}
	if len(got) != 2 || got[0].Name != "mcp__calc__add" || got[1].Name != "mcp__calc__shout" {
		t.Fatalf("tools %+v", got)
	}
	if got[0].SideEffects || !got[1].SideEffects {
		t.Errorf("side effects: add %v (read-only hint), shout %v", got[0].SideEffects, got[1].SideEffects)
	}
	if got[0].Description != "Add two integers." || !strings.Contains(string(got[0].Parameters), `"first addend"`) {
		t.Errorf("add as listed: %+v", got[0])
	}
	// The text listing shows the schema's parameters.
	out, stderr, code = runCLI(t, "", "tools", "list", "--mcp", spec)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(out, "mcp__calc__add (read-only)\n    Add two integers.\n    - a: integer (required) — first addend\n") {
		t.Errorf("text list:\n%s", out)
	}
	// A server command that does not exist is a clear error, not a hang.
	_, stderr, code = runCLI(t, "", "tools", "list", "--mcp", "nope="+filepath.Join(t.TempDir(), "no-such-server"))
	if code == 0 || !strings.Contains(stderr, "mcp") {
		t.Errorf("missing server: exit %d, stderr %q", code, stderr)
	}
}

// TestToolsHelpExamples: every command of the tools, templates, parse,
// render, bench and compare families documents itself with an example.
func TestToolsHelpExamples(t *testing.T) {
	for _, cmd := range [][]string{
		{"tools"}, {"tools", "list"}, {"tools", "lint"}, {"tools", "check"},
		{"templates"}, {"templates", "list"}, {"templates", "show"}, {"templates", "detect"},
		{"parse"}, {"render"}, {"compare"},
		{"bench"}, {"bench", "run"}, {"bench", "corpus"}, {"bench", "report"}, {"bench", "import-bfcl"},
	} {
		out, stderr, code := runCLI(t, "", append(cmd, "--help")...)
		if code != 0 {
			t.Errorf("%v --help: exit %d: %s", cmd, code, stderr)
			continue
		}
		if !strings.Contains(out, "Example") || !strings.Contains(out, "toolharness "+strings.Join(cmd, " ")) {
			t.Errorf("%v --help has no example:\n%s", cmd, out)
		}
	}
}

// TestToolsBuiltinOnEveryCommand: every command that has --tools takes
// builtin:fs (a command added with --tools must be added here).
func TestToolsBuiltinOnEveryCommand(t *testing.T) {
	srv := newScriptedOllama(t, "Hi.", "Hi.")
	conv := writeFile(t, "conv.json", `[{"role":"user","content":"hi"}]`)
	ws := t.TempDir()
	dead := newFailingOllama(t, 500, "down")
	cases := map[string]struct {
		stdin string
		args  []string
		ok    bool // exit 0; else the failure is not about --tools
	}{
		"run":              {"", []string{"--host", srv.URL, "--model", "m", "--template", "qwen2.5", "--workspace", ws, "hi"}, true},
		"chat":             {"", []string{"--host", srv.URL, "--model", "m", "--template", "qwen2.5", "--workspace", ws}, true},
		"render":           {"", []string{"--template", "qwen2.5", "--messages", conv}, true},
		"parse":            {`<tool_call>{"name":"list_dir","arguments":{"path":"."}}</tool_call>`, []string{"--format", "hermes"}, true},
		"templates verify": {"", []string{"--host", dead.URL, "--template", "qwen2.5", "--messages", conv}, false},
		"tools list":       {"", nil, true},
		"tools check":      {`{"name":"list_dir","arguments":{"path":"."}}`, nil, true},
		"tools lint":       {"", nil, true},
		"bench corpus":     {"", []string{"--in", shippedCorpus}, true},
	}
	var walk func(prefix string, cmds []*cli.Command)
	seen := 0
	walk = func(prefix string, cmds []*cli.Command) {
		for _, cmd := range cmds {
			path := strings.TrimSpace(prefix + " " + cmd.Name)
			walk(path, cmd.Subcommands)
			if !slices.ContainsFunc(cmd.Flags, func(f cli.Flag) bool { return slices.Contains(f.Names(), "tools") }) {
				continue
			}
			seen++
			tc, ok := cases[path]
			if !ok {
				t.Errorf("%s has --tools but no case here", path)
				continue
			}
			args := append(append(strings.Fields(path), "--tools", "builtin:fs"), tc.args...)
			_, stderr, code := runCLI(t, tc.stdin, args...)
			if strings.Contains(stderr, "builtin") || tc.ok && code != 0 {
				t.Errorf("%s --tools builtin:fs: exit %d: %s", path, code, stderr)
			}
		}
	}
	walk("", newApp(nil, io.Discard, io.Discard).Commands)
	if seen != len(cases) {
		t.Errorf("%d commands have --tools, %d cases", seen, len(cases))
	}
}

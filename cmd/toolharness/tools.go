package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/toolharness/toolharness/chat"
	"github.com/toolharness/toolharness/registry"
	"github.com/toolharness/toolharness/registry/builtin"
	"github.com/toolharness/toolharness/render"
)

func toolsCommand() *cli.Command {
	return &cli.Command{
		Name:  "tools",
		Usage: "list, lint and check tool catalogs",
		UsageText: `toolharness tools list|lint|check [options]

Examples:
   toolharness tools list --builtin
   toolharness tools list --mcp "fs=mcp-server-filesystem /tmp" --json
   toolharness tools lint --tools tools.json
   echo '{"name":"read_file","arguments":{"path":"a.txt"}}' | toolharness tools check --tools builtin:fs`,
		Subcommands: []*cli.Command{
			toolsListCommand(),
			toolsLintCommand(),
			toolsCheckCommand(),
		},
	}
}

func toolsListCommand() *cli.Command {
	return &cli.Command{
		Name:  "list",
		Usage: "print the tool catalog",
		UsageText: `toolharness tools list [--tools FILE|builtin:fs]... [--builtin] [--mcp CMD|URL]... [--json]

Examples:
   toolharness tools list --builtin
   toolharness tools list --tools tools.json --json
   toolharness tools list --mcp "docs=./my-mcp-server --stdio"`,
		Flags: append(toolFlags(),
			&cli.BoolFlag{Name: "builtin", Usage: "include the built-in file tools (builtin:fs)"},
			&cli.BoolFlag{Name: "json", Usage: "one JSON object per tool"},
		),
		Action: func(c *cli.Context) error {
			src, err := readToolSet(c)
			if err != nil {
				return err
			}
			if c.Bool("builtin") {
				src.groups = append(src.groups, builtin.GroupFS)
			}
			r, closeAll, err := loadRegistry(c.Context, src, registry.Options{})
			defer closeAll()
			if err != nil {
				return err
			}
			w := c.App.Writer
			for _, t := range r.Tools() {
				if c.Bool("json") {
					line := struct {
						Name        string          `json:"name"`
						Description string          `json:"description"`
						Parameters  json.RawMessage `json:"parameters"`
						SideEffects bool            `json:"side_effects"`
						Deferred    bool            `json:"deferred"`
					}{t.Name, t.Description, t.Parameters, r.SideEffects(t.Name), r.IsDeferred(t.Name)}
					if err := writeJSONLine(w, line); err != nil {
						return err
					}
					continue
				}
				fmt.Fprintf(w, "%s\n    %s\n", describeTool(r, t), oneLine(t.Description))
				for _, p := range paramLines(t.Parameters) {
					fmt.Fprintf(w, "    - %s\n", p)
				}
			}
			return nil
		},
	}
}

func toolsLintCommand() *cli.Command {
	return &cli.Command{
		Name:  "lint",
		Usage: "review a catalog the way a model reads it (non-zero exit on errors)",
		UsageText: `toolharness tools lint --tools FILE[,FILE]... [--json]

One line per finding ("error: tool.param: message"); exit status 1 when any is an error.

Examples:
   toolharness tools lint --tools tools.json
   toolharness tools lint --tools a.json,b.yaml --json
   toolharness tools lint --tools builtin:fs+bash`,
		Flags: []cli.Flag{
			&cli.StringSliceFlag{Name: "tools", Usage: "tool `FILE`(s) to review (- reads stdin), or builtin:fs, builtin:bash", Required: true},
			&cli.IntFlag{Name: "context", Value: registry.DefaultLintContext, Usage: "the context window, in tokens, the catalog must leave room in (warns above a quarter of it)"},
			&cli.BoolFlag{Name: "json", Usage: "one JSON object per finding: {\"severity\",\"tool\",\"param\",\"message\"}"},
		},
		Action: func(c *cli.Context) error {
			var tools []chat.Tool
			var findings []registry.Finding
			for _, f := range splitList(c.StringSlice("tools")) {
				if isBuiltinItem(f) {
					groups, err := builtinGroups(c, f)
					if err != nil {
						return err
					}
					ts, err := toolSet{groups: groups}.localTools()
					if err != nil {
						return err
					}
					tools = append(tools, ts...)
					continue
				}
				ts, bad, err := readLintTools(c, f)
				if err != nil {
					return err
				}
				tools, findings = append(tools, ts...), append(findings, bad...)
			}
			errs := 0
			findings = append(findings, registry.Lint(tools, registry.LintOptions{ContextTokens: c.Int("context")})...)
			if len(tools) == 0 && len(findings) == 0 {
				findings = append(findings, registry.Finding{Severity: registry.SeverityWarning, Message: "the catalog has no tools"})
			}
			for _, f := range findings {
				if c.Bool("json") {
					if err := writeJSONLine(c.App.Writer, f); err != nil {
						return err
					}
				} else {
					fmt.Fprintln(c.App.Writer, f)
				}
				if f.Severity == registry.SeverityError {
					errs++
				}
			}
			if errs > 0 {
				return cli.Exit(fmt.Sprintf("tools lint: %d error(s)", errs), 1)
			}
			return nil
		},
	}
}

func toolsCheckCommand() *cli.Command {
	return &cli.Command{
		Name:  "check",
		Usage: "validate calls read as JSON lines on stdin: {\"name\":…,\"arguments\":…}",
		UsageText: `toolharness tools check --tools FILE|builtin:fs [--mcp CMD|URL]... [--format F] < calls.jsonl

Each input line is a call ({"name":…,"arguments":…}) or an event of toolharness parse, whose text
and call_start events are skipped. Each output line is {"ok":true,"name":…,"id":…,"arguments":{…}}
or {"ok":false,"name":…,"id":…,"kind":…,"error":"<model-facing message>"}; the exit status is 1
when any call is invalid.

Examples:
   echo '{"name":"read_file","arguments":"{\"path\": 5}"}' | toolharness tools check --tools builtin:fs --format xml
   toolharness parse --format hermes --tools builtin:fs raw.txt | toolharness tools check --tools builtin:fs`,
		Flags: append(toolFlags(),
			&cli.StringFlag{Name: "format", Usage: "the session's tool-call format (" + strings.Join(render.Formats(), ", ") + "); xml, qwen3-coder and tags enable lossless coercions (\"5\" for an integer)"},
		),
		Action: func(c *cli.Context) error {
			if err := promptFormat(c, "format", c.String("format")); err != nil {
				return err
			}
			in, _, err := inputArg(c, "") // the calls: claims stdin before --tools - could
			if err != nil {
				return err
			}
			src, err := readToolSet(c)
			if err != nil {
				return err
			}
			if len(src.groups) == 0 && len(src.files) == 0 && len(src.mcp) == 0 {
				return usageError(c, "give --tools (a tool file or builtin:fs) or --mcp")
			}
			r, closeAll, err := loadRegistry(c.Context, src, registry.Options{Coerce: coercingFormat(c.String("format"))})
			defer closeAll()
			if err != nil {
				return err
			}
			return checkCalls(r, in, c.App.Writer)
		},
	}
}

type checkLine struct {
	OK        bool                `json:"ok"`
	Name      string              `json:"name,omitempty"`
	ID        string              `json:"id,omitempty"`
	Arguments json.RawMessage     `json:"arguments,omitempty"`
	Coercions []registry.Coercion `json:"coercions,omitempty"`
	Kind      string              `json:"kind,omitempty"`
	Error     string              `json:"error,omitempty"`
}

// checkCalls validates one call per input line, a call ({"name",
// "arguments"}) or an event of toolharness parse: its calls are checked,
// its errors reported, its text and call_start events skipped. A bad line
// yields an "input" error line, never an aborted run; any call that is
// not valid makes the exit status 1.
func checkCalls(r *registry.Registry, in io.Reader, out io.Writer) error {
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	checked, invalid := 0, 0
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		res, skip := checkOne(r, line)
		if skip {
			continue
		}
		checked++
		if !res.OK {
			invalid++
		}
		if err := writeJSONLine(out, res); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("tools check: reading stdin: %w", err)
	}
	if invalid > 0 {
		return cli.Exit(fmt.Sprintf("tools check: %d of %d call(s) invalid", invalid, checked), exitHarnessError)
	}
	return nil
}

// checkOne checks one input line; skip is true for parse events that are
// no call (text, call_start).
func checkOne(r *registry.Registry, line []byte) (res checkLine, skip bool) {
	in, err := decodeCheckInput(line)
	switch {
	case err != nil:
		return checkLine{Kind: "input", Error: err.Error()}, false
	case in.Type != "" && in.Type != "call" && in.Type != "error":
		return checkLine{}, true
	case in.Type == "error":
		// The parser found a call it could not read.
		return checkLine{Kind: in.Kind, Error: in.Message}, false
	case in.Error != nil:
		// The parser already judged the call (an unknown tool, arguments
		// that are no JSON).
		return checkLine{Name: in.Name, ID: in.ID, Kind: in.Error.Kind, Error: in.Error.Message}, false
	}
	res = checkLine{Name: in.Name, ID: in.ID}
	v, err := r.Validate(in.call)
	var e *registry.Error
	switch {
	case errors.As(err, &e):
		res.Kind, res.Error = string(e.Kind), e.ModelMessage()
	case err != nil:
		res.Kind, res.Error = "internal", err.Error()
	default:
		res.OK, res.Arguments, res.Coercions = true, v.Call.Arguments, v.Coercions
	}
	return res, false
}

// checkInput is one line of tools check: a call, or a parse event.
type checkInput struct {
	Type      string          `json:"type"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
	// Kind and Message are an error event's; Error a call event's.
	Kind    string `json:"kind"`
	Message string `json:"message"`
	Error   *struct {
		Kind    string `json:"kind"`
		Message string `json:"message"`
	} `json:"error"`
	call chat.ToolCall
}

func decodeCheckInput(line []byte) (checkInput, error) {
	var in checkInput
	if err := json.Unmarshal(line, &in); err != nil {
		return in, fmt.Errorf("not a JSON object: %v", err)
	}
	args := bytes.TrimSpace(in.Arguments)
	if len(args) > 0 && args[0] == '"' {
		var s string
		if err := json.Unmarshal(args, &s); err != nil {
			return in, fmt.Errorf("arguments: %v", err)
		}
		args = []byte(s)
	}
	in.call = chat.ToolCall{ID: in.ID, Name: in.Name, Arguments: args}
	return in, nil
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if s == "" {
		return "(no description)"
	}
	return s
}

// paramLines summarises the top-level parameters: "path: string
// (required) — file path…", in schema order.
func paramLines(schema json.RawMessage) []string {
	v, err := chat.DecodeOrdered(schema)
	if err != nil {
		return nil
	}
	o, ok := v.(*chat.Object)
	if !ok {
		return nil
	}
	required := map[string]bool{}
	if rq, ok := o.Get("required"); ok {
		if list, ok := rq.([]any); ok {
			for _, x := range list {
				if s, ok := x.(string); ok {
					required[s] = true
				}
			}
		}
	}
	props, _ := o.Get("properties")
	po, ok := props.(*chat.Object)
	if !ok {
		return nil
	}
	var out []string
	for _, m := range po.Members {
		p, _ := m.Value.(*chat.Object)
		typ := "any"
		desc := ""
		if p != nil {
			if t, ok := p.Get("type"); ok {
				if b, err := chat.EncodeOrdered(t); err == nil {
					typ = strings.Trim(string(b), `"`)
				}
			}
			if d, ok := p.Get("description"); ok {
				desc, _ = d.(string)
			}
		}
		line := m.Key + ": " + typ
		if required[m.Key] {
			line += " (required)"
		}
		if desc != "" {
			line += " — " + oneLine(desc)
		}
		out = append(out, line)
	}
	return out
}

// readLintTools reads a catalog for lint, which reports every finding: in
// a JSON list (or {"tools": [...]}) each tool is read on its own, so that
// a tool that cannot be read (no name, bad JSON) is one finding among the
// others and a name given twice is left to registry.Lint, where loading
// the catalog for use refuses the whole file at the first.
func readLintTools(c *cli.Context, path string) ([]chat.Tool, []registry.Finding, error) {
	data, err := readFileArg(c, "--tools", path)
	if err != nil {
		return nil, nil, err
	}
	items, ok := toolItems(data)
	if !ok {
		tools, err := chat.ParseTools(data)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %s", displayName(path), userCause(err))
		}
		return tools, nil, nil
	}
	var tools []chat.Tool
	var findings []registry.Finding
	for i, item := range items {
		ts, err := chat.ParseTools(append(append([]byte("["), item...), ']'))
		if err != nil {
			// The item was read as the first tool of a list of one.
			var ie *chat.InputError
			if errors.As(err, &ie) && ie.Index == 0 {
				ie.Index = i
			}
			findings = append(findings, registry.Finding{Severity: registry.SeverityError, Message: displayName(path) + ": " + userCause(err)})
			continue
		}
		tools = append(tools, ts...)
	}
	return tools, findings, nil
}

// toolItems splits a JSON catalog (a list, or an object with "tools") into
// its items; ok is false for any other shape (YAML, one tool object).
func toolItems(data []byte) ([]json.RawMessage, bool) {
	var items []json.RawMessage
	if err := json.Unmarshal(data, &items); err == nil {
		return items, true
	}
	var obj struct {
		Tools []json.RawMessage `json:"tools"`
	}
	if err := json.Unmarshal(data, &obj); err == nil && obj.Tools != nil {
		return obj.Tools, true
	}
	return nil, false
}

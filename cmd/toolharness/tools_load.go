package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/toolharness/toolharness/agent"
	"github.com/toolharness/toolharness/chat"
	"github.com/toolharness/toolharness/registry"
	"github.com/toolharness/toolharness/registry/builtin"
	"github.com/toolharness/toolharness/registry/mcp"
)

// defaultMCPTimeout bounds an MCP server's answer to each request.
const defaultMCPTimeout = 30 * time.Second

// toolFlags are --tools, --mcp, --mcp-timeout and --workspace, the same on
// every command that loads tools.
func toolFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringSliceFlag{Name: "tools", Usage: "tools: builtin:fs, builtin:bash (or builtin:fs+bash), or a catalog `FILE` (JSON, JSON lines as tools list --json writes, or YAML; OpenAI, Anthropic or Gemini shape; - reads stdin); comma-separated or repeated"},
		&cli.StringSliceFlag{Name: "mcp", Usage: "an MCP server: `SPEC` is [NAME=]COMMAND ARGS… or [NAME=]http(s)://URL (repeatable)"},
		&cli.DurationFlag{Name: "mcp-timeout", Value: defaultMCPTimeout, Usage: "how long an MCP server may take to answer a request (initialize, tools/list, tools/call)"},
		&cli.StringFlag{Name: "workspace", Value: ".", Usage: "the `DIR` file tools are confined to"},
	}
}

// catalogFlag is --tools on the commands that only show or check tools
// (render, templates verify): catalog files and builtin groups, as on
// every command, without MCP.
func catalogFlag() cli.Flag {
	return &cli.StringSliceFlag{Name: "tools", Usage: "tools: a catalog `FILE` (JSON, JSON lines as tools list --json writes, or YAML; OpenAI, Anthropic or Gemini shape; - reads stdin) or builtin:fs, builtin:bash; comma-separated or repeated"}
}

// toolSet is what --tools, --mcp and --workspace ask for, read and
// checked before anything starts: catalog files parsed, builtin groups
// known, the workspace a directory, MCP specs well formed.
type toolSet struct {
	groups     []string
	files      []toolFile
	mcp        []mcp.Server
	workspace  string
	mcpTimeout time.Duration
	// bashSandbox is bwrap's path for builtin:bash in a session ("" runs
	// it unconfined: see bashSandbox).
	bashSandbox string
}

// toolFile is one catalog file and its tools.
type toolFile struct {
	path  string
	tools []chat.Tool
}

// isBuiltinItem reports whether a --tools item names builtin groups
// (builtin, builtin:fs, builtin:fs+bash) rather than a file.
func isBuiltinItem(item string) bool {
	return item == "builtin" || strings.HasPrefix(item, "builtin:")
}

// builtinGroups is the groups a builtin --tools item names; bare
// "builtin" is the fs group.
func builtinGroups(c *cli.Context, item string) ([]string, error) {
	if item == "builtin" {
		return []string{builtin.GroupFS}, nil
	}
	var groups []string
	for _, g := range strings.Split(strings.TrimPrefix(item, "builtin:"), "+") {
		if !slices.Contains(builtin.Groups(), g) {
			return nil, usageError(c, "--tools %s: unknown builtin group %q (want %s)", item, g, strings.Join(builtin.Groups(), ", "))
		}
		groups = append(groups, g)
	}
	return groups, nil
}

// readToolSet reads the tool flags of c.
func readToolSet(c *cli.Context) (toolSet, error) {
	ts := toolSet{mcpTimeout: defaultMCPTimeout}
	if c.IsSet("mcp-timeout") {
		if ts.mcpTimeout = c.Duration("mcp-timeout"); ts.mcpTimeout <= 0 {
			return ts, usageError(c, "--mcp-timeout %s: must be positive", ts.mcpTimeout)
		}
	}
	for _, item := range splitList(c.StringSlice("tools")) {
		switch {
		case isBuiltinItem(item):
			groups, err := builtinGroups(c, item)
			if err != nil {
				return ts, err
			}
			ts.groups = append(ts.groups, groups...)
		default:
			tools, err := readToolsArg(c, "--tools", item)
			if err != nil {
				return ts, err
			}
			ts.files = append(ts.files, toolFile{path: item, tools: tools})
		}
	}
	for _, spec := range c.StringSlice("mcp") {
		s, err := mcp.ParseServer(spec)
		if err != nil {
			return ts, usageError(c, "--mcp %q: %s", spec, userCause(err))
		}
		s.Timeout = ts.mcpTimeout
		ts.mcp = append(ts.mcp, s)
	}
	if slices.Contains(ts.groups, builtin.GroupBash) && definesFlag(c, "unsafe-bash") {
		sb, err := bashSandbox(c, builtin.FindSandbox())
		if err != nil {
			return ts, err
		}
		ts.bashSandbox = sb
	}
	if hasFlag(c, "workspace") {
		ws, err := checkWorkspace(c.String("workspace"))
		if err != nil {
			return ts, usageError(c, "%v", err)
		}
		ts.workspace = ws
	}
	return ts, nil
}

// bashSandbox decides how builtin:bash runs in a session, given bwrap's
// path ("" when it is not installed): in bwrap's sandbox when it is
// there; unconfined with --unsafe-bash, or when each command is asked for;
// never unconfined with every command approved (--yes) unless
// --unsafe-bash says so.
func bashSandbox(c *cli.Context, bwrap string) (string, error) {
	switch {
	case c.Bool("unsafe-bash"):
		return "", nil
	case bwrap != "":
		return bwrap, nil
	case c.Bool("yes"):
		return "", usageError(c, "--tools builtin:bash with --yes: bwrap (Debian package bubblewrap) is not installed, so every command would run unconfined, approved unseen; install bubblewrap, or pass --unsafe-bash")
	}
	fmt.Fprintln(c.App.ErrWriter, "toolharness: builtin:bash runs unconfined (bwrap, Debian package bubblewrap, is not installed): each command is asked for")
	return "", nil
}

// definesFlag reports whether the command has the flag, set or not.
func definesFlag(c *cli.Context, name string) bool {
	if c.Command == nil {
		return false
	}
	for _, f := range c.Command.Flags {
		if slices.Contains(f.Names(), name) {
			return true
		}
	}
	return false
}

// hasFlag reports whether the command defines the flag.
func hasFlag(c *cli.Context, name string) bool {
	return slices.Contains(c.FlagNames(), name)
}

// checkWorkspace returns the absolute path of a workspace directory.
func checkWorkspace(ws string) (string, error) {
	if abs, err := filepath.Abs(ws); err == nil {
		ws = abs
	}
	if fi, err := os.Stat(ws); err != nil || !fi.IsDir() {
		return "", fmt.Errorf("--workspace %s: not a directory", ws)
	}
	return ws, nil
}

// localToolsFlag reads --tools of a command that only reads tools
// (parse, bench corpus): catalog files and builtin groups.
func localToolsFlag(c *cli.Context) ([]chat.Tool, error) {
	ts, err := readToolSet(c)
	if err != nil {
		return nil, err
	}
	return ts.localTools()
}

// localTools returns every tool of the set that is known without starting
// anything (catalog files and builtin groups; not MCP), as a model would
// see them.
func (ts toolSet) localTools() ([]chat.Tool, error) {
	r := registry.New(registry.Options{})
	if err := ts.register(r, false); err != nil {
		return nil, err
	}
	return r.Tools(), nil
}

// register adds the catalog files' tools (declared only: calling one is
// an error result) and the builtin groups to r; with declaredFiles the
// message says which file declared the tool.
func (ts toolSet) register(r *registry.Registry, declaredFiles bool) error {
	for _, f := range ts.files {
		for _, t := range f.tools {
			h := noHandler
			if declaredFiles {
				name, file := t.Name, f.path
				h = func(context.Context, json.RawMessage) (string, error) {
					return "", fmt.Errorf("tool %q is only declared (in %s); this session cannot run it", name, file)
				}
			}
			if err := r.Register(registry.Spec{Tool: t, Handler: h}); err != nil {
				return fmt.Errorf("%s: %s", f.path, userCause(err))
			}
		}
	}
	if len(ts.groups) > 0 {
		ws := ts.workspace
		if ws == "" {
			ws = "."
		}
		if err := builtin.RegisterGroups(r, ts.groups, builtin.Options{Workspace: ws, BashSandbox: ts.bashSandbox}); err != nil {
			return err
		}
	}
	return nil
}

// connectMCP starts the MCP servers and registers their tools; the closer
// ends the sessions.
func (ts toolSet) connectMCP(ctx context.Context, r *registry.Registry, deferred bool) (func() error, error) {
	var conns []*mcp.Conn
	closeAll := func() error {
		var first error
		for _, c := range conns {
			if err := c.Close(); err != nil && first == nil {
				first = err
			}
		}
		return first
	}
	for _, s := range ts.mcp {
		s.Deferred = deferred
		c, err := mcp.Load(ctx, r, s)
		if err != nil {
			closeAll()
			return func() error { return nil }, err
		}
		conns = append(conns, c)
	}
	return closeAll, nil
}

// loadRegistry builds a registry from the tool flags (MCP servers
// included). The returned closer ends MCP sessions; call it when done.
func loadRegistry(ctx context.Context, ts toolSet, opts registry.Options) (*registry.Registry, func() error, error) {
	r := registry.New(opts)
	if err := ts.register(r, false); err != nil {
		return nil, func() error { return nil }, err
	}
	closeAll, err := ts.connectMCP(ctx, r, false)
	if err != nil {
		return nil, closeAll, err
	}
	return r, closeAll, nil
}

// errNoHandler is what a tool read from a file answers when run: a file
// only describes tools.
var errNoHandler = fmt.Errorf("this tool has no implementation in this harness (it was loaded from a catalog file)")

func noHandler(context.Context, json.RawMessage) (string, error) { return "", errNoHandler }

// coercingFormat reports whether a format's parameter values are raw
// text, so the registry's lossless coercions apply.
func coercingFormat(format string) bool { return agent.CoercesValues(format) }

func describeTool(r *registry.Registry, t chat.Tool) string {
	kind := "read-only"
	if r.SideEffects(t.Name) {
		kind = "side effects"
	}
	return fmt.Sprintf("%s (%s)", t.Name, kind)
}

func splitList(vals []string) []string {
	var out []string
	for _, v := range vals {
		for _, p := range strings.Split(v, ",") {
			if p = strings.TrimSpace(p); p != "" {
				out = append(out, p)
			}
		}
	}
	return out
}

package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/urfave/cli/v2"
	"golang.org/x/term"

	"github.com/toolharness/toolharness/agent"
	"github.com/toolharness/toolharness/backend"
	"github.com/toolharness/toolharness/chat"
	"github.com/toolharness/toolharness/registry"
	"github.com/toolharness/toolharness/registry/builtin"
	"github.com/toolharness/toolharness/registry/mcp"
)

// agentFlags are the flags run and chat share.
func agentFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "backend", Value: "ollama", Usage: "server kind: ollama, llamacpp or openai (any OpenAI-compatible /v1 server)"},
		&cli.StringFlag{Name: "api-key", EnvVars: []string{"OPENAI_API_KEY"}, Usage: "bearer token for --backend openai or llamacpp"},
		&cli.StringFlag{Name: "quirks", Usage: "with --backend openai: `ollama` for Ollama's /v1 (templated /v1/completions: chat mode only)"},
		&cli.StringFlag{Name: "model", Aliases: []string{"m"}, EnvVars: []string{"TOOLHARNESS_MODEL"}, Usage: "model name on the server (required)"},
		&cli.StringFlag{Name: "mode", Value: "raw", Usage: "raw (toolharness renders the whole prompt) or chat (the server applies its template)"},
		&cli.StringFlag{Name: "template", Usage: "template family (see: toolharness templates list); default: the model's own chat template, read from the server"},
		chatTemplateFlag(),
		&cli.StringFlag{Name: "format", Usage: "tool-call format (xml, hermes, json, mistral, qwen3-coder, pythonic, harmony, tags); default: the family's"},
		&cli.StringSliceFlag{Name: "tools", Usage: "tools: builtin:fs, builtin:bash, or a catalog FILE.json (declared only: calls get an error result); comma-separated or repeated"},
		&cli.StringSliceFlag{Name: "mcp", Usage: "an MCP server: `SPEC` is [NAME=]COMMAND ARGS… or [NAME=]http(s)://URL (repeatable)"},
		&cli.StringFlag{Name: "workspace", Value: ".", Usage: "the directory file tools are confined to"},
		&cli.BoolFlag{Name: "constrained", Usage: "constrain every generation to a JSON Schema of the calls (Ollama format, llama.cpp json_schema)"},
		&cli.IntFlag{Name: "constrained-max-string", Usage: "with --constrained, bound every string without a maxLength to N characters (for weak models)"},
		&cli.BoolFlag{Name: "require-call", Usage: "the first reply to each message must be a tool call (nudged once, or constrained)"},
		&cli.IntFlag{Name: "max-turns", Value: 10, Usage: "generations per user message before giving up"},
		&cli.IntFlag{Name: "max-retries", Value: 3, Usage: "generations after model mistakes (bad calls, missing calls) per user message"},
		&cli.StringFlag{Name: "trace", Usage: "write one JSON line per generation to `FILE`"},
		&cli.BoolFlag{Name: "yes", Aliases: []string{"y"}, Usage: "approve every side-effecting tool call"},
		&cli.BoolFlag{Name: "deny", Usage: "refuse every side-effecting tool call"},
		&cli.IntFlag{Name: "num-ctx", Usage: "context window to request (Ollama num_ctx); 0 lets the backend size it"},
		&cli.IntFlag{Name: "max-tokens", Usage: "bound each generation to N tokens (0 = server default)"},
		&cli.Float64Flag{Name: "temperature", Value: -1, DefaultText: "the server's", Usage: "sampling temperature"},
		&cli.IntFlag{Name: "seed", DefaultText: "none", Usage: "sampling seed"},
		&cli.DurationFlag{Name: "stall-timeout", Value: 2 * time.Minute, Usage: "fail a generation that receives nothing for this long"},
		&cli.StringFlag{Name: "instructions", Usage: "project instructions `FILE` (e.g. AGENTS.md), sent as a system reminder"},
		&cli.StringFlag{Name: "skills", Usage: "a `DIR` of skill .md files: /name args runs one, the skill tool loads one"},
		&cli.BoolFlag{Name: "task", Usage: "add the task tool: sub-agents with the read-only tools"},
		&cli.BoolFlag{Name: "strict", Usage: "parse calls strictly (no repairs)"},
		&cli.BoolFlag{Name: "verbatim", Usage: "no framing protection of untrusted text (byte-identical to the official template)"},
	}
}

// session is a built session and what must be closed after it.
type session struct {
	*agent.Session
	model   string
	closers []func() error
}

func (s *session) Close() error {
	var errs []error
	for i := len(s.closers) - 1; i >= 0; i-- {
		errs = append(errs, s.closers[i]())
	}
	return errors.Join(errs...)
}

// buildSession wires the flags to the packages. in is where approvals are
// read from on a terminal.
func buildSession(ctx context.Context, c *cli.Context, hooks agent.Hooks, in *lineReader, errw io.Writer) (*session, error) {
	model := c.String("model")
	if model == "" {
		return nil, errors.New("--model is required (or TOOLHARNESS_MODEL)")
	}
	mode := backend.Mode(c.String("mode"))
	if mode != backend.ModeRaw && mode != backend.ModeChat {
		return nil, fmt.Errorf("--mode %q: want raw or chat", mode)
	}
	if c.Bool("yes") && c.Bool("deny") {
		return nil, errors.New("--yes and --deny exclude each other")
	}
	s := &session{model: model}
	ok := false
	defer func() {
		if !ok {
			s.Close()
		}
	}()
	host := normalizeHost(c.String("host"))
	b, err := newBackendWith(backendFlags{kind: c.String("backend"), host: host, apiKey: c.String("api-key"),
		quirks: c.String("quirks"), stall: c.Duration("stall-timeout")})
	if err != nil {
		return nil, err
	}
	tools := len(c.StringSlice("tools"))+len(c.StringSlice("mcp")) > 0 || c.Bool("task") || c.String("skills") != ""
	fam, err := commandFamily(ctx, c, c.String("backend"), host, model, tools, errw)
	if err != nil {
		return nil, err
	}
	r, err := agent.NewRenderer(agent.RendererOptions{Family: &fam, Format: c.String("format"), Strict: c.Bool("strict"), Verbatim: c.Bool("verbatim")})
	if err != nil {
		return nil, err
	}

	ws := c.String("workspace")
	if abs, err := filepath.Abs(ws); err == nil {
		ws = abs
	}
	if fi, err := os.Stat(ws); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("--workspace %s: not a directory", ws)
	}
	var approver registry.Approver
	switch {
	case c.Bool("yes"):
		approver = registry.ApproveAll{}
	case c.Bool("deny"):
		approver = registry.DenyAll{}
	default:
		approver = askApprover(in, errw)
	}
	reg := registry.New(registry.Options{
		Coerce: agent.CoercesValues(r.Format()), Approver: approver,
		FormatCall: r.FormatCall, RenderCatalog: r.Catalog,
	})
	if err := addTools(ctx, reg, s, c.StringSlice("tools"), c.StringSlice("mcp"), ws); err != nil {
		return nil, err
	}

	opts := backend.Options{NumCtx: c.Int("num-ctx"), MaxTokens: c.Int("max-tokens")}
	if t := c.Float64("temperature"); t >= 0 {
		opts.Temperature = &t
	}
	if sd := c.Int("seed"); sd != 0 {
		opts.Seed = &sd
	}
	cfg := agent.Config{
		Backend: b, Model: model, Mode: mode, Renderer: r, Tools: agent.RegistryTools(reg),
		Workspace: ws, Constrained: c.Bool("constrained"), RequireCall: c.Bool("require-call"),
		ConstrainMaxString: c.Int("constrained-max-string"),
		MaxTurns:           c.Int("max-turns"), MaxRetries: c.Int("max-retries"), Options: opts, Hooks: hooks,
	}
	if c.Int("max-retries") == 0 {
		cfg.MaxRetries = -1 // no retries at all
	}
	if f := c.String("instructions"); f != "" {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("--instructions: %w", err)
		}
		cfg.Instructions, cfg.InstructionsSource = string(data), filepath.Base(f)
	}
	if d := c.String("skills"); d != "" {
		if cfg.Skills, err = agent.LoadSkills(d); err != nil {
			return nil, err
		}
	}
	if c.Bool("task") {
		cfg.Subagent = &agent.SubagentConfig{Tools: agent.Subset(cfg.Tools, func(name string) bool { return !reg.SideEffects(name) })}
	}
	if f := c.String("trace"); f != "" {
		tf, err := os.OpenFile(f, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return nil, fmt.Errorf("--trace: %w", err)
		}
		s.closers = append(s.closers, tf.Close)
		cfg.Trace = tf
	}
	if s.Session, err = agent.New(ctx, cfg); err != nil {
		return nil, err
	}
	ok = true
	return s, nil
}

// addTools registers the --tools and --mcp tools.
func addTools(ctx context.Context, reg *registry.Registry, s *session, specs, servers []string, ws string) error {
	var groups []string
	for _, spec := range splitList(specs) {
		if g, ok := strings.CutPrefix(spec, "builtin:"); ok {
			groups = append(groups, g)
			continue
		}
		tools, err := chat.ReadToolsFile(spec)
		if err != nil {
			return fmt.Errorf("--tools %s: %w", spec, err)
		}
		for _, t := range tools {
			name, file := t.Name, spec
			h := func(context.Context, json.RawMessage) (string, error) {
				return "", fmt.Errorf("tool %q is only declared (in %s); this session cannot run it", name, file)
			}
			if err := reg.Register(registry.Spec{Tool: t, Handler: h}); err != nil {
				return err
			}
		}
	}
	if len(groups) > 0 {
		if err := builtin.RegisterGroups(reg, groups, builtin.Options{Workspace: ws}); err != nil {
			return err
		}
	}
	for _, spec := range servers {
		srv, err := mcp.ParseServer(spec)
		if err != nil {
			return err
		}
		conn, err := mcp.Load(ctx, reg, srv)
		if err != nil {
			return err
		}
		s.closers = append(s.closers, conn.Close)
	}
	return nil
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

// lineReader reads lines from stdin for chat messages and approvals alike.
type lineReader struct {
	mu  sync.Mutex
	sc  *bufio.Scanner
	tty bool
}

func newLineReader(r io.Reader) *lineReader {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 16<<20)
	tty := false
	if f, ok := r.(*os.File); ok {
		tty = term.IsTerminal(int(f.Fd()))
	}
	return &lineReader{sc: sc, tty: tty}
}

func (l *lineReader) line() (string, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.sc.Scan() {
		return "", false
	}
	return l.sc.Text(), true
}

// askApprover asks on the terminal; without one it refuses and says how
// to approve.
func askApprover(in *lineReader, errw io.Writer) registry.Approver {
	var mu sync.Mutex
	return registry.ApproverFunc(func(ctx context.Context, call chat.ToolCall) (bool, error) {
		if in == nil || !in.tty {
			fmt.Fprintf(errw, "toolharness: refused %s: no terminal to ask (pass --yes to approve side-effecting calls)\n", callLine(call))
			return false, nil
		}
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(errw, "Allow %s? [y/N] ", callLine(call))
		ans, _ := in.line()
		ans = strings.ToLower(strings.TrimSpace(ans))
		return ans == "y" || ans == "yes", nil
	})
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/urfave/cli/v2"
	"golang.org/x/term"

	"github.com/toolharness/toolharness/agent"
	"github.com/toolharness/toolharness/backend"
	"github.com/toolharness/toolharness/chat"
	"github.com/toolharness/toolharness/internal/reach"
	"github.com/toolharness/toolharness/registry"
	"github.com/toolharness/toolharness/render"
	"github.com/toolharness/toolharness/templates"
)

// agentFlags are the flags run and chat share.
func agentFlags() []cli.Flag {
	return slices.Concat([]cli.Flag{
		hostFlag(),
		backendFlag(),
		&cli.StringFlag{Name: "api-key", EnvVars: []string{"OPENAI_API_KEY"}, Usage: "bearer token for --backend openai or llamacpp"},
		&cli.StringFlag{Name: "quirks", Usage: "with --backend openai: `ollama` for Ollama's /v1 (templated /v1/completions: chat mode only)"},
		modelFlag(),
		&cli.StringFlag{Name: "mode", Value: "raw", Usage: "raw (toolharness renders the whole prompt), chat (the server applies its template, toolharness parses the calls) or server (tools in the API's tools field: the server's own template and call parser)"},
		&cli.StringFlag{Name: "template", Usage: "template family (see: toolharness templates list); default: the model's own chat template, read from the server"},
		chatTemplateFlag(),
		&cli.StringFlag{Name: "format", Usage: "tool-call format (" + strings.Join(render.Formats(), ", ") + "); default: the family's"},
	}, templateVarFlags(), toolFlags(), []cli.Flag{
		&cli.BoolFlag{Name: "constrained", Usage: "constrain every generation to a JSON Schema of the calls (Ollama format, llama.cpp json_schema)"},
		&cli.IntFlag{Name: "constrained-max-string", Usage: "with --constrained, bound every string without a maxLength to N characters (for weak models)"},
		&cli.BoolFlag{Name: "require-call", Usage: "the first reply to each message must be a tool call (nudged once, or constrained)"},
		&cli.IntFlag{Name: "max-turns", Value: 10, Usage: "generations per user message before giving up"},
		&cli.IntFlag{Name: "max-retries", Value: 3, Usage: "generations after model mistakes (bad calls, missing calls) per user message"},
		&cli.StringFlag{Name: "trace", Usage: "write one JSON line per generation to `FILE`"},
		tracePromptsFlag(),
		showPromptFlag(),
		&cli.BoolFlag{Name: "yes", Aliases: []string{"y"}, Usage: "approve every side-effecting tool call"},
		&cli.BoolFlag{Name: "deny", Usage: "refuse every side-effecting tool call"},
		&cli.BoolFlag{Name: "unsafe-bash", Usage: "run builtin:bash unconfined, as you (by default it runs in a bwrap sandbox: only the workspace, no network; without bwrap, --yes refuses builtin:bash)"},
		&cli.IntFlag{Name: "num-ctx", Usage: "context window (Ollama num_ctx), fixed for the session; 0: the model's window capped at 16384"},
		&cli.IntFlag{Name: "max-tokens", Usage: "bound each generation to N tokens (0 = server default)"},
		&cli.Float64Flag{Name: "temperature", Value: -1, DefaultText: "the server's", Usage: "sampling temperature"},
		&cli.IntFlag{Name: "seed", DefaultText: "none", Usage: "sampling seed"},
		&cli.DurationFlag{Name: "stall-timeout", Value: 2 * time.Minute, Usage: "fail a generation that receives nothing for this long"},
		&cli.StringFlag{Name: "instructions", Usage: "project instructions `FILE` (e.g. AGENTS.md), sent as a system reminder"},
		&cli.StringFlag{Name: "skills", Usage: "a `DIR` of skill .md files: /name args runs one, the skill tool loads one"},
		&cli.BoolFlag{Name: "task", Usage: "add the task tool: sub-agents with the read-only tools"},
		&cli.BoolFlag{Name: "strict", Usage: "parse calls strictly (no repairs)"},
		&cli.BoolFlag{Name: "verbatim", Usage: "no framing protection of untrusted text (byte-identical to the official template)"},
		&cli.BoolFlag{Name: "json", Usage: "print one JSON object per message on stdout: message, answer, reasoning, stop, calls, retries, error"},
		&cli.BoolFlag{Name: "raw", Usage: "write the model's text and tool results as they are, control sequences included (by default a terminal gets them without: a reply cannot clear the screen or set the title)"},
		&cli.BoolFlag{Name: "hide-reasoning", Usage: "do not show the model's reasoning as it streams (--json and --trace keep it)"},
	})
}

// modelFlag is --model, -m, on every command that names one model.
func modelFlag() cli.Flag {
	return &cli.StringFlag{Name: "model", Aliases: []string{"m"}, EnvVars: []string{"TOOLHARNESS_MODEL"}, Usage: "model `NAME` on the server (required)"}
}

// backendKinds are the --backend values.
var backendKinds = []string{"ollama", "llamacpp", "openai"}

// backendFlag is --backend, the same on run, chat, bench run and compare.
func backendFlag() cli.Flag {
	return &cli.StringFlag{Name: "backend", Value: "ollama", Usage: "server kind: ollama, llamacpp or openai (any OpenAI-compatible /v1 server)"}
}

// checkAgentFlags checks every flag of run and chat that can be checked
// without the server.
func checkAgentFlags(c *cli.Context) error {
	if c.String("model") == "" {
		return usageError(c, "--model is required (or TOOLHARNESS_MODEL)")
	}
	if err := checkChoice(c, "backend", c.String("backend"), backendKinds); err != nil {
		return err
	}
	if err := checkChoice(c, "mode", c.String("mode"), []string{string(backend.ModeRaw), string(backend.ModeChat), string(backend.ModeServer)}); err != nil {
		return err
	}
	if c.String("mode") == string(backend.ModeServer) && c.Bool("constrained") {
		return usageError(c, "--constrained cannot be used with --mode server: the server constrains its own tool calls (or not)")
	}
	if err := checkChoice(c, "quirks", c.String("quirks"), []string{"ollama"}); err != nil {
		return err
	}
	if t := c.String("template"); t != "" {
		if _, err := templates.Lookup(t); err != nil {
			return usageError(c, "--template %q: want one of %s", t, strings.Join(templates.Names(), ", "))
		}
	}
	if err := promptFormat(c, "format", c.String("format")); err != nil {
		return err
	}
	if c.Bool("yes") && c.Bool("deny") {
		return usageError(c, "--yes and --deny exclude each other")
	}
	if err := nonNegative(c, "max-turns", "max-retries", "max-tokens", "num-ctx", "constrained-max-string", "stall-timeout"); err != nil {
		return err
	}
	if c.Int("max-turns") == 0 {
		return usageError(c, "--max-turns 0: a message needs at least one generation")
	}
	if err := checkFileArg(c.String("instructions")); err != nil {
		return usageError(c, "--instructions %v", err)
	}
	if c.Bool("trace-prompts") && c.String("trace") == "" {
		return usageError(c, "--trace-prompts: give --trace FILE for the prompts to go in")
	}
	if f := c.String("trace"); f != "" {
		// The file is created when the session starts; its folder must be there.
		if fi, err := os.Stat(filepath.Dir(f)); err != nil || !fi.IsDir() {
			return usageError(c, "--trace %s: no directory %s", f, filepath.Dir(f))
		}
	}
	if d := c.String("skills"); d != "" {
		if fi, err := os.Stat(d); err != nil || !fi.IsDir() {
			return usageError(c, "--skills %s: not a directory", d)
		}
	}
	return nil
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
// read from on a terminal. Every flag and file is checked, and the server
// probed, before the first request, so a mistake or a missing server is
// one line.
func buildSession(ctx context.Context, c *cli.Context, hooks agent.Hooks, in *lineReader, errw io.Writer) (*session, error) {
	if err := checkAgentFlags(c); err != nil {
		return nil, err
	}
	tools, err := readToolSet(c)
	if err != nil {
		return nil, err
	}
	model, kind, host := c.String("model"), c.String("backend"), serverHost(c)
	s := &session{model: model}
	ok := false
	defer func() {
		if !ok {
			s.Close()
		}
	}()
	b, err := newBackendWith(backendFlags{kind: kind, host: host, apiKey: c.String("api-key"),
		quirks: c.String("quirks"), stall: c.Duration("stall-timeout")})
	if err != nil {
		return nil, err
	}
	showing, closeShown, err := promptShowing(c)
	if err != nil {
		return nil, err
	}
	s.closers = append(s.closers, closeShown)
	b = showing(b)
	if c.String("mode") == string(backend.ModeRaw) && !b.Capabilities().Raw {
		return nil, usageError(c, "--mode raw: with --quirks ollama the server takes chat requests only (Ollama's /v1/completions applies the model's template): pass --mode chat")
	}
	// The template flags are files and names: checked before the probe.
	hasTools := len(c.StringSlice("tools"))+len(c.StringSlice("mcp")) > 0 || c.Bool("task") || c.String("skills") != ""
	if c.String("chat-template") == "-" {
		return nil, usageError(c, "--chat-template -: this command cannot read the template from standard input (it reads messages there); give a file")
	}
	// What the template is is said once the server answers: a dead
	// server is then the only line.
	var note bytes.Buffer
	fam, ferr := flagFamily(c, hasTools, &note)
	if ferr != nil && !errors.Is(ferr, errNoTemplateFlags) {
		return nil, ferr
	}
	if err := reach.Probe(ctx, kind, host, probeTimeout); err != nil {
		return nil, err
	}
	if _, err := errw.Write(note.Bytes()); err != nil {
		return nil, err
	}
	if ferr != nil {
		if fam, err = commandFamily(ctx, c, kind, host, model, hasTools, errw); err != nil {
			return nil, err
		}
	}
	if hasTools {
		if err := noteCatalog(fam, c.String("format"), c.String("mode") == string(backend.ModeChat), errw); err != nil {
			return nil, err
		}
	}
	r, err := agent.NewRenderer(agent.RendererOptions{Family: &fam, Format: c.String("format"), Chat: c.String("mode") != string(backend.ModeRaw),
		Strict: c.Bool("strict"), Verbatim: c.Bool("verbatim")})
	if err != nil {
		return nil, err
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
	if err := tools.register(reg, true); err != nil {
		return nil, err
	}
	closeMCP, err := tools.connectMCP(ctx, reg, false)
	s.closers = append(s.closers, closeMCP)
	if err != nil {
		return nil, err
	}
	cfg, err := agentConfig(c, b, r, reg, tools.workspace, hooks)
	if err != nil {
		return nil, err
	}
	if f := c.String("trace"); f != "" {
		tf, err := os.OpenFile(f, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return nil, fmt.Errorf("--trace %s: %w", f, unwrapPath(err))
		}
		s.closers = append(s.closers, tf.Close)
		cfg.Trace, cfg.TracePrompts = tf, c.Bool("trace-prompts")
	}
	if s.Session, err = agent.New(ctx, cfg); err != nil {
		return nil, err
	}
	ok = true
	return s, nil
}

// probeTimeout bounds the check that the server is there.
const probeTimeout = 10 * time.Second

// agentConfig is the agent's configuration from the flags.
func agentConfig(c *cli.Context, b backend.Backend, r agent.Renderer, reg *registry.Registry, ws string, hooks agent.Hooks) (agent.Config, error) {
	opts := backend.Options{NumCtx: c.Int("num-ctx"), MaxTokens: c.Int("max-tokens")}
	if t := c.Float64("temperature"); t >= 0 {
		opts.Temperature = &t
	}
	if sd := c.Int("seed"); sd != 0 {
		opts.Seed = &sd
	}
	cfg := agent.Config{
		Backend: b, Model: c.String("model"), Mode: backend.Mode(c.String("mode")), Renderer: r, Tools: agent.RegistryTools(reg),
		Workspace: ws, Constrained: c.Bool("constrained"), RequireCall: c.Bool("require-call"),
		ConstrainMaxString: c.Int("constrained-max-string"),
		MaxTurns:           c.Int("max-turns"), MaxRetries: c.Int("max-retries"), Options: opts, Hooks: hooks,
	}
	if c.Int("max-retries") == 0 {
		cfg.MaxRetries = -1 // no retries at all
	}
	if f := c.String("instructions"); f != "" {
		data, err := readFileArg(c, "--instructions", f)
		if err != nil {
			return cfg, err
		}
		cfg.Instructions, cfg.InstructionsSource = string(data), filepath.Base(f)
	}
	if d := c.String("skills"); d != "" {
		var err error
		if cfg.Skills, err = agent.LoadSkills(d); err != nil {
			return cfg, err
		}
	}
	if c.Bool("task") {
		cfg.Subagent = &agent.SubagentConfig{Tools: agent.Subset(cfg.Tools, func(name string) bool { return !reg.SideEffects(name) })}
	}
	return cfg, nil
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

package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/toolharness/toolharness/backend"
	"github.com/toolharness/toolharness/bench"
	"github.com/toolharness/toolharness/bench/report"
	"github.com/toolharness/toolharness/internal/reach"
	"github.com/toolharness/toolharness/templates"
	"github.com/urfave/cli/v2"
	"golang.org/x/term"
)

// liveFlags are the flags shared by `bench run` and `compare`.
func liveFlags() []cli.Flag {
	return append([]cli.Flag{
		hostFlag(),
		&cli.StringSliceFlag{Name: "formats", Value: cli.NewStringSlice(bench.Native), Usage: "tool-call formats, comma-separated: native (the model's template's own), " + strings.Join(bench.Formats(), ", ")},
		&cli.StringSliceFlag{Name: "modes", Value: cli.NewStringSlice("raw"), Usage: "raw (toolharness renders the prompt), chat (the server templates messages, toolharness parses) and/or server (tools in the API's tools field, the server's own parser: one cell per model)"},
		&cli.StringFlag{Name: "suite", Usage: "suite `FILE` (YAML or JSON; - reads stdin); default: the built-in suite"},
		&cli.IntFlag{Name: "repeats", Value: 1, Usage: "run each case N times"},
		&cli.Float64Flag{Name: "temperature", Value: 0, Usage: "sampling temperature"},
		&cli.IntFlag{Name: "seed", Value: -1, Usage: "sampling seed (-1: server default)"},
		&cli.IntFlag{Name: "max-tokens", Value: 512, Usage: "generated-token limit per attempt"},
		&cli.IntFlag{Name: "num-ctx", Usage: "context window (Ollama num_ctx), one value per model for the run; 0: the model's window capped at 16384"},
		&cli.IntFlag{Name: "max-retries", Value: 3, Usage: "retries after a parse or validation error, with the error fed back"},
		&cli.BoolFlag{Name: "constrained", Usage: "constrain output to the tools' JSON Schema where the server can (calls only for cases that expect calls)"},
		&cli.IntFlag{Name: "constrained-max-string", Usage: "with --constrained, bound every string without a maxLength to N characters (for weak models)"},
		&cli.BoolFlag{Name: "whole", Usage: "ask for each reply whole, not streamed: with --backend llamacpp in raw mode every generated token id comes back, also where a token ends inside a UTF-8 character (a stream sends none there), so a retry sends the whole failed attempt as ids (TTFT is then the whole generation)"},
		&cli.StringSliceFlag{Name: "endpoint", Usage: "model server URL, repeatable; URL#N runs N cases there at once (default: --host)"},
		&cli.IntFlag{Name: "concurrency", Value: 1, Usage: "cases at once per endpoint without #N"},
		backendFlag(),
		&cli.StringFlag{Name: "template", Usage: "template family for every model (default: each model's own chat template, read from the server)"},
		chatTemplateFlag(),
		&cli.DurationFlag{Name: "stall-timeout", Value: 2 * time.Minute, Usage: "fail a generation that receives nothing for this long"},
		&cli.BoolFlag{Name: "resume", Usage: "continue the results in --out without repeating finished cases"},
		&cli.BoolFlag{Name: "json", Usage: "print the summary as JSON"},
		showPromptFlag(),
	}, templateVarFlags()...)
}

func benchRunCommand() *cli.Command {
	return &cli.Command{
		Name:  "run",
		Usage: "run a suite live against model servers",
		UsageText: `toolharness bench run --models a,b [--formats auto,hermes,xml] [--modes raw,chat] [--repeats N]
    [--endpoint URL[#N]]... [--constrained] [--suite FILE] --out DIR [--resume]

"native" is the format the model's chat template writes calls in ("auto", its old name, is
still accepted). DIR/manifest.json records the flags, sampling, template, toolharness build and
what the servers say of themselves (version, model digest); --resume refuses a DIR whose
manifest differs, naming the differing keys.

Every case of the suite runs in every model × format × mode cell. Cells are spread over the
endpoints by one work queue. Results stream to DIR/results.jsonl (fsynced per case); Ctrl-C
stops cleanly and --resume continues without repeating or losing a case.

Examples:
   toolharness bench run --models qwen2.5:7b --formats hermes,xml --repeats 3 --out /tmp/run
   toolharness bench run --models qwen2.5:7b,llama3.2 --endpoint http://gpu1:11434#2 \
       --endpoint http://gpu2:11434 --modes raw,chat --out /tmp/run --resume`,
		Flags: append(liveFlags(),
			&cli.StringSliceFlag{Name: "models", Usage: "models, comma-separated", Required: true},
			&cli.StringFlag{Name: "out", Value: "bench-results", Usage: "results directory"},
		),
		Action: func(c *cli.Context) error {
			lr, err := checkLive(c, splitList(c.StringSlice("models")))
			if err != nil {
				return err
			}
			_, err = runLive(c, lr, c.String("out"))
			return err
		},
	}
}

// liveRun is a checked bench run or compare: everything the flags ask
// for, read before any network call.
type liveRun struct {
	models, formats, modes []string
	cells                  []bench.Cell
	suite                  bench.Suite
	endpoints              []bench.Endpoint
}

// checkLive checks every flag of bench run and compare.
func checkLive(c *cli.Context, models []string) (liveRun, error) {
	var lr liveRun
	if err := checkChoice(c, "backend", c.String("backend"), backendKinds); err != nil {
		return lr, err
	}
	if t := c.String("template"); t != "" {
		if _, err := templates.Lookup(t); err != nil {
			return lr, usageError(c, "--template %q: want one of %s", t, strings.Join(templates.Names(), ", "))
		}
		tv, err := readTemplateVars(c)
		if err != nil {
			return lr, err
		}
		if tv.set() {
			return lr, usageError(c, "--bos, --eos and --template-var apply to a model's own template (--chat-template or the server's), not to --template %s", t)
		}
	}
	if err := nonNegative(c, "repeats", "max-tokens", "num-ctx", "max-retries", "constrained-max-string", "concurrency", "stall-timeout", "temperature"); err != nil {
		return lr, err
	}
	if c.IsSet("repeats") && c.Int("repeats") == 0 {
		return lr, usageError(c, "--repeats 0: run each case at least once")
	}
	if c.IsSet("concurrency") && c.Int("concurrency") == 0 {
		return lr, usageError(c, "--concurrency 0: run at least one case at a time")
	}
	var err error
	var aliased bool
	lr.formats, aliased = nativeAlias(splitList(c.StringSlice("formats")))
	lr.models, lr.modes = models, splitList(c.StringSlice("modes"))
	if lr.cells, err = bench.ParseCells(lr.models, lr.formats, lr.modes); err != nil {
		return lr, usageError(c, "%s", userCause(err))
	}
	if c.Bool("constrained") && slices.Contains(lr.modes, string(backend.ModeServer)) {
		return lr, usageError(c, "--constrained cannot be used with --modes server: the server constrains its own tool calls (or not)")
	}
	if p := c.String("suite"); p != "" {
		data, err := readFileArg(c, "--suite", p)
		if err != nil {
			return lr, err
		}
		if lr.suite, err = bench.ParseSuite(data); err != nil {
			return lr, fmt.Errorf("%s: %s", displayName(p), userCause(err))
		}
	} else if lr.suite, err = bench.DefaultSuite(); err != nil {
		return lr, err
	}
	if lr.endpoints, err = parseEndpoints(c); err != nil {
		return lr, usageError(c, "%s", err)
	}
	if aliased {
		// Said once the flags are good, so a bad flag stays one line.
		fmt.Fprintln(c.App.ErrWriter, `toolharness: --formats auto is now called "native" (the format the model's template writes calls in); "auto" still works`)
	}
	return lr, nil
}

// nativeAlias turns the old format name "auto" into "native" and says
// whether it did.
func nativeAlias(formats []string) ([]string, bool) {
	out := slices.Clone(formats)
	i := slices.Index(out, "auto")
	if i >= 0 {
		out[i] = bench.Native
	}
	return out, i >= 0
}

// runLive runs the matrix and writes the reports; it returns the summary.
// A run with error cases, or endpoints that stopped, writes everything it
// has and then fails with one line per stopped endpoint and a count.
func runLive(c *cli.Context, lr liveRun, out string) (bench.Summary, error) {
	sig := watchInterrupts(c.App.ErrWriter, commandPath(c))
	defer sig.stop()
	ctx, end := sig.work(c.Context)
	defer end()
	driver, closeShown, err := newAgentDriver(ctx, c, lr.endpoints)
	if err != nil {
		return bench.Summary{}, err
	}
	defer closeShown()
	manifest, err := liveManifest(ctx, c, lr, driver)
	if err != nil {
		return bench.Summary{}, err
	}
	printer := &bench.ProgressPrinter{W: c.App.ErrWriter, Terminal: benchIsTerminal(c.App.ErrWriter)}
	res, err := bench.Run(ctx, bench.RunConfig{
		Suite: lr.suite, Cells: lr.cells, Repeats: c.Int("repeats"), Endpoints: lr.endpoints, Driver: driver,
		Out: out, Resume: c.Bool("resume"), Progress: printer.Update, Manifest: manifest,
	})
	if err != nil {
		return bench.Summary{}, err
	}
	if written, err := bench.ReadManifest(out); err == nil && written != nil {
		manifest = written // a resume keeps the first run's creation time
	}
	s := bench.Summarize(res.Records)
	meta := report.Meta{
		Title: "toolharness bench run",
		Source: fmt.Sprintf("suite %s, %d cases × %d cells × %d repeats, %d endpoints", lr.suite.Name, len(lr.suite.Cases), len(lr.cells),
			max(c.Int("repeats"), 1), len(lr.endpoints)),
		Generated: time.Now().UTC().Format(time.RFC3339),
		Manifest:  manifest,
	}
	if err := report.WriteAll(out, s, meta); err != nil {
		return s, err
	}
	// A table of dashes says nothing when no case was measured (the
	// servers are not there): the failure line says it all.
	if c.Command.Name == "run" && (hasGroups(s) || res.Errors == 0) {
		if err := printSummary(c, s, meta); err != nil {
			return s, err
		}
	}
	if res.Interrupted {
		return s, cli.Exit(fmt.Sprintf("%s: interrupted; %d results kept in %s (%d new); continue with --resume --out %s",
			commandPath(c), res.Done+res.Skipped, out, res.Done, out), exitInterrupted)
	}
	return s, runFailure(c, res, out)
}

// runFailure is the exit error of a run that finished with errors. When
// nothing was measured because the servers are not there, it is the
// server's line itself; otherwise each stopped endpoint gets a line on
// stderr and the error counts what failed and what did not run.
func runFailure(c *cli.Context, res bench.RunResult, out string) error {
	if res.Errors == 0 && res.NotRun == 0 {
		return nil
	}
	name := commandPath(c)
	if n := len(res.Stopped); n > 0 && res.Done == res.Errors && res.NotRun > 0 {
		for _, st := range res.Stopped[:n-1] {
			fmt.Fprintf(c.App.ErrWriter, "toolharness: %s: %v\n", name, st.Err)
		}
		return cli.Exit(fmt.Sprintf("%s: %v; nothing measured, %d case(s) not run (results in %s; continue with --resume)",
			name, res.Stopped[n-1].Err, res.NotRun, out), exitHarnessError)
	}
	for _, st := range res.Stopped {
		fmt.Fprintf(c.App.ErrWriter, "toolharness: %s: %s\n", name, st.Error())
	}
	msg := fmt.Sprintf("%s: %d case(s) failed with errors and are in no rate", name, res.Errors)
	if res.NotRun > 0 {
		msg += fmt.Sprintf(", %d not run", res.NotRun)
	}
	return cli.Exit(msg+fmt.Sprintf(" (results in %s; --resume runs them again)", out), exitHarnessError)
}

func parseEndpoints(c *cli.Context) ([]bench.Endpoint, error) {
	raw := splitList(c.StringSlice("endpoint"))
	if len(raw) == 0 {
		raw = []string{serverHost(c)}
	}
	var eps []bench.Endpoint
	seen := map[string]bool{}
	for _, r := range raw {
		url, n := r, c.Int("concurrency")
		if u, num, ok := strings.Cut(r, "#"); ok {
			v, err := strconv.Atoi(num)
			if err != nil || v < 1 {
				return nil, fmt.Errorf("--endpoint %q: concurrency after # must be a positive number", r)
			}
			url, n = u, v
		}
		url = normalizeHost(url)
		if seen[url] {
			return nil, fmt.Errorf("--endpoint %s given twice", url)
		}
		seen[url] = true
		eps = append(eps, bench.Endpoint{URL: url, Concurrency: max(n, 1)})
	}
	return eps, nil
}

// newAgentDriver also returns the closer of the --show-prompt file.
func newAgentDriver(ctx context.Context, c *cli.Context, eps []bench.Endpoint) (*bench.AgentDriver, func() error, error) {
	d := &bench.AgentDriver{
		Backends: map[string]backend.Backend{}, MaxRetries: c.Int("max-retries"), Constrained: c.Bool("constrained"), Whole: c.Bool("whole"),
		ConstrainMaxString: c.Int("constrained-max-string"),
		Options:            backend.Options{MaxTokens: c.Int("max-tokens"), NumCtx: c.Int("num-ctx")},
	}
	temp := c.Float64("temperature")
	d.Options.Temperature = &temp
	if seed := c.Int("seed"); seed >= 0 {
		d.Options.Seed = &seed
	}
	showing, closeShown, err := promptShowing(c)
	if err != nil {
		return nil, nil, err
	}
	for _, ep := range eps {
		b, err := newBackend(c.String("backend"), ep.URL, c.Duration("stall-timeout"))
		if err != nil {
			closeShown()
			return nil, nil, err
		}
		b = showing(b)
		if d.Constrained && !b.Capabilities().Constrain {
			closeShown()
			return nil, nil, fmt.Errorf("--constrained: the %s backend at %s cannot constrain output", c.String("backend"), ep.URL)
		}
		d.Backends[ep.URL] = b
	}
	if t := c.String("template"); t != "" {
		d.Template = func(context.Context, string, string) (string, error) { return t, nil }
	} else if c.String("chat-template") != "" {
		// One template for every model: load it once, before any case
		// runs, so that a bad file is one error and not one per case.
		var note bytes.Buffer
		fam, err := commandFamily(ctx, c, c.String("backend"), "", "", true, &note)
		if err != nil {
			closeShown()
			return nil, nil, fmt.Errorf("%s: %w", commandPath(c), err)
		}
		// Said when a server is there: with none, the run's one line
		// about it is the failure.
		if anyReachable(ctx, c.String("backend"), eps) {
			c.App.ErrWriter.Write(note.Bytes())
		}
		d.Family = func(context.Context, string, string) (templates.Family, error) { return fam, nil }
	} else {
		kind, errw := c.String("backend"), c.App.ErrWriter
		d.Family = func(ctx context.Context, endpoint, model string) (templates.Family, error) {
			return commandFamily(ctx, c, kind, endpoint, model, true, errw)
		}
	}
	return d, closeShown, nil
}

// anyReachable reports whether any endpoint accepts a connection.
func anyReachable(ctx context.Context, kind string, eps []bench.Endpoint) bool {
	for _, ep := range eps {
		if reach.Probe(ctx, kind, ep.URL, probeTimeout) == nil {
			return true
		}
	}
	return false
}

func benchIsTerminal(w any) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/toolharness/toolharness/backend"
	"github.com/toolharness/toolharness/bench"
	"github.com/toolharness/toolharness/bench/report"
	"github.com/toolharness/toolharness/templates"
	"github.com/urfave/cli/v2"
	"golang.org/x/term"
)

// liveFlags are the flags shared by `bench run` and `compare`.
func liveFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringSliceFlag{Name: "formats", Value: cli.NewStringSlice("auto"), Usage: "tool-call formats, comma-separated (auto = the model family's native one)"},
		&cli.StringSliceFlag{Name: "modes", Value: cli.NewStringSlice("raw"), Usage: "raw (toolharness renders the prompt) and/or chat (the server templates messages)"},
		&cli.StringFlag{Name: "suite", Usage: "suite file (YAML or JSON); default: the built-in suite"},
		&cli.IntFlag{Name: "repeats", Value: 1, Usage: "run each case N times"},
		&cli.Float64Flag{Name: "temperature", Value: 0, Usage: "sampling temperature"},
		&cli.IntFlag{Name: "seed", Value: -1, Usage: "sampling seed (-1: server default)"},
		&cli.IntFlag{Name: "max-tokens", Value: 512, Usage: "generated-token limit per attempt"},
		&cli.IntFlag{Name: "num-ctx", Usage: "context window to request (Ollama num_ctx; 0: backend default)"},
		&cli.IntFlag{Name: "max-retries", Value: 3, Usage: "retries after a parse or validation error, with the error fed back"},
		&cli.BoolFlag{Name: "constrained", Usage: "constrain output to the tools' JSON Schema where the server can (calls only for cases that expect calls)"},
		&cli.IntFlag{Name: "constrained-max-string", Usage: "with --constrained, bound every string without a maxLength to N characters (for weak models)"},
		&cli.StringSliceFlag{Name: "endpoint", Usage: "model server URL, repeatable; URL#N runs N cases there at once (default: --host)"},
		&cli.IntFlag{Name: "concurrency", Value: 1, Usage: "cases at once per endpoint without #N"},
		&cli.StringFlag{Name: "backend", Value: "ollama", Usage: "server kind: ollama or llamacpp"},
		&cli.StringFlag{Name: "template", Usage: "template family for every model (default: each model's own chat template, read from the server)"},
		chatTemplateFlag(),
		&cli.DurationFlag{Name: "stall-timeout", Value: 2 * time.Minute, Usage: "fail a generation that receives nothing for this long"},
		&cli.BoolFlag{Name: "resume", Usage: "continue the results in --out without repeating finished cases"},
		&cli.BoolFlag{Name: "json", Usage: "print the summary as JSON"},
	}
}

func benchRunCommand() *cli.Command {
	return &cli.Command{
		Name:  "run",
		Usage: "run a suite live against model servers",
		UsageText: `toolharness bench run --models a,b [--formats auto,hermes,xml] [--modes raw,chat] [--repeats N]
    [--endpoint URL[#N]]... [--constrained] [--suite FILE] --out DIR [--resume]

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
			_, err := runLive(c, splitList(c.StringSlice("models")), c.String("out"))
			return err
		},
	}
}

// runLive runs the matrix and writes the reports; it returns the summary.
func runLive(c *cli.Context, models []string, out string) (bench.Summary, error) {
	cells, err := bench.ParseCells(models, splitList(c.StringSlice("formats")), splitList(c.StringSlice("modes")))
	if err != nil {
		return bench.Summary{}, err
	}
	suite, err := bench.DefaultSuite()
	if p := c.String("suite"); p != "" {
		suite, err = bench.ReadSuiteFile(p)
	}
	if err != nil {
		return bench.Summary{}, err
	}
	endpoints, err := parseEndpoints(c)
	if err != nil {
		return bench.Summary{}, err
	}
	ctx, stop := signal.NotifyContext(c.Context, os.Interrupt, syscall.SIGTERM)
	defer stop()
	driver, err := newAgentDriver(ctx, c, endpoints)
	if err != nil {
		return bench.Summary{}, err
	}
	printer := &bench.ProgressPrinter{W: c.App.ErrWriter, Terminal: benchIsTerminal(c.App.ErrWriter)}
	res, err := bench.Run(ctx, bench.RunConfig{
		Suite: suite, Cells: cells, Repeats: c.Int("repeats"), Endpoints: endpoints, Driver: driver,
		Out: out, Resume: c.Bool("resume"), Progress: printer.Update,
	})
	if err != nil {
		return bench.Summary{}, err
	}
	s := bench.Summarize(res.Records)
	meta := report.Meta{
		Title:     "toolharness bench run",
		Source:    fmt.Sprintf("suite %s, %d cases × %d cells × %d repeats, %d endpoints", suite.Name, len(suite.Cases), len(cells), max(c.Int("repeats"), 1), len(endpoints)),
		Generated: time.Now().UTC().Format(time.RFC3339),
	}
	if err := report.WriteAll(out, s, meta); err != nil {
		return s, err
	}
	if c.Command.Name == "run" {
		if err := printSummary(c, s, meta); err != nil {
			return s, err
		}
	}
	if res.Interrupted {
		return s, cli.Exit(fmt.Sprintf("bench: interrupted after %d new cases (%d before); results and reports are in %s; continue with --resume",
			res.Done, res.Skipped, out), 130)
	}
	return s, nil
}

func parseEndpoints(c *cli.Context) ([]bench.Endpoint, error) {
	raw := splitList(c.StringSlice("endpoint"))
	if len(raw) == 0 {
		raw = []string{c.String("host")}
	}
	var eps []bench.Endpoint
	seen := map[string]bool{}
	for _, r := range raw {
		url, n := r, c.Int("concurrency")
		if u, num, ok := strings.Cut(r, "#"); ok {
			v, err := strconv.Atoi(num)
			if err != nil || v < 1 {
				return nil, fmt.Errorf("bench: --endpoint %q: concurrency after # must be a positive number", r)
			}
			url, n = u, v
		}
		url = normalizeHost(url)
		if seen[url] {
			return nil, fmt.Errorf("bench: --endpoint %s given twice", url)
		}
		seen[url] = true
		eps = append(eps, bench.Endpoint{URL: url, Concurrency: max(n, 1)})
	}
	return eps, nil
}

func newAgentDriver(ctx context.Context, c *cli.Context, eps []bench.Endpoint) (*bench.AgentDriver, error) {
	d := &bench.AgentDriver{
		Backends: map[string]backend.Backend{}, MaxRetries: c.Int("max-retries"), Constrained: c.Bool("constrained"),
		ConstrainMaxString: c.Int("constrained-max-string"),
		Options:            backend.Options{MaxTokens: c.Int("max-tokens"), NumCtx: c.Int("num-ctx")},
	}
	temp := c.Float64("temperature")
	d.Options.Temperature = &temp
	if seed := c.Int("seed"); seed >= 0 {
		d.Options.Seed = &seed
	}
	for _, ep := range eps {
		b, err := newBackend(c.String("backend"), ep.URL, c.Duration("stall-timeout"))
		if err != nil {
			return nil, err
		}
		if d.Constrained && !b.Capabilities().Constrain {
			return nil, fmt.Errorf("bench: --constrained: the %s backend at %s cannot constrain output", c.String("backend"), ep.URL)
		}
		d.Backends[ep.URL] = b
	}
	kind, errw := c.String("backend"), c.App.ErrWriter
	d.Family = func(ctx context.Context, endpoint, model string) (templates.Family, error) {
		return commandFamily(ctx, c, kind, endpoint, model, true, errw)
	}
	return d, nil
}

func benchIsTerminal(w any) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

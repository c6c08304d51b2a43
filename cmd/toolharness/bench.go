package main

import (
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/toolharness/toolharness/bench"
	"github.com/toolharness/toolharness/bench/report"
	"github.com/toolharness/toolharness/chat"
	"github.com/toolharness/toolharness/parse"
	"github.com/urfave/cli/v2"
)

// defaultCorpus is the real recorded corpus shipped in the repository, so
// `toolharness bench corpus` works on a fresh clone with no model server.
const defaultCorpus = "testdata/bench/corpus.jsonl"

func benchCommand() *cli.Command {
	return &cli.Command{
		Name:  "bench",
		Usage: "benchmark parse-failure and retry rates (live, or on recorded outputs)",
		Description: `Measures how often tool calls fail to parse (strictly and leniently), are schema-invalid,
pick the wrong tool, are missed or made when none was wanted, and how many retries fix them,
with 95% Wilson intervals on every rate.

Examples:
   toolharness bench corpus --out /tmp/report
   toolharness bench run --models qwen2.5:7b --formats hermes,xml --repeats 3 --out /tmp/run
   toolharness bench report /tmp/run`,
		Subcommands: []*cli.Command{benchRunCommand(), benchCorpusCommand(), benchReportCommand(), benchImportCommand()},
	}
}

func benchCorpusCommand() *cli.Command {
	return &cli.Command{
		Name:  "corpus",
		Usage: "score recorded raw outputs (no model server needed)",
		UsageText: `toolharness bench corpus [--format F|auto] [--in records.jsonl] [--tools tools.json] [--out DIR] [--json]

Each input line is a parse --jsonl record: {"id", "raw", "tools"?} plus optional "model",
"expected" ([{"name", "args"?}]) and "expect_no_call". Results are grouped by model.

Example:
   toolharness bench corpus --in testdata/bench/corpus.jsonl --out /tmp/report`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "format", Value: "auto", Usage: "tool-call format of the outputs (" + strings.Join(parse.Formats(), ", ") + ")"},
			&cli.StringFlag{Name: "in", Value: defaultCorpus, Usage: "records file (JSON lines); - reads stdin"},
			&cli.StringFlag{Name: "tools", Usage: "tool catalog for records without their own tools"},
			&cli.StringFlag{Name: "model", Value: "unknown", Usage: "model name for records without one"},
			&cli.StringFlag{Name: "out", Usage: "write results.jsonl, summary.{json,csv,md} and report.html here"},
			&cli.BoolFlag{Name: "no-validate", Usage: "skip JSON Schema validation of the arguments"},
			&cli.BoolFlag{Name: "json", Usage: "print the summary as JSON instead of the table"},
		},
		Action: func(c *cli.Context) error {
			parser, err := bench.NewParser(c.String("format"))
			if err != nil {
				return err
			}
			opts := bench.CorpusOptions{Format: c.String("format"), Parser: parser, DefaultModel: c.String("model")}
			if !c.Bool("no-validate") {
				opts.Validator = bench.NewRegistryValidator()
			}
			if p := c.String("tools"); p != "" {
				if opts.Tools, err = chat.ReadToolsFile(p); err != nil {
					return err
				}
			}
			in := c.App.Reader
			if path := c.String("in"); path != "-" {
				f, err := os.Open(path)
				if err != nil {
					if path == defaultCorpus {
						return fmt.Errorf("bench: %w (run from the repository root, or give --in)", err)
					}
					return fmt.Errorf("bench: %w", err)
				}
				defer f.Close()
				in = f
			}
			recs, err := bench.ScoreCorpus(in, opts)
			if err != nil {
				return err
			}
			meta := report.Meta{
				Title:     "toolharness bench corpus",
				Source:    fmt.Sprintf("%d recorded outputs from %s, format %s", len(recs), c.String("in"), c.String("format")),
				Generated: time.Now().UTC().Format(time.RFC3339),
			}
			return finishBench(c, recs, meta)
		},
	}
}

// finishBench writes results and reports when --out is given and prints
// the table (or JSON).
func finishBench(c *cli.Context, recs []bench.Record, meta report.Meta) error {
	s := bench.Summarize(recs)
	if dir := c.String("out"); dir != "" {
		if err := bench.WriteResults(dir, recs); err != nil {
			return err
		}
		if err := report.WriteAll(dir, s, meta); err != nil {
			return err
		}
	}
	return printSummary(c, s, meta)
}

func printSummary(c *cli.Context, s bench.Summary, meta report.Meta) error {
	if c.Bool("json") {
		return report.JSON(c.App.Writer, s, meta)
	}
	if err := report.Table(c.App.Writer, s); err != nil {
		return err
	}
	if dir := c.String("out"); dir != "" {
		fmt.Fprintf(c.App.ErrWriter, "wrote %s/{%s,%s,%s,%s,%s}\n", dir, bench.ResultsFile,
			report.SummaryJSON, report.SummaryCSV, report.SummaryMD, report.ReportHTML)
	}
	return nil
}

func benchReportCommand() *cli.Command {
	return &cli.Command{
		Name:  "report",
		Usage: "rebuild summary.{json,csv,md} and report.html from DIR/results.jsonl",
		UsageText: `toolharness bench report [--json] DIR

Example:
   toolharness bench report /tmp/run`,
		Flags: []cli.Flag{&cli.BoolFlag{Name: "json", Usage: "print the summary as JSON instead of the table"}},
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return fmt.Errorf("bench report: give exactly one directory")
			}
			dir := c.Args().First()
			recs, err := bench.ReadResults(dir)
			if err != nil {
				return err
			}
			s := bench.Summarize(recs)
			meta := report.Meta{
				Title:     "toolharness benchmark",
				Source:    fmt.Sprintf("%d records from %s", len(recs), dir),
				Generated: time.Now().UTC().Format(time.RFC3339),
			}
			if err := report.WriteAll(dir, s, meta); err != nil {
				return err
			}
			return printSummary(c, s, meta)
		},
	}
}

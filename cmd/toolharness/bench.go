package main

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/toolharness/toolharness/bench"
	"github.com/toolharness/toolharness/bench/report"
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
		UsageText: `toolharness bench corpus [--format F|auto] [--in records.jsonl|-] [--tools tools.json] [--out DIR] [--json]

Each input line is a parse --jsonl record: {"id", "raw", "tools"?} plus optional "model",
"expected" ([{"name", "args"?}]) and "expect_no_call". Results are grouped by model.
Unreadable lines are counted, reported on stderr and recorded as errors (in no rate); an input
with no readable line fails. Records with no catalog of their own and no --tools are reported:
their calls name unknown tools and count as schema-invalid.

Example:
   toolharness bench corpus --in testdata/bench/corpus.jsonl --out /tmp/report`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "format", Value: "auto", Usage: "tool-call format of the outputs (" + strings.Join(parse.Formats(), ", ") + ")"},
			&cli.StringFlag{Name: "in", Value: defaultCorpus, Usage: "records file (JSON lines); - reads stdin"},
			&cli.StringSliceFlag{Name: "tools", Usage: "tool catalog `FILE` (or builtin:fs) for records without their own tools"},
			&cli.StringFlag{Name: "model", Value: "unknown", Usage: "model name for records without one"},
			&cli.StringFlag{Name: "out", Usage: "write results.jsonl, summary.{json,csv,md} and report.html here"},
			&cli.BoolFlag{Name: "no-validate", Usage: "skip JSON Schema validation of the arguments"},
			&cli.BoolFlag{Name: "json", Usage: "print the summary as JSON instead of the table"},
		},
		Action: func(c *cli.Context) error {
			if err := checkChoice(c, "format", c.String("format"), parse.Formats()); err != nil {
				return err
			}
			parser, err := bench.NewParser(c.String("format"))
			if err != nil {
				return err
			}
			opts := bench.CorpusOptions{Format: c.String("format"), Parser: parser, DefaultModel: c.String("model")}
			if !c.Bool("no-validate") {
				opts.Validator = bench.NewRegistryValidator()
			}
			path := c.String("in")
			in, closeIn, err := inputArg(c, path)
			if err != nil {
				if path == defaultCorpus && !c.IsSet("in") {
					return fmt.Errorf("%w (run from the repository root, or give --in)", err)
				}
				return err
			}
			defer closeIn()
			if opts.Tools, err = localToolsFlag(c); err != nil {
				return err
			}
			hash := sha256.New()
			res, err := bench.ScoreCorpus(io.TeeReader(in, hash), opts)
			if errors.Is(err, bench.ErrNoRecords) {
				// The sentinel's words are for programs; the line says it.
				return fmt.Errorf("%s: %s", displayName(path), userCause(err))
			}
			if err != nil {
				return fmt.Errorf("%s: %w", displayName(path), err)
			}
			reportCorpusInput(c, path, res)
			meta := report.Meta{
				Title:     "toolharness bench corpus",
				Source:    fmt.Sprintf("%d recorded outputs from %s, format %s", len(res.Records), displayName(path), c.String("format")),
				Generated: time.Now().UTC().Format(time.RFC3339),
				Manifest:  newManifest(c),
			}
			meta.Manifest.Input = &bench.FileID{Path: displayName(path), SHA256: hex.EncodeToString(hash.Sum(nil))}
			meta.Manifest.Formats = []string{c.String("format")}
			return finishBench(c, res.Records, meta)
		},
	}
}

// reportCorpusInput says on stderr what of the input could not be scored
// as asked: unreadable lines (the first few by number) and records scored
// without any catalog.
func reportCorpusInput(c *cli.Context, path string, res bench.CorpusResult) {
	w := c.App.ErrWriter
	if n := len(res.Unreadable); n > 0 {
		const shown = 3
		fmt.Fprintf(w, "toolharness: %s: %d of %d line(s) unreadable, recorded as errors:", displayName(path), n, len(res.Records))
		for i, e := range res.Unreadable {
			if i == shown {
				fmt.Fprintf(w, " …")
				break
			}
			fmt.Fprintf(w, " %s;", e.Message)
		}
		fmt.Fprintln(w)
	}
	if res.NoCatalog > 0 {
		fmt.Fprintf(w, "toolharness: %d record(s) have no tools and no --tools was given: every call they make names an unknown tool and counts as schema-invalid\n", res.NoCatalog)
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
		if meta.Manifest != nil {
			if err := bench.WriteManifest(dir, meta.Manifest); err != nil {
				return err
			}
		}
	}
	return printSummary(c, s, meta)
}

func printSummary(c *cli.Context, s bench.Summary, meta report.Meta) error {
	if c.Bool("json") {
		return report.JSON(c.App.Writer, s, meta)
	}
	if err := report.Table(c.App.Writer, s, meta); err != nil {
		return err
	}
	if dir := c.String("out"); dir != "" {
		fmt.Fprintf(c.App.ErrWriter, "wrote %s/{%s,%s,%s,%s,%s,%s}\n", dir, bench.ResultsFile, bench.ManifestFile,
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
		ArgsUsage: "DIR",
		Flags:     []cli.Flag{&cli.BoolFlag{Name: "json", Usage: "print the summary as JSON instead of the table"}},
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return usageError(c, "give exactly one results directory")
			}
			dir := c.Args().First()
			recs, err := readResultsArg("", dir)
			if err != nil {
				return err
			}
			s := bench.Summarize(recs)
			meta := report.Meta{
				Title:     "toolharness benchmark",
				Source:    fmt.Sprintf("%d records from %s", len(recs), dir),
				Generated: time.Now().UTC().Format(time.RFC3339),
			}
			if meta.Manifest, err = bench.ReadManifest(dir); err != nil {
				return err
			}
			if err := report.WriteAll(dir, s, meta); err != nil {
				return err
			}
			return printSummary(c, s, meta)
		},
	}
}

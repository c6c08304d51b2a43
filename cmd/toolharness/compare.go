package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/toolharness/toolharness/bench"
	"github.com/toolharness/toolharness/bench/report"
	"github.com/urfave/cli/v2"
)

func compareCommand() *cli.Command {
	return &cli.Command{
		Name:  "compare",
		Usage: "compare prompt formats on one model: formats side by side, with intervals and a verdict",
		UsageText: `toolharness compare --model M --formats a,b,c [--modes raw[,chat][,server]] [--repeats N] [--out DIR] [--json]
toolharness compare --model M --from DIR        (compare from an earlier bench run's results)

The verdict of each pair of formats comes from a two-sided two-proportion z-test at 5% on the
first-attempt lenient parse-failure rate and on first-try success. With --modes …,server every
format is also compared with the server's own tool calling (tools in the API's tools field, the
server's parser).

Example:
   toolharness compare --model qwen2.5:7b --formats hermes,xml,json --repeats 3`,
		Flags: append(liveFlags(),
			&cli.StringFlag{Name: "model", Aliases: []string{"m"}, Usage: "the model `NAME`", Required: true},
			&cli.StringFlag{Name: "out", Usage: "results directory (default: a new temporary directory)"},
			&cli.StringFlag{Name: "from", Usage: "read results from this directory instead of running"},
		),
		Action: func(c *cli.Context) error {
			model := c.String("model")
			if from := c.String("from"); from != "" {
				return compareFrom(c, from, model)
			}
			lr, err := checkLive(c, []string{model})
			if err != nil {
				return err
			}
			out := c.String("out")
			if out == "" {
				dir, err := os.MkdirTemp("", "toolharness-compare-")
				if err != nil {
					return fmt.Errorf("compare: %w", err)
				}
				out = dir
			}
			s, runErr := runLive(c, lr, out)
			meta := report.Meta{Title: "toolharness compare " + model}
			if meta.Manifest, err = bench.ReadManifest(out); err != nil {
				return err
			}
			if runErr != nil && !hasGroups(s) {
				return runErr
			}
			if runErr != nil {
				// The table of what was measured, then the failure.
				if err := report.CompareTable(c.App.Writer, s, model, meta); err != nil {
					return err
				}
				return runErr
			}
			fmt.Fprintf(c.App.ErrWriter, "results and report.html in %s\n", out)
			return printCompare(c, s, model, meta)
		},
	}
}

// readResultsArg reads the results of an earlier run, a results directory
// or its results.jsonl (what names it: "--from ", or "" for an argument);
// a missing one is the path and the cause, not the open call that failed.
func readResultsArg(what, path string) ([]bench.Record, error) {
	recs, err := bench.ReadResults(path)
	var pe *fs.PathError
	if !errors.As(err, &pe) {
		return recs, err
	}
	if st, serr := os.Stat(path); serr == nil && st.IsDir() && errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s%s has no %s: give the --out directory of a bench run or compare", what, path, bench.ResultsFile)
	}
	return nil, fmt.Errorf("%s%s: %w", what, path, pe.Err)
}

// compareFrom compares the formats of an earlier run's results, with the
// manifest that run wrote (none for results made before manifests).
func compareFrom(c *cli.Context, from, model string) error {
	recs, err := readResultsArg("--from ", from)
	if err != nil {
		return err
	}
	meta := report.Meta{Title: "toolharness compare " + model, Source: fmt.Sprintf("%d records from %s", len(recs), from)}
	dir := from
	if st, err := os.Stat(from); err == nil && !st.IsDir() {
		dir = filepath.Dir(from)
	}
	if meta.Manifest, err = bench.ReadManifest(dir); err != nil {
		return err
	}
	s := bench.Summarize(recs)
	var miss *report.NoModelError
	if err := printCompare(c, s, model, meta); errors.As(err, &miss) {
		have := "no model"
		if len(miss.Models) > 0 {
			have = strings.Join(miss.Models, ", ")
		}
		return fmt.Errorf("compare: %s has no results for model %q; it has %s", from, model, have)
	} else if err != nil {
		return err
	}
	return nil
}

func printCompare(c *cli.Context, s bench.Summary, model string, meta report.Meta) error {
	if c.Bool("json") {
		var miss *report.NoModelError
		if err := report.CompareTable(io.Discard, s, model, meta); errors.As(err, &miss) {
			return err
		}
		return report.JSON(c.App.Writer, s, meta)
	}
	return report.CompareTable(c.App.Writer, s, model, meta)
}

// hasGroups reports whether a summary holds any measured case (a case
// that did not fail with an error).
func hasGroups(s bench.Summary) bool {
	for _, g := range s.Groups {
		if g.Cases > g.Errors {
			return true
		}
	}
	return false
}

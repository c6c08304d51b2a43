package main

import (
	"fmt"
	"os"

	"github.com/toolharness/toolharness/bench"
	"github.com/toolharness/toolharness/bench/report"
	"github.com/urfave/cli/v2"
)

func compareCommand() *cli.Command {
	return &cli.Command{
		Name:  "compare",
		Usage: "compare prompt formats on one model: formats side by side, with intervals and a verdict",
		UsageText: `toolharness compare --model M --formats a,b,c [--modes raw] [--repeats N] [--out DIR] [--json]
toolharness compare --model M --from DIR        (compare from an earlier bench run's results)

The verdict of each pair of formats comes from a two-sided two-proportion z-test at 5% on the
first-attempt lenient parse-failure rate and on first-try success.

Example:
   toolharness compare --model qwen2.5:7b --formats hermes,xml,json --repeats 3`,
		Flags: append(liveFlags(),
			&cli.StringFlag{Name: "model", Aliases: []string{"m"}, Usage: "the model `NAME`", Required: true},
			&cli.StringFlag{Name: "out", Usage: "results directory (default: a new temporary directory)"},
			&cli.StringFlag{Name: "from", Usage: "read results from this directory instead of running"},
		),
		Action: func(c *cli.Context) error {
			model := c.String("model")
			var s bench.Summary
			if from := c.String("from"); from != "" {
				recs, err := bench.ReadResults(from)
				if err != nil {
					return err
				}
				s = bench.Summarize(recs)
			} else {
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
				var runErr error
				s, runErr = runLive(c, lr, out)
				if runErr != nil && !hasGroups(s) {
					return runErr
				}
				if runErr != nil {
					// The table of what was measured, then the failure.
					if err := report.CompareTable(c.App.Writer, s, model); err != nil {
						return err
					}
					return runErr
				}
				fmt.Fprintf(c.App.ErrWriter, "results and report.html in %s\n", out)
			}
			if c.Bool("json") {
				return report.JSON(c.App.Writer, s, report.Meta{Title: "toolharness compare " + model})
			}
			return report.CompareTable(c.App.Writer, s, model)
		},
	}
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

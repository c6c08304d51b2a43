package main

import (
	"fmt"

	"github.com/toolharness/toolharness/bench/bfcl"
	"github.com/toolharness/toolharness/chat"
	"github.com/urfave/cli/v2"
)

func benchImportCommand() *cli.Command {
	return &cli.Command{
		Name:  "import-bfcl",
		Usage: "convert BFCL v1 questions into a suite file (JSON) for bench run --suite",
		UsageText: `toolharness bench import-bfcl [--name N] QUESTIONS.jsonl|- > suite.json

Example:
   toolharness bench import-bfcl testdata/bench/bfcl_v1_sample.jsonl > /tmp/bfcl.json
   head -20 questions.jsonl | toolharness bench import-bfcl - > /tmp/bfcl.json`,
		ArgsUsage: "QUESTIONS.jsonl",
		Flags:     []cli.Flag{&cli.StringFlag{Name: "name", Value: "bfcl", Usage: "suite name"}},
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return usageError(c, "give one questions file (- reads stdin)")
			}
			in, closeIn, err := inputArg(c, c.Args().First())
			if err != nil {
				return err
			}
			defer closeIn()
			res, err := bfcl.Import(in, c.String("name"))
			if err != nil {
				return err
			}
			for _, s := range res.Skipped {
				fmt.Fprintf(c.App.ErrWriter, "skipped %s: %s\n", s.ID, s.Reason)
			}
			for _, n := range res.Notes {
				fmt.Fprintf(c.App.ErrWriter, "note %s: %s\n", n.ID, n.Reason)
			}
			data, err := chat.Marshal(res.Suite)
			if err != nil {
				return err
			}
			fmt.Fprintf(c.App.ErrWriter, "%d cases\n", len(res.Suite.Cases))
			_, err = c.App.Writer.Write(append(data, '\n'))
			return err
		},
	}
}

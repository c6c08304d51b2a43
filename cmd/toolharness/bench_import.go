package main

import (
	"fmt"
	"os"

	"github.com/toolharness/toolharness/bench/bfcl"
	"github.com/toolharness/toolharness/chat"
	"github.com/urfave/cli/v2"
)

func benchImportCommand() *cli.Command {
	return &cli.Command{
		Name:  "import-bfcl",
		Usage: "convert BFCL v1 questions into a suite file (JSON) for bench run --suite",
		UsageText: `toolharness bench import-bfcl [--name N] QUESTIONS.jsonl > suite.json

Example:
   toolharness bench import-bfcl testdata/bench/bfcl_v1_sample.jsonl > /tmp/bfcl.json`,
		Flags: []cli.Flag{&cli.StringFlag{Name: "name", Value: "bfcl", Usage: "suite name"}},
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return fmt.Errorf("bench import-bfcl: give one questions file")
			}
			f, err := os.Open(c.Args().First())
			if err != nil {
				return fmt.Errorf("bench: %w", err)
			}
			defer f.Close()
			res, err := bfcl.Import(f, c.String("name"))
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

package main

import (
	"errors"

	"github.com/urfave/cli/v2"
)

func runCommand() *cli.Command {
	return &cli.Command{
		Name:  "run",
		Usage: "run one task to completion with a local model",
		Action: func(*cli.Context) error {
			return errors.New("run: not implemented yet")
		},
	}
}

package main

import (
	"errors"

	"github.com/urfave/cli/v2"
)

func compareCommand() *cli.Command {
	return &cli.Command{
		Name:  "compare",
		Usage: "compare prompt formats on one model",
		Action: func(*cli.Context) error {
			return errors.New("compare: not implemented yet")
		},
	}
}

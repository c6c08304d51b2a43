package main

import (
	"errors"

	"github.com/urfave/cli/v2"
)

func benchCommand() *cli.Command {
	return &cli.Command{
		Name:  "bench",
		Usage: "benchmark parse-failure and retry rates",
		Action: func(*cli.Context) error {
			return errors.New("bench: not implemented yet")
		},
	}
}

package main

import (
	"errors"

	"github.com/urfave/cli/v2"
)

func parseCommand() *cli.Command {
	return &cli.Command{
		Name:  "parse",
		Usage: "parse tool calls out of raw model text",
		Action: func(*cli.Context) error {
			return errors.New("parse: not implemented yet")
		},
	}
}

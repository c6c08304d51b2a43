package main

import (
	"errors"

	"github.com/urfave/cli/v2"
)

func toolsCommand() *cli.Command {
	return &cli.Command{
		Name:  "tools",
		Usage: "list, lint and check tool catalogs",
		Action: func(*cli.Context) error {
			return errors.New("tools: not implemented yet")
		},
	}
}

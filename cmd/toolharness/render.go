package main

import (
	"errors"

	"github.com/urfave/cli/v2"
)

func renderCommand() *cli.Command {
	return &cli.Command{
		Name:  "render",
		Usage: "print the exact prompt a template renders",
		Action: func(*cli.Context) error {
			return errors.New("render: not implemented yet")
		},
	}
}

package main

import (
	"errors"

	"github.com/urfave/cli/v2"
)

func chatCommand() *cli.Command {
	return &cli.Command{
		Name:  "chat",
		Usage: "interactive tool-using chat session",
		Action: func(*cli.Context) error {
			return errors.New("chat: not implemented yet")
		},
	}
}

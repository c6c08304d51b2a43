package main

import (
	"errors"

	"github.com/urfave/cli/v2"
)

func templatesCommand() *cli.Command {
	return &cli.Command{
		Name:  "templates",
		Usage: "list, show and detect chat-template families",
		Action: func(*cli.Context) error {
			return errors.New("templates: not implemented yet")
		},
	}
}

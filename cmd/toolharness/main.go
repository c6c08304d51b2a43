// Command toolharness drives prompted tool use with local LLMs: it renders
// tool catalogs into prompts, parses tool calls out of raw model text,
// validates and runs them, and benchmarks how well models and prompt
// formats do at it.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/urfave/cli/v2"
)

func main() {
	os.Exit(run(os.Args, os.Stdin, os.Stdout, os.Stderr))
}

// run executes the CLI and returns the exit status; errors are printed as
// one line on stderr.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	app := newApp(stdin, stdout, stderr)
	err := app.Run(args)
	if err == nil {
		return 0
	}
	fmt.Fprintf(stderr, "toolharness: %v\n", err)
	var ec cli.ExitCoder
	if errors.As(err, &ec) && ec.ExitCode() != 0 {
		return ec.ExitCode()
	}
	return 1
}

func newApp(stdin io.Reader, stdout, stderr io.Writer) *cli.App {
	app := &cli.App{
		Name:  "toolharness",
		Usage: "prompted tool use with local LLMs: render, parse, validate, run, benchmark",
		Description: `toolharness makes the tool-use contract between a harness and a local model explicit:
the tool catalog is text in the prompt, calls are parsed from the model's raw text,
validated against JSON Schema and run, and results go back until the model answers.

Examples:
   toolharness bench corpus --out /tmp/report
   toolharness parse --format hermes < raw.txt
   toolharness run --model qwen2.5:7b --tools builtin:fs "summarise README.md"`,
		Version:         version,
		Reader:          stdin,
		Writer:          stdout,
		ErrWriter:       stderr,
		HideHelpCommand: true,
		Flags:           globalFlags(),
		// Errors are printed once, by run.
		ExitErrHandler: func(*cli.Context, error) {},
		Commands: []*cli.Command{
			runCommand(),
			chatCommand(),
			serveCommand(),
			renderCommand(),
			parseCommand(),
			templatesCommand(),
			toolsCommand(),
			benchCommand(),
			compareCommand(),
			versionCommand(),
		},
		OnUsageError: onUsageError,
		Action:       unknownCommand,
	}
	withConventions(app.Commands)
	return app
}

// unknownCommand is the app's action: the help when called bare, one line
// for a command that does not exist.
func unknownCommand(c *cli.Context) error {
	if c.NArg() == 0 {
		return cli.ShowAppHelp(c)
	}
	return usageError(c, "unknown command %q", c.Args().First())
}

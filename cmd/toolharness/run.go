package main

import (
	"context"
	"errors"
	"fmt"
	"os/signal"
	"strings"
	"syscall"

	"github.com/urfave/cli/v2"

	"github.com/toolharness/toolharness/agent"
)

// Exit statuses of run and chat.
const (
	exitHarnessError = 1 // a fault, a bad flag, cancellation
	exitLimit        = 2 // run: the task hit a limit (max turns, retries)
)

func runCommand() *cli.Command {
	return &cli.Command{
		Name:      "run",
		Usage:     "run one task to completion with a local model",
		ArgsUsage: `"task"`,
		Description: `Runs one task: the model calls tools until it answers. The model's text and each
call (● name(args) and a one-line result) stream to stderr, or to the terminal;
the final answer goes to stdout. Exit status: 0 answered, 2 a limit was hit
(--max-turns, --max-retries), 1 a harness error (server fault, bad flags).

Examples:
   toolharness run --model qwen2.5:7b --tools builtin:fs "summarise README.md"
   toolharness run --model qwen2.5:7b --tools builtin:fs,builtin:bash --yes --trace run.jsonl "count the Go files"
   toolharness run --backend openai --host http://127.0.0.1:8000/v1 --model Qwen/Qwen2.5-7B-Instruct --mode chat --tools builtin:fs "list the docs"`,
		Flags: agentFlags(),
		Action: func(c *cli.Context) error {
			task := strings.TrimSpace(strings.Join(c.Args().Slice(), " "))
			if task == "" {
				return cli.Exit(`run: no task given; usage: toolharness run [flags] "task"`, exitHarnessError)
			}
			ctx, stop := signal.NotifyContext(c.Context, syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			return runTask(ctx, c, task)
		},
	}
}

func runTask(ctx context.Context, c *cli.Context, task string) error {
	stdout, stderr := c.App.Writer, c.App.ErrWriter
	live := isTerminal(stdout)
	out := stderr
	if live {
		out = stdout
	}
	con := newConsole(out)
	in := newLineReader(c.App.Reader)
	s, err := buildSession(ctx, c, con.hooks(), in, stderr)
	if err != nil {
		return cli.Exit("run: "+err.Error(), exitHarnessError)
	}
	defer s.Close()
	ex, err := s.Send(ctx, task)
	con.endExchange()
	if err != nil && !errors.Is(err, agent.ErrLimit) {
		return cli.Exit("run: "+err.Error(), exitHarnessError)
	}
	if ex.Answer != "" && !live {
		fmt.Fprintln(stdout, ex.Answer)
	}
	if err != nil {
		return cli.Exit("run: "+err.Error(), exitLimit)
	}
	return nil
}

package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/toolharness/toolharness/agent"
)

// Exit statuses of run and chat.
const (
	exitHarnessError = 1 // a fault, a bad flag, cancellation
	exitLimit        = 2 // run: the task hit a limit (max turns, retries, a reply cut by the token limit)
)

func runCommand() *cli.Command {
	return &cli.Command{
		Name:      "run",
		Usage:     "run one task to completion with a local model",
		ArgsUsage: `"task"`,
		Description: `Runs one task: the model calls tools until it answers. The model's text and each
call (● name(args) and a one-line result) stream to stderr, or to the terminal;
the final answer goes to stdout. The answer is the reply's content: a thinking
model's reasoning (a leading <think> block, gpt-oss's analysis channel) streams
between "Thinking..." and "...done thinking." (faint on a terminal; not at all
with --hide-reasoning), and the markup around it is never shown. Exit status:
0 answered, 2 a limit was hit (--max-turns, --max-retries, a reply cut by
--max-tokens: stop "length"), 1 a harness error
(server fault, bad flags). --json prints one JSON object on stdout instead of
the answer: message, answer, reasoning (when the model reasoned), stop, calls,
retries, error. --trace keeps every byte the model wrote. The task may be given
as "-" to read it from stdin.

Examples:
   toolharness run --model qwen2.5:7b --tools builtin:fs "summarise README.md"
   toolharness run --host http://gpu1:11434 --model qwen2.5:7b --tools builtin:fs --json "list the docs"
   toolharness run --model qwen2.5:7b --tools builtin:fs,builtin:bash --yes --trace run.jsonl "count the Go files"
   toolharness run --backend openai --host http://127.0.0.1:8000/v1 --model Qwen/Qwen2.5-7B-Instruct --mode chat --tools builtin:fs "list the docs"`,
		Flags: agentFlags(),
		Action: func(c *cli.Context) error {
			task := strings.TrimSpace(strings.Join(c.Args().Slice(), " "))
			if task == "-" {
				data, err := readFileArg(c, "the task", "-")
				if err != nil {
					return err
				}
				task = strings.TrimSpace(string(data))
			}
			if task == "" {
				return usageError(c, `no task given: toolharness run [flags] "task"`)
			}
			in := watchInterrupts(c.App.ErrWriter, "run")
			defer in.stop()
			ctx, end := in.work(c.Context)
			err := runTask(ctx, c, task)
			if end() {
				return interruptedRun(c, err)
			}
			return err
		},
	}
}

func runTask(ctx context.Context, c *cli.Context, task string) error {
	stdout, stderr := c.App.Writer, c.App.ErrWriter
	asJSON := c.Bool("json")
	live := isTerminal(stdout) && !asJSON
	out := stderr
	if live {
		out = stdout
	}
	con := agentConsole(c, out, live)
	in := newLineReader(c.App.Reader)
	s, err := buildSession(ctx, c, con.hooks(), in, stderr)
	if err != nil {
		return commandError(c, err)
	}
	defer s.Close()
	ex, err := s.Send(ctx, task)
	con.endExchange()
	if err != nil && ctx.Err() != nil {
		err = &interruptedError{results: ex.Calls, err: err}
	}
	if asJSON {
		if werr := writeRecord(c, task, ex, err); werr != nil {
			return werr
		}
	}
	var ie *interruptedError
	if errors.As(err, &ie) {
		return err
	}
	if err != nil && !errors.Is(err, agent.ErrLimit) {
		return commandError(c, err)
	}
	if ex.Answer != "" && !live && !asJSON {
		fmt.Fprintln(stdout, ex.Answer)
	}
	if err != nil {
		return cli.Exit("run: "+explainError(c, err), exitLimit)
	}
	return nil
}

// interruptedRun is the line of a run stopped by Ctrl-C: what the session
// kept (the tool results, in the trace when there is one).
func interruptedRun(c *cli.Context, err error) error {
	kept := 0
	var ie *interruptedError
	if errors.As(err, &ie) {
		kept = ie.results
	}
	msg := fmt.Sprintf("run: interrupted; %d results kept", kept)
	if f := c.String("trace"); f != "" {
		msg += " in " + f
	}
	return cli.Exit(msg, exitInterrupted)
}

// interruptedError is a session stopped by Ctrl-C, with what it kept.
type interruptedError struct {
	results int // tool results the exchange got before the interrupt
	err     error
}

func (e *interruptedError) Error() string { return "interrupted" }
func (e *interruptedError) Unwrap() error { return e.err }

// commandError is err as the one line a command exits with: a usage error
// as it is, a server that is not there as "cannot reach …", anything else
// prefixed by the command.
func commandError(c *cli.Context, err error) error {
	var ec cli.ExitCoder
	if errors.As(err, &ec) {
		return err
	}
	return cli.Exit(commandPath(c)+": "+explainError(c, err), exitHarnessError)
}

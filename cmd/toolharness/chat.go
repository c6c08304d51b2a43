package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/toolharness/toolharness/agent"
	"github.com/toolharness/toolharness/internal/reach"
)

func chatCommand() *cli.Command {
	return &cli.Command{
		Name:  "chat",
		Usage: "interactive tool-using chat session",
		Description: `An interactive session. On a terminal it prompts for each message; otherwise it
reads one user message per line from stdin, so sessions can be scripted. Each
answer is printed on stdout (streamed live on a terminal; a thinking model's
reasoning is shown apart from it, as run shows it); calls and notices go to
stderr. "/name args" runs a skill from --skills. A message whose exchange hits
a limit ends with a notice and the session goes on; a server that can no
longer be reached ends the session. Exit status 0 means every message was
handled without a harness error.

Examples:
   toolharness chat --model qwen2.5:7b --tools builtin:fs
   printf 'list the files\nread go.mod\n' | toolharness chat --model qwen2.5:7b --tools builtin:fs --trace chat.jsonl
   printf 'list the files\n' | toolharness chat --model qwen2.5:7b --tools builtin:fs --json`,
		Flags: agentFlags(),
		Action: func(c *cli.Context) error {
			in := watchInterrupts(c.App.ErrWriter, "chat")
			defer in.stop()
			return chatLoop(c, in)
		},
	}
}

// chatLoop runs the session. Ctrl-C during a message cancels that
// message's generation and the prompt comes back; at the prompt it ends
// the session (status 130).
func chatLoop(c *cli.Context, sig *interrupts) error {
	stdout, stderr := c.App.Writer, c.App.ErrWriter
	in := newLineReader(c.App.Reader)
	live := in.tty && isTerminal(stdout)
	out := stderr
	if live {
		out = stdout
	}
	con := agentConsole(c, out, live)
	ctx, end := sig.work(c.Context)
	s, err := buildSession(ctx, c, con.hooks(), in, stderr)
	if end() {
		return cli.Exit("chat: interrupted before the session started", exitInterrupted)
	}
	if err != nil {
		return commandError(c, err)
	}
	defer s.Close()
	failed := 0
	for n := 1; ; n++ {
		sig.setIdle(fmt.Sprintf("chat: interrupted at the prompt; %d message(s) handled", n-1))
		if live {
			fmt.Fprint(stdout, "> ")
		}
		line, ok := in.line()
		if !ok {
			break
		}
		msg := strings.TrimSpace(line)
		if msg == "" {
			n--
			continue
		}
		ctx, end := sig.work(c.Context)
		ex, err := s.Send(ctx, msg)
		interrupted := end()
		con.endExchange()
		if interrupted {
			err = &interruptedError{results: ex.Calls, err: err}
		}
		if c.Bool("json") {
			if werr := writeRecord(c, msg, ex, err); werr != nil {
				return werr
			}
		}
		if interrupted {
			fmt.Fprintf(stderr, "toolharness: message %d: interrupted; %d results kept, back to the prompt\n", n, ex.Calls)
			continue
		}
		switch {
		case err == nil:
		case errors.Is(err, agent.ErrLimit):
			fmt.Fprintf(stderr, "toolharness: message %d: %s; the session goes on\n", n, explainError(c, err))
		case reach.FromError(err, c.String("backend"), serverHost(c)) != nil:
			// Every later message would fail the same way.
			return cli.Exit(fmt.Sprintf("chat: message %d: %s; the session ends", n, explainError(c, err)), exitHarnessError)
		default:
			failed++
			fmt.Fprintf(stderr, "toolharness: message %d: %s\n", n, explainError(c, err))
		}
		switch {
		case c.Bool("json"):
		case live:
			fmt.Fprintln(stdout)
		case isTerminal(stdout) && !c.Bool("raw"):
			fmt.Fprintln(stdout, withoutControls(ex.Answer))
		default:
			fmt.Fprintln(stdout, ex.Answer)
		}
	}
	if failed > 0 {
		return cli.Exit(fmt.Sprintf("chat: %d message(s) failed with a harness error", failed), exitHarnessError)
	}
	return nil
}

// writeRecord writes the --json line of one message (run's one object).
func writeRecord(c *cli.Context, msg string, ex *agent.Exchange, err error) error {
	rec := chatRecord{Message: msg, Stop: string(ex.Stop), Answer: ex.Answer, Reasoning: ex.Reasoning, Calls: ex.Calls, Retries: ex.Retries}
	if err != nil {
		rec.Error = explainError(c, err)
	}
	if werr := writeJSONLine(c.App.Writer, rec); werr != nil {
		return cli.Exit(commandPath(c)+": "+werr.Error(), exitHarnessError)
	}
	return nil
}

// chatRecord is one line of chat --json.
type chatRecord struct {
	Message string `json:"message"`
	Stop    string `json:"stop"`
	Answer  string `json:"answer"`
	// Reasoning is the model's reasoning in the exchange
	// (agent.Exchange.Reasoning), kept apart from the answer.
	Reasoning string `json:"reasoning,omitempty"`
	Calls     int    `json:"calls"`
	Retries   int    `json:"retries"`
	Error     string `json:"error,omitempty"`
}

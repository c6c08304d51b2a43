package builtin

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"time"

	"github.com/toolharness/toolharness/registry"
)

type bashArgs struct {
	Command string `json:"command" jsonschema_description:"the command line to run in the workspace root"`
}

const defaultBashTimeout = 60 * time.Second

// shellMeta are the characters that would make a command line more than
// one allow-listed command (pipes, lists, substitutions, redirections).
const shellMeta = "|&;<>()$`\\\n"

func registerBash(r *registry.Registry, ws Workspace, o Options) error {
	allow := o.BashAllow
	if len(allow) == 0 {
		allow = DefaultBashAllow()
	}
	timeout := o.BashTimeout
	if timeout <= 0 {
		timeout = defaultBashTimeout
	}
	b := bashTool{ws: ws, allow: allow, any: slices.Contains(allow, "*"), sandbox: o.BashSandbox}
	desc := "Run a command in the workspace root and return its output and exit status."
	if b.sandbox != "" {
		desc += " It runs in a sandbox: only the workspace's files, no network."
	}
	if !b.any {
		desc += " Allowed commands: " + strings.Join(allow, ", ") + "; no pipes, redirections or substitutions."
	}
	err := registry.RegisterFunc(r, "bash", desc, b.run, registry.Spec{SideEffects: true, Deferred: o.Deferred, Timeout: timeout})
	if err != nil {
		return fmt.Errorf("builtin: %w", err)
	}
	return nil
}

type bashTool struct {
	ws    Workspace
	allow []string
	any   bool
	// sandbox is bwrap's path; "" runs commands unconfined.
	sandbox string
}

func (b bashTool) run(ctx context.Context, a bashArgs) (string, error) {
	var argv []string
	if b.any {
		argv = []string{"bash", "-c", a.Command}
	} else {
		if i := strings.IndexAny(a.Command, shellMeta); i >= 0 {
			return "", fmt.Errorf("the command contains %q; only a single allowed command with plain arguments can run", a.Command[i])
		}
		var err error
		argv, err = splitWords(a.Command)
		if err != nil {
			return "", err
		}
		if len(argv) == 0 {
			return "", errors.New("empty command")
		}
		if !slices.Contains(b.allow, argv[0]) {
			return "", fmt.Errorf("%q is not an allowed command (allowed: %s)", argv[0], strings.Join(b.allow, ", "))
		}
	}
	if b.sandbox != "" {
		argv = append([]string{b.sandbox}, sandboxArgs(b.ws.root, argv)...)
	}
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = b.ws.root
	cmd.WaitDelay = 2 * time.Second
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	err := cmd.Run()
	if ctx.Err() != nil {
		return "", ctx.Err()
	}
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		return fmt.Sprintf("%s\n[exit status %d]", strings.TrimRight(out.String(), "\n"), ee.ExitCode()), nil
	case err != nil:
		return "", fmt.Errorf("cannot run the command: %w", err)
	}
	return strings.TrimRight(out.String(), "\n"), nil
}

// splitWords splits a command line on spaces, honouring single and double
// quotes (no escapes, no expansion: the line never reaches a shell).
func splitWords(s string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	var quote rune
	for _, r := range s {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case r == '\'' || r == '"':
			quote, inWord = r, true
		case r == ' ' || r == '\t':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if quote != 0 {
		return nil, fmt.Errorf("unclosed %c quote in the command", quote)
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}

package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/url"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/toolharness/toolharness/chat"
	"github.com/toolharness/toolharness/parse"
	"github.com/toolharness/toolharness/render"
)

// The CLI conventions, shared by every command (see docs/cli.md):
//   - --host on the app and on every command that talks to a server
//     (hostFlag, serverHost), with OLLAMA_HOST as the fallback;
//   - every flag and file checked before any network call
//     (nonNegative, checkFormat, readFileArg and friends);
//   - "-" is standard input for every file argument (readFileArg);
//   - a usage error is one line on stderr naming what the user gave, with
//     a hint to --help, and nothing on stdout (usageError, onUsageError).

const defaultHost = "http://127.0.0.1:11434"

func globalFlags() []cli.Flag { return []cli.Flag{hostFlag()} }

// hostFlag is --host. It is defined on the app and again on each command
// that talks to a server, so `toolharness run --host URL` and
// `toolharness --host URL run` both work; read it with serverHost.
func hostFlag() cli.Flag {
	return &cli.StringFlag{
		Name:    "host",
		Usage:   "model server `URL` (Ollama, llama.cpp or OpenAI-compatible)",
		EnvVars: []string{"OLLAMA_HOST"},
		Value:   defaultHost,
	}
}

// serverHost is the --host the user gave, nearest the command first, then
// OLLAMA_HOST, then the default, normalized to a URL.
func serverHost(c *cli.Context) string {
	for _, x := range c.Lineage() {
		if slices.Contains(x.LocalFlagNames(), "host") {
			return normalizeHost(x.String("host"))
		}
	}
	return normalizeHost(c.String("host"))
}

// normalizeHost turns what Ollama users put in OLLAMA_HOST ("0.0.0.0",
// ":11434", "example.com:8080", "https://h") into a URL.
func normalizeHost(h string) string {
	h = strings.TrimSpace(h)
	if h == "" {
		return defaultHost
	}
	scheme := "http"
	if s, rest, ok := strings.Cut(h, "://"); ok {
		scheme, h = s, rest
	}
	hostport, path, _ := strings.Cut(h, "/")
	host, port, err := net.SplitHostPort(hostport)
	if err != nil {
		host, port = hostport, ""
	}
	if port == "" {
		switch scheme {
		case "https":
			port = "443"
		default:
			port = "11434"
		}
	}
	if host == "" || host == "0.0.0.0" {
		host = "127.0.0.1"
	}
	u := url.URL{Scheme: scheme, Host: net.JoinHostPort(host, port)}
	if path != "" {
		u.Path = "/" + path
	}
	return strings.TrimSuffix(u.String(), "/")
}

// commandPath is "bench run" for the bench run command ("" for the app
// itself), for messages.
func commandPath(c *cli.Context) string {
	var names []string
	for _, x := range c.Lineage() {
		// The app's root command carries the app's name.
		if x.Command != nil && x.Command.Name != "" && x.Command.Name != c.App.Name && (len(names) == 0 || names[0] != x.Command.Name) {
			names = append([]string{x.Command.Name}, names...)
		}
	}
	return strings.Join(names, " ")
}

// usageError is a usage mistake: one line naming the command and what
// was wrong, and where the help is.
func usageError(c *cli.Context, format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	name := commandPath(c)
	if name == "" {
		return cli.Exit(fmt.Sprintf("%s (see %s --help)", msg, c.App.Name), exitHarnessError)
	}
	return cli.Exit(fmt.Sprintf("%s: %s (see %s %s --help)", name, msg, c.App.Name, name), exitHarnessError)
}

// onUsageError replaces urfave/cli's "Incorrect Usage" and full help dump
// on stdout with usageError's line.
func onUsageError(c *cli.Context, err error, _ bool) error {
	msg := err.Error()
	// flag's own wording names the flag with one dash.
	if f, ok := strings.CutPrefix(msg, "flag provided but not defined: -"); ok {
		msg = fmt.Sprintf("unknown flag --%s", strings.TrimPrefix(f, "-"))
	}
	return usageError(c, "%s", msg)
}

// withConventions sets the usage-error handler and the argument check on
// every command, so a command added later gets them too: a command that
// takes positional arguments says so in ArgsUsage, and every other one
// refuses them. Commands with subcommands and no action print their help
// when called bare and refuse an unknown subcommand.
func withConventions(cmds []*cli.Command) {
	for _, cmd := range cmds {
		cmd.OnUsageError = onUsageError
		withConventions(cmd.Subcommands)
		if len(cmd.Subcommands) > 0 && cmd.Action == nil {
			cmd.Action = unknownSubcommand
		}
		if cmd.Action == nil || len(cmd.Subcommands) > 0 {
			continue
		}
		action, required := cmd.Action, takeRequired(cmd.Flags)
		takesArgs := cmd.ArgsUsage != ""
		cmd.Action = func(c *cli.Context) error {
			if !takesArgs && c.NArg() > 0 {
				return unexpectedArg(c, c.Args().First())
			}
			for _, name := range required {
				if !c.IsSet(name) {
					return usageError(c, "--%s is required", name)
				}
			}
			return withCommand(c, action(c))
		}
	}
}

// withCommand gives a command's failure its one prefix, the command's
// name, and says the cause in the user's terms (explainError). An exit
// error is already the command's line; a message that already starts
// with the command (or its group: "bench") keeps the prefix it has.
func withCommand(c *cli.Context, err error) error {
	var ec cli.ExitCoder
	if err == nil || errors.As(err, &ec) {
		return err
	}
	msg, name := explainError(c, err), commandPath(c)
	group, _, _ := strings.Cut(name, " ")
	if name == "" || strings.HasPrefix(msg, name+": ") || strings.HasPrefix(msg, group+": ") {
		return cli.Exit(msg, exitHarnessError)
	}
	return cli.Exit(name+": "+msg, exitHarnessError)
}

// takeRequired clears the Required mark of flags and returns their names:
// urfave/cli answers a missing required flag with the whole help on
// stdout, the command's own check answers with one line.
func takeRequired(flags []cli.Flag) []string {
	var names []string
	for _, f := range flags {
		switch f := f.(type) {
		case *cli.StringFlag:
			if f.Required {
				f.Required = false
				names = append(names, f.Name)
			}
		case *cli.StringSliceFlag:
			if f.Required {
				f.Required = false
				names = append(names, f.Name)
			}
		}
	}
	return names
}

func unknownSubcommand(c *cli.Context) error {
	if c.NArg() == 0 {
		return cli.ShowSubcommandHelp(c)
	}
	var names []string
	for _, s := range c.Command.Subcommands {
		if s.Name != "help" {
			names = append(names, s.Name)
		}
	}
	return usageError(c, "unknown command %q (want %s)", c.Args().First(), strings.Join(names, ", "))
}

// maxArgs refuses more than n positional arguments.
func maxArgs(c *cli.Context, n int) error {
	if c.NArg() > n {
		return unexpectedArg(c, c.Args().Get(n))
	}
	return nil
}

// unexpectedArg refuses a positional argument; one that looks like a flag
// came after the arguments, where flag parsing has stopped (the Go
// convention urfave/cli follows), so the message says where it goes.
func unexpectedArg(c *cli.Context, arg string) error {
	if len(arg) > 1 && arg[0] == '-' {
		return usageError(c, "unexpected argument %q: flags go before the arguments", arg)
	}
	return usageError(c, "unexpected argument %q", arg)
}

// nonNegative checks that the named int, float and duration flags are not
// negative (a flag with a negative sentinel default is checked only when
// the user set it).
func nonNegative(c *cli.Context, names ...string) error {
	for _, name := range names {
		if !c.IsSet(name) {
			continue
		}
		neg := false
		switch v := c.Value(name).(type) {
		case int:
			neg = v < 0
		case int64:
			neg = v < 0
		case float64:
			neg = v < 0
		case time.Duration:
			neg = v < 0
		}
		if neg {
			return usageError(c, "--%s %v: must not be negative", name, c.Value(name))
		}
	}
	return nil
}

// checkChoice checks that a flag's value is one of choices ("" is left
// to the command's default).
func checkChoice(c *cli.Context, flag, value string, choices []string) error {
	if value == "" || slices.Contains(choices, value) {
		return nil
	}
	return usageError(c, "--%s %q: want one of %s", flag, value, strings.Join(choices, ", "))
}

// promptFormat checks a --format that a prompt is rendered in: one of
// render.Formats(). "auto" is refused with the reason, since it is a
// parser's guess at what a model wrote, not a way to write a prompt.
func promptFormat(c *cli.Context, flag, value string) error {
	if value == "auto" {
		return usageError(c, "--%s auto: auto means guessing the format of a model's output and only applies to parsing; a prompt is written in one format (%s), or leave --%s out for the family's native one",
			flag, strings.Join(render.Formats(), ", "), flag)
	}
	if slices.Contains(parse.Formats(), value) && !slices.Contains(render.Formats(), value) {
		// glm4, glm45, deepseek, kimi-k2, …: read, never written by
		// package render; a model template that writes them does so
		// itself.
		return usageError(c, "--%s %s: toolharness parses %s but does not write a prompt in it; leave --%s out and a template whose calls are %s (the model's own, or --chat-template) writes them itself, or pick one of %s",
			flag, value, value, flag, value, strings.Join(render.Formats(), ", "))
	}
	return checkChoice(c, flag, value, render.Formats())
}

// stdinName is how messages name standard input.
const stdinName = "standard input"

// readFileArg reads a file named by a flag or argument; "-" is standard
// input, which only one argument of a command may claim. Errors name the
// file as the user gave it: "tools.json: no such file or directory".
func readFileArg(c *cli.Context, what, path string) ([]byte, error) {
	if path == "-" {
		if prev, ok := c.App.Metadata["stdin"].(string); ok && prev != what {
			if prev == mainInput {
				return nil, usageError(c, "%s -: standard input is already the command's input", what)
			}
			return nil, usageError(c, "%s -: standard input is already read for %s", what, prev)
		}
		if c.App.Metadata == nil {
			c.App.Metadata = map[string]any{}
		}
		c.App.Metadata["stdin"] = what
		data, err := io.ReadAll(c.App.Reader)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", stdinName, err)
		}
		return data, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, unwrapPath(err))
	}
	return data, nil
}

// unwrapPath drops the Go wording of a file error ("open x: ") to keep
// the reason ("no such file or directory").
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// mainInput marks standard input claimed by inputArg.
const mainInput = "the input"

// inputArg opens the main input of a command: FILE, or standard input
// for "" and "-". The closer closes the file.
func inputArg(c *cli.Context, path string) (io.Reader, func() error, error) {
	if path == "" || path == "-" {
		if prev, ok := c.App.Metadata["stdin"].(string); ok {
			return nil, nil, usageError(c, "the input comes from standard input, which is already read for %s", prev)
		}
		if c.App.Metadata == nil {
			c.App.Metadata = map[string]any{}
		}
		c.App.Metadata["stdin"] = mainInput
		return c.App.Reader, func() error { return nil }, nil
	}
	if err := checkFileArg(path); err != nil {
		return nil, nil, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, unwrapPath(err))
	}
	return f, f.Close, nil
}

// checkFileArg checks, without reading it, that a file argument can be
// read ("-" always can), so commands fail before any network call.
func checkFileArg(path string) error {
	if path == "" || path == "-" {
		return nil
	}
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("%s: %w", path, unwrapPath(err))
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.IsDir() {
		return fmt.Errorf("%s: is a directory", path)
	}
	return nil
}

// readToolsArg reads a tool catalog file (or "-").
func readToolsArg(c *cli.Context, what, path string) ([]chat.Tool, error) {
	data, err := readFileArg(c, what, path)
	if err != nil {
		return nil, err
	}
	tools, err := chat.ParseTools(data)
	if err != nil {
		if lines, ok := toolLines(data); ok {
			return lines, nil
		}
		return nil, fmt.Errorf("%s: %s", displayName(path), userCause(err))
	}
	return tools, nil
}

// toolLines reads a catalog written one JSON tool per line (what tools
// list --json writes); ok is false when data is not such a catalog.
func toolLines(data []byte) ([]chat.Tool, bool) {
	var tools []chat.Tool
	for _, line := range bytes.Split(data, []byte("\n")) {
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		if line[0] != '{' {
			return nil, false
		}
		ts, err := chat.ParseTools(append(append([]byte("["), line...), ']'))
		if err != nil {
			return nil, false
		}
		tools = append(tools, ts...)
	}
	return tools, len(tools) > 0
}

// readConversationArg reads a messages file (or "-").
func readConversationArg(c *cli.Context, what, path string) (chat.Conversation, error) {
	data, err := readFileArg(c, what, path)
	if err != nil {
		return chat.Conversation{}, err
	}
	conv, err := chat.ParseConversation(data)
	if err != nil {
		return conv, fmt.Errorf("%s: %s", displayName(path), userCause(err))
	}
	return conv, nil
}

func displayName(path string) string {
	if path == "-" {
		return stdinName
	}
	return path
}

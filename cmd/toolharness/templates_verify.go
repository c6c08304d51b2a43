package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/toolharness/toolharness/backend/llamacpp"
	"github.com/toolharness/toolharness/internal/reach"
	"github.com/toolharness/toolharness/render"
	"github.com/toolharness/toolharness/templates"
	"github.com/urfave/cli/v2"
)

// verifyContext is how many bytes of context a difference is shown with,
// each side.
const verifyContext = 24

func templatesVerifyCommand() *cli.Command {
	return &cli.Command{
		Name:  "verify",
		Usage: "compare toolharness's raw-mode prompt with the server's own rendering, byte for byte",
		UsageText: `toolharness templates verify --host URL [--backend llamacpp] [--template NAME] --messages FILE [--tools FILE] [--format F] [--now RFC3339] [--verbatim] [--json]

Renders the messages (and tools) as toolharness would send them in raw mode, asks the
server to render the same messages with the model's own chat template (llama.cpp
POST /apply-template, generation prompt included) and compares the two byte for byte.
Without --template or --chat-template, toolharness uses the template the server
reports (GET /props chat_template), as run does: a built-in family when it is one,
else the model's own template, writing its calls in the syntax derived from it. Exit status 1 when they differ; the first difference is
reported with its byte offset, line and column and a few bytes of context each side.

Framing safety changes untrusted text that holds control tokens or format markers
(see render); use --verbatim to compare with it off.

Examples:
   toolharness templates verify --host http://127.0.0.1:8080 --template qwen2.5 --messages conv.json
   toolharness templates verify --host http://127.0.0.1:8080 --messages conv.json --tools tools.json --json
   toolharness templates verify --host http://127.0.0.1:8080 --chat-template ./GLM-4.5/ --messages conv.json`,
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "host", Usage: "server URL (required), e.g. http://127.0.0.1:8080"},
			&cli.StringFlag{Name: "backend", Value: "llamacpp", Usage: "server kind: llamacpp (the one with /apply-template)"},
			&cli.StringFlag{Name: "api-key", EnvVars: []string{"LLAMA_API_KEY"}, Usage: "bearer token for a server run with --api-key"},
			&cli.StringFlag{Name: "template", Aliases: []string{"t"}, Usage: "template family (default: the server's chat_template)"},
			chatTemplateFlag(),
			&cli.StringFlag{Name: "format", Aliases: []string{"f"}, Usage: "tool format (default: the family's native format)"},
			&cli.StringFlag{Name: "messages", Required: true, Usage: "conversation file (JSON or YAML)"},
			catalogFlag(),
			&cli.StringFlag{Name: "now", Usage: "clock for date-printing templates, RFC3339 or YYYY-MM-DD (default: now)"},
			&cli.BoolFlag{Name: "verbatim", Usage: "no framing safety in toolharness's rendering"},
			&cli.DurationFlag{Name: "timeout", Value: 30 * time.Second, Usage: "bound on the server exchanges"},
			&cli.BoolFlag{Name: "json", Usage: "print the result as one JSON object"},
		}, templateVarFlags()...),
		Action: verifyAction,
	}
}

// verifyResult is what templates verify reports.
type verifyResult struct {
	Template    string `json:"template"`
	Equal       bool   `json:"equal"`
	HarnessLen  int    `json:"toolharness_bytes"`
	ServerLen   int    `json:"server_bytes"`
	Offset      *int   `json:"offset,omitempty"`
	Line        int    `json:"line,omitempty"`
	Column      int    `json:"column,omitempty"`
	HarnessText string `json:"toolharness_context,omitempty"`
	ServerText  string `json:"server_context,omitempty"`
	// The whole renderings, for a script that wants its own diff (--json
	// only).
	Harness string `json:"toolharness_rendering"`
	Server  string `json:"server_rendering"`
}

func verifyAction(c *cli.Context) error {
	if c.String("backend") != "llamacpp" {
		return fmt.Errorf("templates verify: --backend %q: only llamacpp renders a template on request (/apply-template)", c.String("backend"))
	}
	host := c.String("host")
	if host == "" {
		return errors.New("templates verify: --host is required (the llama.cpp server, e.g. http://127.0.0.1:8080)")
	}
	client, err := llamacpp.New(llamacpp.Config{BaseURL: host, APIKey: c.String("api-key"), Retries: -1})
	if err != nil {
		return fmt.Errorf("templates verify: %w", err)
	}
	msgs, tools, now, err := conversationFlags(c)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(c.Context, c.Duration("timeout"))
	defer cancel()
	var note bytes.Buffer
	fam, err := verifyFamily(ctx, c, host, tools != nil, &note)
	if err != nil {
		return fmt.Errorf("templates verify: %w", err)
	}
	ours, err := render.Prompt(render.Request{Family: fam, Format: c.String("format"), Messages: msgs, Tools: tools,
		Now: now, Verbatim: c.Bool("verbatim")})
	if err != nil {
		return err
	}
	theirs, err := client.ApplyTemplate(ctx, msgs, tools)
	if re := reach.FromError(err, "llamacpp", host); re != nil {
		return fmt.Errorf("templates verify: %w", re)
	}
	if err != nil {
		return fmt.Errorf("templates verify: %s/apply-template: %w (is it a llama.cpp server?)", host, err)
	}
	c.App.ErrWriter.Write(note.Bytes())
	res := compareRenderings(ours, theirs)
	res.Template = fam.Name
	if c.Bool("json") {
		err = writeJSONLine(c.App.Writer, res)
	} else {
		err = writeVerify(c, res)
	}
	if err != nil {
		return err
	}
	if !res.Equal {
		return cli.Exit(fmt.Sprintf("templates verify: the renderings differ at byte %d", *res.Offset), 1)
	}
	return nil
}

// verifyFamily is the template toolharness renders with: --template or
// --chat-template, else the server's own (/props), as run finds it; a
// loaded template outside the built-in families writes its own calls
// unless --format names another format.
func verifyFamily(ctx context.Context, c *cli.Context, host string, tools bool, note io.Writer) (templates.Family, error) {
	if c.String("chat-template") == "-" {
		return templates.Family{}, errors.New("--chat-template -: give a file")
	}
	fam, err := flagFamily(c, tools, note)
	if errors.Is(err, errNoTemplateFlags) {
		fam, err = llamacppFamily(ctx, serverRef{kind: "llamacpp", host: host, apiKey: c.String("api-key")}, tools, note)
	}
	if err == nil && c.String("format") == "" {
		fam, err = withOwnCalls(fam)
	}
	return fam, err
}

// compareRenderings finds the first byte where ours and theirs differ.
func compareRenderings(ours, theirs string) verifyResult {
	res := verifyResult{HarnessLen: len(ours), ServerLen: len(theirs), Equal: ours == theirs, Harness: ours, Server: theirs}
	if res.Equal {
		return res
	}
	off := 0
	for off < len(ours) && off < len(theirs) && ours[off] == theirs[off] {
		off++
	}
	res.Offset = &off
	before := ours[:off]
	res.Line = strings.Count(before, "\n") + 1
	res.Column = off - strings.LastIndexByte(before, '\n')
	res.HarnessText, res.ServerText = around(ours, off), around(theirs, off)
	return res
}

// around is up to verifyContext bytes either side of off, widened to
// whole UTF-8 characters.
func around(s string, off int) string {
	lo, hi := max(0, off-verifyContext), min(len(s), off+verifyContext)
	for lo > 0 && !utf8.RuneStart(s[lo]) {
		lo--
	}
	for hi < len(s) && !utf8.RuneStart(s[hi]) {
		hi++
	}
	return s[lo:hi]
}

func writeVerify(c *cli.Context, r verifyResult) error {
	w := c.App.Writer
	if r.Equal {
		_, err := fmt.Fprintf(w, "identical: %s renders the same %d bytes as the server\n", r.Template, r.HarnessLen)
		return err
	}
	_, err := fmt.Fprintf(w, "differ at byte %d (line %d, column %d); toolharness %d bytes, server %d bytes\n  toolharness: %q\n  server:      %q\n",
		*r.Offset, r.Line, r.Column, r.HarnessLen, r.ServerLen, r.HarnessText, r.ServerText)
	return err
}

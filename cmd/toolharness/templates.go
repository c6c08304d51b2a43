package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/toolharness/toolharness/templates"
	"github.com/toolharness/toolharness/templates/source"
	"github.com/urfave/cli/v2"
)

func templatesCommand() *cli.Command {
	return &cli.Command{
		Name:      "templates",
		Usage:     "chat templates: the families, a model's own template, and checks against a server",
		UsageText: "toolharness templates list|show|detect|inspect|verify [options]",
		Description: `Examples:
   toolharness templates list
   toolharness templates list --json
   toolharness templates show qwen3
   toolharness templates detect --file chat_template.jinja
   toolharness templates inspect chat_template.jinja
   toolharness templates verify --host http://127.0.0.1:8080 --messages conv.json`,
		Subcommands: []*cli.Command{
			templatesInspectCommand(),
			templatesVerifyCommand(),
			templatesListCommand(),
			templatesShowCommand(),
			templatesDetectCommand(),
		},
	}
}

// templatesListCommand is templates list: the families and their formats.
func templatesListCommand() *cli.Command {
	return &cli.Command{
		Name:  "list",
		Usage: "list the families with their native tool format",
		UsageText: `toolharness templates list [--json]

Examples:
   toolharness templates list
   toolharness templates list --json`,
		Flags: []cli.Flag{&cli.BoolFlag{Name: "json", Usage: "one JSON object per family per line"}},
		Action: func(c *cli.Context) error {
			fams, err := templates.Families()
			if err != nil {
				return err
			}
			if c.Bool("json") {
				for _, f := range fams {
					if err := writeJSONLine(c.App.Writer, f); err != nil {
						return err
					}
				}
				return nil
			}
			w := tabwriter.NewWriter(c.App.Writer, 0, 8, 2, ' ', 0)
			fmt.Fprintln(w, "NAME\tNATIVE FORMAT\tDEFAULT FORMAT\tDESCRIPTION")
			for _, f := range fams {
				native := f.NativeFormat
				if native == "" {
					native = "(none)"
				}
				fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", f.Name, native, f.DefaultFormat, f.Description)
			}
			return w.Flush()
		},
	}
}

// templatesShowCommand is templates show: a family's definition and template,
// or the family made of a loaded template.
func templatesShowCommand() *cli.Command {
	return &cli.Command{
		Name:      "show",
		Usage:     "print a family's definition and template",
		ArgsUsage: "NAME",
		UsageText: `toolharness templates show [--json] (NAME | --chat-template FILE)

With --chat-template, the family toolharness makes of a model's own template (FILE: .jinja,
tokenizer_config.json, Hugging Face model folder, .gguf; - = stdin): the built-in family it is
recognised as, or its end of turn, stops and control tokens, and the constructs the Jinja engine
is known to render differently from Jinja2.

Examples:
   toolharness templates show qwen3
   toolharness templates show --json llama3.1
   toolharness templates show --chat-template ./GLM-4.5/tokenizer_config.json`,
		Flags: append([]cli.Flag{&cli.BoolFlag{Name: "json", Usage: "the definition as JSON"}, chatTemplateFlag()}, templateVarFlags()...),
		Action: func(c *cli.Context) error {
			if c.String("chat-template") != "" {
				return showLoadedTemplate(c)
			}
			if err := maxArgs(c, 1); err != nil {
				return err
			}
			if c.NArg() != 1 {
				return usageError(c, "give one family name (%s)", strings.Join(templates.Names(), ", "))
			}
			f, err := templates.Lookup(c.Args().First())
			if err != nil {
				return usageError(c, "unknown family %q (want one of %s)", c.Args().First(), strings.Join(templates.Names(), ", "))
			}
			if c.Bool("json") {
				return writeJSONLine(c.App.Writer, f)
			}
			_, err = fmt.Fprintf(c.App.Writer, "# definition (templates/families/%s.yaml)\n%s\n# template (templates/families/%s)\n%s", f.Name, f.Definition(), f.Template, f.Source())
			return err
		},
	}
}

// templatesDetectCommand is templates detect: the family of a template text.
func templatesDetectCommand() *cli.Command {
	return &cli.Command{
		Name:  "detect",
		Usage: "recognise the family of a chat template (Hugging Face Jinja or Ollama Go template)",
		UsageText: `toolharness templates detect --file TEMPLATE|- [--json]

Exit status 1 when no family matches.

Examples:
   toolharness templates detect --file chat_template.jinja
   ollama show --template qwen2.5 | toolharness templates detect --file -
   toolharness templates detect --file tokenizer_config.json --json`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "file", Required: true, Usage: "template `FILE` (chat_template.jinja, an Ollama template, tokenizer_config.json, a Hugging Face model folder or a .gguf; - reads stdin)"},
			&cli.BoolFlag{Name: "json", Usage: "print the result as JSON"},
		},
		Action: func(c *cli.Context) error {
			text, err := detectText(c, c.String("file"))
			if err != nil {
				return err
			}
			d, err := templates.Detect(text)
			if errors.Is(err, templates.ErrUnknownTemplate) {
				if c.Bool("json") {
					if err := writeJSONLine(c.App.Writer, map[string]any{"family": nil, "syntax": d.Syntax}); err != nil {
						return err
					}
				} else {
					fmt.Fprintf(c.App.Writer, "unknown: %s matches no known family (syntax: %s; known: %s)\n", c.String("file"), d.Syntax, strings.Join(templates.Names(), ", "))
				}
				return cli.Exit("templates: template not recognised", 1)
			}
			if err != nil {
				return err
			}
			if c.Bool("json") {
				return writeJSONLine(c.App.Writer, d)
			}
			native := d.Format
			if native == "" {
				native = "(none; default " + d.DefaultFormat + ")"
			}
			_, err = fmt.Fprintf(c.App.Writer, "family: %s\ntool format: %s\nsyntax: %s\nmatched: %s\n", d.Family, native, d.Syntax, strings.Join(d.Matched, ", "))
			return err
		},
	}
}

// templateText returns the chat template held in data: the file itself, or
// the chat_template of a Hugging Face tokenizer_config.json (a string, or
// a list of named templates, of which "tool_use" is preferred).
// detectText is the template text of --file: a model folder or a .gguf
// is read as --chat-template reads it (the raw bytes of a GGUF hold token
// strings of every kind, which would match families at random); any
// other file is the template, or a tokenizer config holding it.
func detectText(c *cli.Context, path string) (string, error) {
	if path != "-" {
		if info, err := os.Stat(path); err == nil && info.IsDir() {
			return loadedText(path)
		}
	}
	data, err := readFileArg(c, "--file", path)
	if err != nil {
		return "", err
	}
	if bytes.HasPrefix(data, []byte("GGUF")) && path != "-" {
		return loadedText(path)
	}
	return templateText(data), nil
}

func loadedText(path string) (string, error) {
	t, err := source.Load(path, source.Options{Tools: true})
	if err != nil {
		return "", templateLoadError("--file", path, err)
	}
	return t.Text, nil
}

func templateText(data []byte) string {
	var cfg struct {
		ChatTemplate json.RawMessage `json:"chat_template"`
	}
	if json.Unmarshal(data, &cfg) != nil || len(cfg.ChatTemplate) == 0 {
		return string(data)
	}
	var s string
	if json.Unmarshal(cfg.ChatTemplate, &s) == nil {
		return s
	}
	var named []struct{ Name, Template string }
	if json.Unmarshal(cfg.ChatTemplate, &named) == nil && len(named) > 0 {
		for _, n := range named {
			if n.Name == "tool_use" {
				return n.Template
			}
		}
		return named[0].Template
	}
	return string(data)
}

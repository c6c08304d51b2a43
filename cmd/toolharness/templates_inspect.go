package main

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/toolharness/toolharness/derive"
	"github.com/toolharness/toolharness/parse"
	"github.com/toolharness/toolharness/templates"
	"github.com/toolharness/toolharness/templates/source"
	"github.com/urfave/cli/v2"
)

func templatesInspectCommand() *cli.Command {
	return &cli.Command{
		Name:      "inspect",
		Usage:     "learn how a chat template writes tool calls, by rendering probe conversations through it",
		ArgsUsage: "FILE",
		UsageText: `toolharness templates inspect [--json] [--host URL] FILE|MODEL

FILE is a chat template (.jinja, or - for standard input), a Hugging Face tokenizer_config.json or model
folder, or a .gguf file (its tokenizer.chat_template and BOS/EOS tokens); a name that is no file is an
Ollama model on --host, whose own template is read from its GGUF. The template is rendered
(with toolharness' Jinja engine, configured as transformers configures Jinja2) on probe conversations —
no tools and tools, one call and two, a turn with reasoning — and the renders are diffed to learn where
the catalog goes, how a call is written, the reasoning markers and the end-of-turn strings. When the
call syntax is one a built-in format parses, that format is named; otherwise the derived syntax is
printed, and 'toolharness parse --chat-template FILE' parses model output in it. When the generation
prompt ends inside the call syntax (functionary v3.2's ">>>", gpt-oss's "<|start|>assistant"), that
tail is shown ("generation prompt ends in the call syntax"; prompt_tail in --json): parse feeds it to
the parser before the model's output. The template's own marker of a new user turn is shown as
"role stop" (role_stops in --json): a backend stops there, where a model invents the next turn.

Exit status 1 when the derived call syntax does not parse the template's own render of a call
("parses its own calls: no"): what was derived is still printed.

Examples:
   toolharness templates inspect chat_template.jinja
   toolharness templates inspect --json ~/models/Qwen3-8B/
   toolharness templates inspect model.gguf
   toolharness templates inspect qwen2.5:7b`,
		Flags: append([]cli.Flag{&cli.BoolFlag{Name: "json", Usage: "print the result as one JSON object"}, hostFlag()}, templateVarFlags()...),
		Action: func(c *cli.Context) error {
			if err := maxArgs(c, 1); err != nil {
				return err
			}
			if c.NArg() != 1 {
				return usageError(c, "give one template file (.jinja, -, tokenizer_config.json, a model folder or .gguf)")
			}
			path := c.Args().First()
			tmpl, err := inspectedTemplate(c, path)
			if err != nil {
				return err
			}
			res, err := derive.Template(tmpl, time.Now(), nil)
			if err != nil {
				return err
			}
			if !res.WritesCalls {
				if f, err := templates.FamilyOf(tmpl); err == nil {
					fmt.Fprintf(c.App.ErrWriter, "toolharness: %s\n", catalogNote(f.DefaultFormat))
				}
			}
			// The family the template is used as (FamilyOf), not the raw
			// fingerprint match: Hermes 4's template matches hermes3's
			// fingerprints but is not that family.
			family, renderedBy := "", ""
			if f, err := templates.FamilyOf(tmpl); err == nil {
				renderedBy = f.RenderedBy()
				if f.Name != tmpl.Name() {
					family = f.Name
				}
			}
			if err := writeInspection(c.App.Writer, c.Bool("json"), inspection{File: path, Family: family, RenderedBy: renderedBy,
				BOS: tmpl.Tokens().BOS, EOS: tmpl.Tokens().EOS, Deviations: deviationNames(tmpl), Derived: res}); err != nil {
				return err
			}
			return brokenSyntax(path, res)
		},
	}
}

// brokenSyntax is the error of a template whose derived call syntax does
// not read the calls the template itself renders: what was derived is
// printed, and the command fails so that a script does not use it.
func brokenSyntax(path string, res derive.Result) error {
	if !res.WritesCalls || res.ParsesOwnCalls {
		return nil
	}
	why := "the derived syntax is wrong"
	if len(res.Notes) > 0 {
		why = res.Notes[len(res.Notes)-1]
	}
	return cli.Exit(fmt.Sprintf("templates inspect: %s: the call syntax derived from the template does not parse the template's own render of a call (%s)", path, why), exitHarnessError)
}

// inspection is what `templates inspect` reports.
type inspection struct {
	File   string `json:"file"`
	Family string `json:"family,omitempty"`
	// RenderedBy says what renders the prompts (templates.Family.RenderedBy).
	RenderedBy string   `json:"rendered_by,omitempty"`
	BOS        string   `json:"bos,omitempty"`
	EOS        string   `json:"eos,omitempty"`
	Deviations []string `json:"engine_deviations,omitempty"`
	// Derived is what the probes taught (derive.Result's JSON).
	Derived derive.Result `json:"derived"`
}

func writeInspection(w io.Writer, asJSON bool, in inspection) error {
	if asJSON {
		return writeJSONLine(w, in)
	}
	family := in.Family
	if family == "" {
		family = "(none of the built-in families)"
	}
	fields := []derive.Field{{Name: "file", Value: in.File}, {Name: "family", Value: family}}
	if in.RenderedBy != "" {
		fields = append(fields, derive.Field{Name: "rendered by", Value: in.RenderedBy})
	}
	if in.BOS != "" {
		fields = append(fields, derive.Field{Name: "bos", Value: strconv.Quote(in.BOS)})
	}
	if in.EOS != "" {
		fields = append(fields, derive.Field{Name: "eos", Value: strconv.Quote(in.EOS)})
	}
	fields = append(fields, in.Derived.Describe()...)
	for _, d := range in.Deviations {
		fields = append(fields, derive.Field{Name: "engine deviation", Value: d})
	}
	_, err := io.WriteString(w, derive.String(fields))
	return err
}

func deviationNames(t *templates.Jinja) []string {
	var names []string
	for _, d := range t.Deviations() {
		names = append(names, fmt.Sprint(d))
	}
	return names
}

// chatTemplateParsers derives the call syntax of the chat template at path
// and returns its parser factory, and whether the prompt opens reasoning.
// --format cannot be given with it: the template decides the syntax.
func chatTemplateParsers(c *cli.Context, path string, thinkOpen bool) (parserFactory, bool, error) {
	errw := c.App.ErrWriter
	if c.IsSet("format") {
		return nil, false, errors.New("parse: give --format or --chat-template, not both")
	}
	if path == "-" {
		return nil, false, errors.New("parse: --chat-template cannot be standard input: the model output is read from it")
	}
	t, err := source.Load(path, source.Options{Tools: true})
	if err != nil {
		return nil, false, templateLoadError("--chat-template", path, err)
	}
	// --template-var may change the syntax (xml_tools), --eos its end.
	tmpl, err := templateWithFlags(c, t)
	if err != nil {
		return nil, false, fmt.Errorf("parse: --chat-template: %w", err)
	}
	res, err := derive.Template(tmpl, time.Now(), nil)
	if err != nil {
		return nil, false, err
	}
	if _, err := res.NewOutputParser(parse.Options{}); errors.Is(err, derive.ErrNoCalls) {
		newParser, err := addedCatalogParsers(tmpl, errw)
		return newParser, thinkOpen, err
	} else if err != nil {
		return nil, false, fmt.Errorf("parse: %s: %w; parse with --format F (or --format auto) instead", path, err)
	}
	// The input is the output after the generation prompt.
	newParser := func(o parse.Options) (eventParser, error) { return res.NewOutputParser(o) }
	return newParser, thinkOpen || res.ThinkOpen, nil
}

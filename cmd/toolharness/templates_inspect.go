package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/toolharness/toolharness/derive"
	"github.com/toolharness/toolharness/parse"
	"github.com/toolharness/toolharness/templates"
	"github.com/urfave/cli/v2"
)

func templatesInspectCommand() *cli.Command {
	return &cli.Command{
		Name:  "inspect",
		Usage: "learn how a chat template writes tool calls, by rendering probe conversations through it",
		UsageText: `toolharness templates inspect [--json] FILE

FILE is a chat template (.jinja) or a Hugging Face tokenizer_config.json. The template is rendered
(with toolharness' Jinja engine, configured as transformers configures Jinja2) on probe conversations —
no tools and tools, one call and two, a turn with reasoning — and the renders are diffed to learn where
the catalog goes, how a call is written, the reasoning markers and the end-of-turn strings. When the
call syntax is one a built-in format parses, that format is named; otherwise the derived syntax is
printed, and 'toolharness parse --chat-template FILE' parses model output in it.

Examples:
   toolharness templates inspect chat_template.jinja
   toolharness templates inspect --json tokenizer_config.json`,
		Flags: []cli.Flag{&cli.BoolFlag{Name: "json", Usage: "print the result as one JSON object"}},
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return errors.New("templates inspect: give one template file")
			}
			path := c.Args().First()
			tmpl, err := loadChatTemplateFile(path)
			if err != nil {
				return err
			}
			res, err := derive.Template(tmpl, time.Now(), nil)
			if err != nil {
				return err
			}
			family := ""
			if d, err := templates.Detect(tmpl.Source()); err == nil {
				family = d.Family
			}
			return writeInspection(c.App.Writer, c.Bool("json"), inspection{File: path, Family: family,
				BOS: tmpl.Tokens().BOS, EOS: tmpl.Tokens().EOS, Deviations: deviationNames(tmpl), Result: res})
		},
	}
}

// inspection is what `templates inspect` reports.
type inspection struct {
	File       string   `json:"file"`
	Family     string   `json:"family,omitempty"`
	BOS        string   `json:"bos,omitempty"`
	EOS        string   `json:"eos,omitempty"`
	Deviations []string `json:"engine_deviations,omitempty"`
	derive.Result
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
	if in.BOS != "" {
		fields = append(fields, derive.Field{Name: "bos", Value: strconv.Quote(in.BOS)})
	}
	if in.EOS != "" {
		fields = append(fields, derive.Field{Name: "eos", Value: strconv.Quote(in.EOS)})
	}
	fields = append(fields, in.Describe()...)
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

// loadChatTemplateFile reads a chat template from a .jinja file or a
// Hugging Face tokenizer_config.json (chat_template as a string or a named
// list, bos_token/eos_token as strings or {"content": …} objects).
func loadChatTemplateFile(path string) (*templates.Jinja, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("templates: %w", err)
	}
	var tok templates.SpecialTokens
	if strings.EqualFold(filepath.Ext(path), ".json") {
		var cfg struct{ BOSToken, EOSToken json.RawMessage }
		if err := json.Unmarshal(data, &struct {
			B *json.RawMessage `json:"bos_token"`
			E *json.RawMessage `json:"eos_token"`
		}{&cfg.BOSToken, &cfg.EOSToken}); err != nil {
			return nil, fmt.Errorf("templates: %s: %w", path, err)
		}
		tok = templates.SpecialTokens{BOS: tokenText(cfg.BOSToken), EOS: tokenText(cfg.EOSToken)}
	}
	return templates.CompileJinja(filepath.Base(path), templateText(data), tok)
}

// tokenText reads a tokenizer_config token: a string or {"content": …}.
func tokenText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var obj struct{ Content string }
	if json.Unmarshal(raw, &obj) == nil {
		return obj.Content
	}
	return ""
}

// chatTemplateParsers derives the call syntax of the chat template at path
// and returns its parser factory, and whether the prompt opens reasoning.
// --format cannot be given with it: the template decides the syntax.
func chatTemplateParsers(path string, formatSet, thinkOpen bool) (parserFactory, bool, error) {
	if formatSet {
		return nil, false, errors.New("parse: give --format or --chat-template, not both")
	}
	tmpl, err := loadChatTemplateFile(path)
	if err != nil {
		return nil, false, err
	}
	res, err := derive.Template(tmpl, time.Now(), nil)
	if err != nil {
		return nil, false, err
	}
	if _, err := res.NewParser(parse.Options{}); err != nil {
		return nil, false, fmt.Errorf("parse: %s: %w", path, err)
	}
	return res.NewParser, thinkOpen || res.ThinkOpen, nil
}

package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/toolharness/toolharness/agent"
	"github.com/toolharness/toolharness/chat"
	"github.com/toolharness/toolharness/render"
	"github.com/toolharness/toolharness/templates"
	"github.com/urfave/cli/v2"
)

func renderCommand() *cli.Command {
	return &cli.Command{
		Name:      "render",
		Usage:     "print the exact prompt a template renders",
		UsageText: "toolharness render (--template NAME | --chat-template FILE|MODEL) [--format F] --messages conv.json [--tools tools.json] [--no-generation-prompt] [--now RFC3339] [--verbatim] [--mode raw|chat] [--reminder TEXT]…",
		Description: `Prints the exact prompt text (raw mode), special tokens and BOS text included, and nothing else.
Without --format the family's native tool format is used and the output matches the official
chat template. Untrusted text (user messages, tool results) is made framing-safe: control tokens
and format markers in it get U+2060 WORD JOINER after their first character; --verbatim turns this
off and then the output is byte-identical to the official template.

--messages: a list of OpenAI-shape messages, or an object with "messages" and optional "tools"
(tool-call arguments may be an object or a JSON string); - reads stdin. --tools overrides the
file's tools. --format auto is refused: auto is the parser's guess at what a model wrote, and a
prompt is written in one format.
--now fixes the clock of families that print a date (default: now).
--mode chat prints, as JSON, the message list chat mode sends: the catalog as text in the system
message (a loaded template's own tool section where it renders one that a system message can carry),
tool results as text messages (tool messages the template renders, with its own section), no server
tools field.

Families: ` + strings.Join(templates.Names(), ", ") + `
Formats: ` + strings.Join(render.Formats(), ", ") + `

Examples:
   toolharness render --template qwen2.5 --messages conv.json --tools tools.json
   toolharness render --template gemma3 --format xml --messages conv.json --now 2025-03-14T09:00:00Z
   toolharness render --template llama3.2 --mode chat --messages conv.json
   echo '[{"role":"user","content":"hi"}]' | toolharness render --template qwen3 --messages -
   toolharness render --chat-template ./GLM-4.5/ --messages conv.json --tools tools.json
   toolharness render --chat-template model.gguf --messages conv.json
   toolharness render --chat-template qwen2.5:7b --host http://127.0.0.1:11434 --messages conv.json`,
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "template", Aliases: []string{"t"}, Usage: "template family (see toolharness templates list); or --chat-template"},
			chatTemplateFlag(),
			&cli.StringFlag{Name: "format", Aliases: []string{"f"}, Usage: "tool format (" + strings.Join(render.Formats(), ", ") + "; default: the family's native format)"},
			&cli.StringFlag{Name: "messages", Required: true, Usage: "conversation `FILE` (JSON or YAML; - reads stdin)"},
			catalogFlag(),
			&cli.BoolFlag{Name: "no-generation-prompt", Usage: "leave out the assistant turn opener"},
			&cli.StringFlag{Name: "now", Usage: "clock for date-printing templates, RFC3339 or YYYY-MM-DD (default: now)"},
			&cli.BoolFlag{Name: "verbatim", Usage: "no framing safety: byte-identical to the official template"},
			&cli.StringFlag{Name: "mode", Value: "raw", Usage: "raw (the prompt string) or chat (the message list, as JSON)"},
			&cli.StringSliceFlag{Name: "reminder", Usage: "a <system-reminder> for the newest user message (repeatable)"},
			hostFlag(),
		}, templateVarFlags()...),
		Action: func(c *cli.Context) error {
			if err := promptFormat(c, "format", c.String("format")); err != nil {
				return err
			}
			if err := checkChoice(c, "mode", c.String("mode"), []string{"raw", "chat"}); err != nil {
				return err
			}
			msgs, tools, now, err := conversationFlags(c)
			if err != nil {
				return err
			}
			// What the template is goes to stderr with the prompt; a
			// failure is its one line.
			var note bytes.Buffer
			fam, err := flagFamily(c, tools != nil, &note)
			switch {
			case errors.Is(err, errNoTemplateFlags):
				return usageError(c, "pass --template FAMILY or --chat-template FILE")
			case errors.Is(err, templates.ErrUnknownFamily):
				return usageError(c, "--template %q: want one of %s", c.String("template"), strings.Join(templates.Names(), ", "))
			}
			// Raw mode: the template writes catalog and calls itself. Chat
			// mode sends the catalog as text, in a format render writes.
			if err == nil && c.String("format") == "" && c.String("mode") == "raw" {
				fam, err = withOwnCalls(fam)
			}
			if err != nil {
				return err
			}
			ownCatalog := false
			if tools != nil && c.String("mode") == "chat" {
				// Chat mode: the template's own tool section where it can
				// be sent as system text, else an added catalog, said.
				plan, err := agent.PlanChatCatalog(fam, c.String("format"))
				if err != nil {
					return err
				}
				fam, ownCatalog = plan.Family, plan.Own
				if plan.Note != "" {
					fmt.Fprintf(&note, "toolharness: %s\n", plan.Note)
				}
			}
			if tools != nil && c.String("mode") == "raw" {
				noteAddedCatalog(fam, c.String("format"), &note)
			}
			req := render.Request{
				Family: fam, Format: c.String("format"), Messages: msgs, Tools: tools,
				Reminders: c.StringSlice("reminder"), NoGenerationPrompt: c.Bool("no-generation-prompt"),
				Now: now, Verbatim: c.Bool("verbatim"), OwnCatalog: ownCatalog,
			}
			switch c.String("mode") {
			case "raw":
				p, err := render.Prompt(req)
				if err != nil {
					return err
				}
				c.App.ErrWriter.Write(note.Bytes())
				_, err = fmt.Fprint(c.App.Writer, p)
				return err
			case "chat":
				msgs, err := render.ChatMessages(req)
				if err != nil {
					return err
				}
				c.App.ErrWriter.Write(note.Bytes())
				if msgs == nil {
					msgs = []chat.Message{}
				}
				return writeJSONLine(c.App.Writer, json.RawMessage(mustMarshal(msgs)))
			}
			return fmt.Errorf("render: unknown mode %q (raw or chat)", c.String("mode"))
		},
	}
}

func mustMarshal(v any) []byte {
	data, err := chat.Marshal(v)
	if err != nil {
		return []byte("null")
	}
	return data
}

// conversationFlags reads the conversation of --messages, the tools of
// --tools (else the conversation's own) and the clock of --now, as render
// and templates verify take them.
func conversationFlags(c *cli.Context) ([]chat.Message, []chat.Tool, time.Time, error) {
	now, err := parseNow(c.String("now"), time.Now())
	if err != nil {
		return nil, nil, time.Time{}, usageError(c, "%s", err)
	}
	conv, err := readConversationArg(c, "--messages", c.String("messages"))
	if err != nil {
		return nil, nil, time.Time{}, err
	}
	tools := conv.Tools
	if c.IsSet("tools") {
		if tools, err = localToolsFlag(c); err != nil {
			return nil, nil, time.Time{}, err
		}
	}
	return conv.Messages, tools, now, nil
}

// parseNow reads --now: RFC3339 or a date; empty means def.
func parseNow(s string, def time.Time) (time.Time, error) {
	if s == "" {
		return def, nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	if t, err := time.Parse("2006-01-02", s); err == nil {
		return t, nil
	}
	return time.Time{}, fmt.Errorf("--now %q is neither RFC3339 (2025-03-14T09:26:53Z) nor a date (2025-03-14)", s)
}

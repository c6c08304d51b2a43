package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/toolharness/toolharness/chat"
	"github.com/toolharness/toolharness/internal/jsonerr"
	"github.com/toolharness/toolharness/parse"
	"github.com/urfave/cli/v2"
)

func parseCommand() *cli.Command {
	return &cli.Command{
		Name:      "parse",
		Usage:     "parse tool calls out of raw model text",
		UsageText: "toolharness parse --format F | --chat-template TEMPLATE [--tools tools.json|builtin:fs] [--strict] [--think-open] [--chunk N] [--jsonl] [FILE|-]",
		ArgsUsage: "[FILE]",
		Description: `Reads a model's raw output from FILE (or stdin, without FILE or with -) and prints one JSON
object per line per event:
   {"type":"text","text":"…"}   (the answer; "part":"reasoning" or "part":"framing" for the rest, below)
   {"type":"call_start","id":"call_0","name":"read_file","offset":12}   (the tool name is known)
   {"type":"call","id":"call_0","name":"read_file","arguments":{…},"repairs":[…],"offset":12}
       (with "error":{"kind":…,"message":…} when the tool is unknown or the arguments are malformed)
   {"type":"error","kind":"truncated","offset":40,"message":"…"}

--chunk N feeds the input in N-byte chunks (cut at UTF-8 boundaries), as a server would stream it;
the events are the same as for one chunk, except that text may be split differently.

Every byte outside calls is in a text event, and each says which part of the reply it is: the answer (no
"part"), "reasoning" or "framing" (the markup around the parts). A <think>…</think> block at the start of
the output (<seed:think>…</seed:think> in seed-oss, [THINK]…[/THINK] in mistral, all three in auto) is
reasoning, its tags framing, and it never holds a call (a call the model quoted while reasoning is not a
call). --think-open says the prompt already opened the block (Qwen3 "Thinking-2507" and DeepSeek-R1
templates end the generation prompt with <think>): the output is reasoning up to the first </think>
(</seed:think> in seed-oss). In harmony (gpt-oss) the analysis channel is reasoning and never holds a call
either, the final channel and commentary without a recipient are the answer, and <|start|>assistant,
<|channel|>…<|message|>, <|end|>, <|return|> framing.

--jsonl is batch mode: each input line is {"raw":"…","id":…,"tools":[…]} (tools optional, OpenAI or
Anthropic shape, overriding --tools; other fields ignored), each output line is
   {"id":…,"calls":[{"name":…,"arguments":{…},"repairs":[…]}],"content":"…","errors":[{"kind":…,"message":…}]}
A bad input line gives an "input" error on its output line; the batch goes on.

--chat-template FILE derives the call syntax from the model's own chat template (as 'templates inspect'
shows it) and parses in it: the built-in format it matches, else the derived syntax. The input is then
the model's output after the generation prompt (what a server returns for a prompt the template
rendered): --think-open is implied when the generation prompt opens a reasoning block, and when it ends
inside the call syntax (functionary v3.2's ">>>", gpt-oss's "<|start|>assistant") the output is parsed
as if that tail preceded it; the tail is never content, and offsets are the output's own.

Formats: ` + strings.Join(parse.Formats(), ", ") + `
(deepseek: V3, V3.1, R1 and V3.2's DSML; kimi-k2; functionary: v3.2's >>>NAME; functiongemma:
<start_function_call>call:NAME{…}; minimax-m2; seed-oss. auto reads them all; see docs/parse.md.)

Examples:
   echo '<tool_call>{"name":"read","arguments":{"path":"a.txt"}}</tool_call>' | toolharness parse --format hermes
   toolharness parse --format auto --tools tools.json --chunk 4 raw.txt
   toolharness parse --tools builtin:fs < raw.txt
   toolharness parse --format hermes --think-open < qwen3-thinking-output.txt
   toolharness parse --format hermes --jsonl --tools tools.yaml < records.jsonl > parsed.jsonl
   toolharness parse --chat-template glm-4.5.jinja --tools tools.json < glm-output.txt
   printf 'get_weather\n{"city": "Paris"}' | toolharness parse --chat-template functionary-medium-v3.2.jinja
   printf '<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>{"city":"Paris"}<｜tool▁call▁end｜><｜tool▁calls▁end｜>' | toolharness parse --format deepseek`,
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "format", Aliases: []string{"f"}, Value: "auto", Usage: "tool-call format: " + strings.Join(parse.Formats(), ", ")},
			catalogFlag(),
			&cli.BoolFlag{Name: "strict", Usage: "disable every repair"},
			&cli.BoolFlag{Name: "think-open", Usage: "the prompt opened a <think> block: the output is reasoning up to the first </think>"},
			&cli.IntFlag{Name: "chunk", Usage: "feed the input in chunks of N bytes (0: all at once)"},
			&cli.BoolFlag{Name: "jsonl", Usage: "batch mode: one record per input line"},
			&cli.StringFlag{Name: "chat-template", Usage: "parse in the call syntax derived from this chat template (a .jinja `FILE`, tokenizer_config.json, a Hugging Face model folder or a .gguf; see 'templates inspect')"},
		}, templateVarFlags()...),
		Action: func(c *cli.Context) error {
			opts := parse.Options{Strict: c.Bool("strict"), ThinkOpen: c.Bool("think-open")}
			format := c.String("format")
			if err := checkChoice(c, "format", format, parse.Formats()); err != nil {
				return err
			}
			if err := nonNegative(c, "chunk"); err != nil {
				return err
			}
			if err := maxArgs(c, 1); err != nil {
				return err
			}
			in, closeIn, err := inputArg(c, c.Args().First())
			if err != nil {
				return err
			}
			defer closeIn()
			if opts.Tools, err = localToolsFlag(c); err != nil {
				return err
			}
			newParser := formatParsers(format)
			if path := c.String("chat-template"); path != "" {
				if newParser, opts.ThinkOpen, err = chatTemplateParsers(c, path, opts.ThinkOpen); err != nil {
					return err
				}
			}
			if _, err := newParser(opts); err != nil {
				return err
			}
			w := bufio.NewWriterSize(c.App.Writer, 64<<10)
			if c.Bool("jsonl") {
				err = parseBatch(in, w, newParser, opts)
			} else {
				err = parseStream(in, w, newParser, opts, c.Int("chunk"))
			}
			if ferr := w.Flush(); err == nil {
				err = ferr
			}
			return err
		},
	}
}

type (
	errorLine struct {
		Kind    parse.Kind `json:"kind"`
		Offset  *int       `json:"offset,omitempty"`
		Message string     `json:"message"`
	}
	// eventLine is one output line; only the fields of its type are set.
	eventLine struct {
		Type      string          `json:"type"`
		Text      *string         `json:"text,omitempty"`
		Part      parse.Part      `json:"part,omitempty"`
		ID        string          `json:"id,omitempty"`
		Name      *string         `json:"name,omitempty"`
		Arguments json.RawMessage `json:"arguments,omitempty"`
		Repairs   *[]string       `json:"repairs,omitempty"`
		Kind      parse.Kind      `json:"kind,omitempty"`
		Offset    *int            `json:"offset,omitempty"`
		Message   string          `json:"message,omitempty"`
		Error     *errorLine      `json:"error,omitempty"`
	}
)

func errLine(e *parse.Error, withOffset bool) *errorLine {
	if e == nil {
		return nil
	}
	l := &errorLine{Kind: e.Kind, Message: e.Message}
	if withOffset {
		off := e.Offset
		l.Offset = &off
	}
	return l
}

func eventToLine(e parse.Event) eventLine {
	l := eventLine{Type: e.Type.String()}
	switch e.Type {
	case parse.EventText:
		l.Text, l.Part = &e.Text, e.Part
	case parse.EventCallStart:
		off := e.Call.Offset
		l.ID, l.Name, l.Offset = e.Call.ID, &e.Call.Name, &off
	case parse.EventCall:
		off := e.Call.Offset
		l.ID, l.Name, l.Offset, l.Arguments = e.Call.ID, &e.Call.Name, &off, e.Call.Arguments
		rep := e.Call.Repairs
		if rep == nil {
			rep = []string{}
		}
		l.Repairs = &rep
		l.Error = errLine(e.Err, true)
	case parse.EventError, parse.EventEndTurn:
		off := e.Err.Offset
		l.Kind, l.Offset, l.Message = e.Err.Kind, &off, e.Err.Message
	}
	return l
}

// parserFactory makes a parser for given options: a named format's, or
// one for the call syntax derived from a chat template (--chat-template).
type parserFactory func(parse.Options) (eventParser, error)

// eventParser is what the command needs of a parser: a parse.Parser, or
// derive's OutputParser primed with the generation prompt's tail.
type eventParser interface {
	Feed(chunk string, emit func(parse.Event))
	Close(emit func(parse.Event))
	Reset()
}

// formatParsers is the factory of a named format.
func formatParsers(format string) parserFactory {
	return func(o parse.Options) (eventParser, error) { return parse.New(format, o) }
}

func parseStream(r io.Reader, w io.Writer, newParser parserFactory, opts parse.Options, chunk int) error {
	p, err := newParser(opts)
	if err != nil {
		return err
	}
	var werr error
	emit := func(e parse.Event) {
		if werr == nil {
			werr = writeJSONLine(w, eventToLine(e))
		}
	}
	if chunk <= 0 {
		data, err := io.ReadAll(r)
		if err != nil {
			return fmt.Errorf("parse: reading input: %w", err)
		}
		p.Feed(string(data), emit)
	} else {
		data, err := io.ReadAll(r)
		if err != nil {
			return fmt.Errorf("parse: reading input: %w", err)
		}
		s := string(data)
		for len(s) > 0 {
			n := min(chunk, len(s))
			// Cut at a rune boundary so every text line is valid UTF-8.
			for n < len(s) && !utf8.RuneStart(s[n]) {
				n++
			}
			p.Feed(s[:n], emit)
			s = s[n:]
		}
	}
	p.Close(emit)
	return werr
}

type (
	batchIn struct {
		Raw   *string         `json:"raw"`
		ID    json.RawMessage `json:"id"`
		Tools json.RawMessage `json:"tools"`
	}
	batchCall struct {
		ID        string          `json:"id"`
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
		Repairs   []string        `json:"repairs"`
		Error     *errorLine      `json:"error,omitempty"`
	}
	batchOut struct {
		ID      json.RawMessage `json:"id"`
		Calls   []batchCall     `json:"calls"`
		Content string          `json:"content"`
		Errors  []*errorLine    `json:"errors"`
	}
)

// parseBatch parses one record per line. Parsers are kept per distinct
// tools value, since records of one corpus usually share a catalog.
func parseBatch(r io.Reader, w io.Writer, newParser parserFactory, opts parse.Options) error {
	br := bufio.NewReaderSize(r, 1<<20)
	parsers := map[string]eventParser{}
	for lineNo := 1; ; lineNo++ {
		line, err := br.ReadBytes('\n')
		if err != nil && !errors.Is(err, io.EOF) {
			return fmt.Errorf("parse: reading input: %w", err)
		}
		if t := bytes.TrimSpace(line); len(t) > 0 {
			if werr := writeJSONLine(w, batchRecord(t, lineNo, newParser, opts, parsers)); werr != nil {
				return werr
			}
		}
		if err != nil {
			return nil
		}
	}
}

func batchRecord(line []byte, lineNo int, newParser parserFactory, opts parse.Options, parsers map[string]eventParser) batchOut {
	out := batchOut{ID: json.RawMessage("null"), Calls: []batchCall{}, Errors: []*errorLine{}}
	fail := func(msg string) batchOut {
		out.Errors = append(out.Errors, &errorLine{Kind: parse.KindInput, Message: fmt.Sprintf("line %d: %s", lineNo, msg)})
		return out
	}
	var in batchIn
	if err := json.Unmarshal(line, &in); err != nil {
		return fail("not a JSON record: " + jsonerr.Describe(err))
	}
	if len(in.ID) > 0 {
		out.ID = in.ID
	}
	if in.Raw == nil {
		return fail(`missing "raw"`)
	}
	key := ""
	if t := bytes.TrimSpace(in.Tools); len(t) > 0 && !bytes.Equal(t, []byte("null")) {
		key = string(t)
	}
	p := parsers[key]
	if p == nil {
		o := opts
		if key != "" {
			tools, err := chat.ParseTools([]byte(key))
			if err != nil {
				return fail(err.Error())
			}
			o.Tools = tools
		}
		var err error
		if p, err = newParser(o); err != nil {
			return fail(err.Error())
		}
		if len(parsers) < 1024 {
			parsers[key] = p
		}
	}
	var content strings.Builder
	emit := func(e parse.Event) {
		switch e.Type {
		case parse.EventText:
			content.WriteString(e.Text)
		case parse.EventCall:
			rep := e.Call.Repairs
			if rep == nil {
				rep = []string{}
			}
			out.Calls = append(out.Calls, batchCall{ID: e.Call.ID, Name: e.Call.Name, Arguments: e.Call.Arguments, Repairs: rep, Error: errLine(e.Err, false)})
		case parse.EventError, parse.EventEndTurn:
			out.Errors = append(out.Errors, errLine(e.Err, true))
		}
	}
	p.Feed(*in.Raw, emit)
	p.Close(emit)
	out.Content = content.String()
	return out
}

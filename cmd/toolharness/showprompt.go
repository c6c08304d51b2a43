package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/urfave/cli/v2"

	"github.com/toolharness/toolharness/backend"
	"github.com/toolharness/toolharness/chat"
)

// showPromptFlag is --show-prompt[=FILE]: every request, exactly as it
// goes to the backend, on stderr or in FILE. It is a boolean flag that
// also takes a value (flag's IsBoolFlag), so that "--show-prompt" alone
// does not take the task after it for a file name.
func showPromptFlag() cli.Flag {
	return &cli.GenericFlag{Name: "show-prompt", Value: &showPromptValue{},
		Usage: "print each request exactly as sent (the raw prompt, or the chat messages as JSON) on stderr; --show-prompt=FILE writes them to FILE"}
}

// tracePromptsFlag is --trace-prompts.
func tracePromptsFlag() cli.Flag {
	return &cli.BoolFlag{Name: "trace-prompts", Usage: "with --trace, keep each generation's whole prompt in the trace (\"prompt\"), not only its hash and size"}
}

// showPromptValue is the value of --show-prompt: "" unset, showStderr,
// or a file.
type showPromptValue struct{ dest string }

// showStderr is what flag passes for a bare --show-prompt.
const showStderr = "true"

func (v *showPromptValue) Set(s string) error { v.dest = s; return nil }
func (v *showPromptValue) String() string     { return v.dest }
func (v *showPromptValue) IsBoolFlag() bool   { return true }

// Get makes the value a flag.Getter: the bench manifest reads every flag
// given through cli.Context.Value, which panics on a value without it.
func (v *showPromptValue) Get() any { return v.dest }

// promptShower wraps a backend and writes every request before it is
// sent: in raw mode the prompt itself, in chat mode the messages as JSON
// (tools are never in the server's tools field: the catalog is text in
// the messages). Each request is framed by a header and an end line, so
// that the prompt between them is exactly what was sent.
type promptShower struct {
	backend.Backend
	w  io.Writer
	mu *sync.Mutex
	n  *int
}

// Framing of a shown request.
const (
	showHeader = "=== request %d: %s mode, model %s, %d bytes ===\n"
	showEnd    = "\n=== end of request %d ===\n"
)

func (p promptShower) Generate(ctx context.Context, req backend.Request, onChunk func(string) error) (backend.Response, error) {
	body := req.Prompt
	if req.Mode == backend.ModeChat {
		data, err := chat.Marshal(map[string]any{"messages": req.Messages})
		if err != nil {
			return backend.Response{}, err
		}
		body = string(data)
	}
	p.mu.Lock()
	*p.n++
	n := *p.n
	fmt.Fprintf(p.w, showHeader, n, req.Mode, req.Model, len(body))
	io.WriteString(p.w, body)
	fmt.Fprintf(p.w, showEnd, n)
	p.mu.Unlock()
	return p.Backend.Generate(ctx, req, onChunk)
}

// promptShowing returns a function that wraps backends per
// --show-prompt (as they are: nil wrap when the flag is not given), and a
// closer for its file.
func promptShowing(c *cli.Context) (wrap func(backend.Backend) backend.Backend, closeFile func() error, err error) {
	none := func() error { return nil }
	v, _ := c.Generic("show-prompt").(*showPromptValue)
	if v == nil || v.dest == "" {
		return func(b backend.Backend) backend.Backend { return b }, none, nil
	}
	w, closeFile := io.Writer(c.App.ErrWriter), none
	if v.dest != showStderr {
		f, err := os.Create(v.dest)
		if err != nil {
			return nil, none, fmt.Errorf("--show-prompt=%s: %w", v.dest, unwrapPath(err))
		}
		w, closeFile = f, f.Close
	}
	mu, n := &sync.Mutex{}, new(int)
	return func(b backend.Backend) backend.Backend { return promptShower{Backend: b, w: w, mu: mu, n: n} }, closeFile, nil
}

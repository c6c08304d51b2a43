package agent

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/toolharness/toolharness/chat"
	"github.com/toolharness/toolharness/derive"
	"github.com/toolharness/toolharness/parse"
	"github.com/toolharness/toolharness/render"
	"github.com/toolharness/toolharness/templates"
)

// RendererOptions choose a session's template family and tool format.
type RendererOptions struct {
	Template string // family name (templates.Names); or
	// Family is the family of a loaded chat template (templates.FamilyOf,
	// source.Template.Family); it overrides Template.
	Family   *templates.Family
	Format   string // tool-call format ("" = the family's default)
	Strict   bool   // parser repairs off
	Verbatim bool   // framing safety off
	// Chat says the renderer serves chat mode, where the catalog travels
	// as text in a format package render writes: a loaded template's own
	// call syntax, which only the template writes (raw mode), is then not
	// adopted, and the family's default format is used.
	Chat bool
	// StopAfterCall adds the format's stop sequences (</tool_call>, …), so
	// generation ends right after a call block. Off by default: it would
	// cut parallel calls, and the server keeps the stop sequence's tokens
	// in its KV cache while the transcript lacks them, so the next turn
	// could not reuse the cache up to the end of the reply.
	StopAfterCall bool
	// VerifyEvery, above 0, renders every VerifyEvery-th raw-mode turn in
	// full as well and fails it when the incremental rendering differs
	// (render.SessionConfig.VerifyEvery; a debugging aid).
	VerifyEvery int
}

// renderer is the Renderer of package render, templates and parse.
type renderer struct {
	fam    templates.Family
	format string
	opts   RendererOptions
	// output is what was derived from a loaded template whose call syntax
	// is the session's format: its parser reads the model's output after
	// the generation prompt (primed with the prompt's tail, in reasoning
	// when the prompt opens it). nil for the built-in families' prompts.
	output *derive.Result
	// tail is, where output is nil, the end of the family's generation
	// prompt that belongs to the format's call syntax (promptTail).
	tail string
}

// ErrNoTemplate is returned by NewRenderer when no template is named: a
// model's prompt is its own template, so there is no default to fall
// back on.
var ErrNoTemplate = errors.New("agent: no chat template: name a family (--template FAMILY) or load the model's own (--chat-template FILE)")

// NewRenderer returns the Renderer of a family and format.
func NewRenderer(o RendererOptions) (Renderer, error) {
	var fam templates.Family
	switch {
	case o.Family != nil:
		fam = *o.Family
	case o.Template == "":
		return nil, ErrNoTemplate
	default:
		var err error
		if fam, err = templates.Lookup(o.Template); err != nil {
			return nil, fmt.Errorf("agent: %w", err)
		}
	}
	var derived *derive.Result
	if o.Format == "" && !o.Chat {
		// A loaded template whose calls no named format reads: learn
		// them (a built-in family needs no derivation; promptTail below
		// primes its parser).
		var err error
		if fam, derived, err = derive.Own(fam); err != nil {
			return nil, fmt.Errorf("agent: %w", err)
		}
	}
	format := o.Format
	if format == "" {
		format = fam.DefaultFormat
	}
	if derived != nil && format == derived.FormatName() {
		if _, err := derived.NewOutputParser(parse.Options{}); err != nil {
			return nil, fmt.Errorf("agent: %w", err)
		}
		if derived.Format == "" {
			return &renderer{fam: fam, format: format, opts: o, output: derived}, nil
		}
	} else {
		derived = nil
	}
	if _, err := parse.New(format, parse.Options{}); err != nil {
		return nil, fmt.Errorf("agent: format %q: %w", format, err)
	}
	// The family's own native format is rendered by its template; any
	// other is written by package render.
	if _, err := render.Catalog(format, nil); err != nil && format != fam.NativeFormat {
		return nil, fmt.Errorf("agent: format %q: %w", format, err)
	}
	r := &renderer{fam: fam, format: format, opts: o, output: derived}
	if derived == nil {
		// What was derived primes its own parser (NewParser).
		r.tail = promptTail(fam, format)
	}
	return r, nil
}

func (r *renderer) Format() string { return r.format }

func (r *renderer) Stop() []string {
	stop := append([]string(nil), r.fam.Stop...)
	if r.opts.StopAfterCall {
		stop = append(stop, parse.StopSequences(r.format)...)
	}
	// A model its stop tokens do not stop may go on with an invented
	// next turn ("\nUser: …", "\n### Instruction: …"): its plain-text
	// role markers stop it too (the parser ends the turn at them when
	// the server did not).
	for _, s := range parse.StopStrings() {
		if !slices.Contains(stop, s) {
			stop = append(stop, s)
		}
	}
	return stop
}

func (r *renderer) NewParser(tools []chat.Tool) (StreamParser, error) {
	opts := parse.Options{Tools: tools, Strict: r.opts.Strict}
	if r.output != nil {
		p, err := r.output.NewOutputParser(opts)
		if err != nil {
			return nil, err
		}
		return &parseStream{p: p}, nil
	}
	if r.tail != "" {
		p, err := parse.New(r.format, opts)
		if err != nil {
			return nil, err
		}
		return &parseStream{p: derive.Prime(p, r.tail)}, nil
	}
	return NewParser(r.format, opts)
}

func (r *renderer) Catalog(tools []chat.Tool) (string, error) { return render.Catalog(r.format, tools) }

// FormatCall writes call in the session's format; a format package
// render does not write (a syntax derived from a loaded template, or one
// only parsed, such as glm45) is written by the template itself, so that a
// corrected example reaches the model in the syntax it is asked to use.
func (r *renderer) FormatCall(call chat.ToolCall) (string, error) {
	s, err := render.FormatCall(r.format, call)
	if err != nil && r.fam.Jinja() != nil && r.format == r.fam.NativeFormat {
		return templateCall(r.fam, call)
	}
	return s, err
}

// templateCall is call as fam's template writes an assistant turn holding
// it: the render of that turn after the user's, less the assistant's
// opening (what it shares with the generation prompt) and the end of turn.
func templateCall(fam templates.Family, call chat.ToolCall) (string, error) {
	if call.ID == "" {
		call.ID = "call_0"
	}
	user := chat.Message{Role: chat.RoleUser, Content: "example"}
	// A date the template prints is not in the call's text.
	req := render.Request{Family: fam, Messages: []chat.Message{user}, Verbatim: true, NoGenerationPrompt: true,
		Now: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)}
	prompt, err := render.Prompt(req)
	if err != nil {
		return "", err
	}
	req.NoGenerationPrompt = false
	withOpener, err := render.Prompt(req)
	if err != nil {
		return "", err
	}
	req.Messages = append(req.Messages, chat.Message{Role: chat.RoleAssistant, ToolCalls: []chat.ToolCall{call}})
	req.NoGenerationPrompt = true
	turn, err := render.Prompt(req)
	if err != nil {
		return "", err
	}
	if !strings.HasPrefix(turn, prompt) || !strings.HasPrefix(withOpener, prompt) {
		return "", fmt.Errorf("agent: the template's call turn does not extend its prompt")
	}
	turn, opener := turn[len(prompt):], withOpener[len(prompt):]
	n := 0
	for n < len(turn) && n < len(opener) && turn[n] == opener[n] {
		n++
	}
	if n < len(opener) {
		// The turn parts from the opener inside a marker (the opener's
		// "<think>", the turn's "<TOOLCALL>"): cut after the last line
		// or marker end they share.
		for n > 0 && !strings.ContainsRune("\n>]", rune(turn[n-1])) {
			n--
		}
	}
	out := strings.TrimSpace(strings.TrimSuffix(turn[n:], fam.EndOfTurn))
	if !strings.Contains(out, call.Name) {
		return "", fmt.Errorf("agent: the template writes no call %s", call.Name)
	}
	return out, nil
}

func (r *renderer) ErrorResult(call chat.ToolCall, problem string) chat.ToolResult {
	return render.ErrorResult(r.format, call, problem, nil)
}

func (r *renderer) Diverge(prev, next string) *Divergence {
	d := render.Diverge(prev, next)
	if d == nil {
		return nil
	}
	return &Divergence{Offset: d.Offset, Want: d.Prev, Got: d.Next}
}

// request is the stateless rendering of a whole conversation.
func (r *renderer) request(sys System, hist []Msg) render.Request {
	req := render.Request{Family: r.fam, Format: r.format, Tools: sys.Tools, Now: sys.Now, Verbatim: r.opts.Verbatim}
	if sys.Text != "" {
		req.Messages = append(req.Messages, chat.Message{Role: chat.RoleSystem, Content: sys.Text})
	}
	for _, m := range hist {
		req.Messages = append(req.Messages, m.Message)
	}
	// Reminders belong to the newest user message.
	for i := len(hist) - 1; i >= 0; i-- {
		if hist[i].Role == chat.RoleUser {
			req.Reminders = hist[i].Reminders
			break
		}
	}
	if len(req.Tools) == 0 {
		req.Tools = nil
	}
	return req
}

func (r *renderer) Prompt(sys System, hist []Msg) (string, error) {
	return render.Prompt(r.request(sys, hist))
}

func (r *renderer) Messages(sys System, hist []Msg) ([]chat.Message, error) {
	return render.ChatMessages(r.request(sys, hist))
}

func (r *renderer) Transcript(sys System) (Transcript, error) {
	tools := sys.Tools
	if len(tools) == 0 {
		tools = nil
	}
	s, err := render.NewSession(render.SessionConfig{Family: r.fam, Format: r.format, System: sys.Text, Tools: tools, Now: sys.Now, Verbatim: r.opts.Verbatim,
		VerifyEvery: r.opts.VerifyEvery})
	if err != nil {
		return nil, fmt.Errorf("agent: %w", err)
	}
	return &transcript{r: r, sys: sys, s: s}, nil
}

// transcript is the prefix builder of one session: render.Session in raw
// mode; in chat mode the message lists already sent are kept as sent and
// only the new part is taken from a fresh rendering.
type transcript struct {
	r    *renderer
	sys  System
	s    *render.Session
	fed  int            // history messages given to s
	sent []chat.Message // chat mode: the last list sent
	seen int            // chat mode: history messages covered by sent
	// prepared is what the chat-mode requests share (catalog, markers).
	prepared *render.Prepared
}

func (t *transcript) Prompt(hist []Msg) (string, error) {
	var reminders []string
	for i := t.fed; i < len(hist); {
		m := hist[i]
		switch m.Role {
		case chat.RoleUser:
			t.s.AddUser(m.Content)
			reminders = append(reminders, m.Reminders...)
			i++
		case chat.RoleAssistant:
			t.s.AddAssistant(m.Raw, m.ToolCalls)
			i++
		case chat.RoleTool:
			var results []chat.ToolResult
			for ; i < len(hist) && hist[i].Role == chat.RoleTool; i++ {
				tm := hist[i].Message
				results = append(results, chat.ToolResult{CallID: tm.ToolCallID, Name: tm.Name, Content: tm.Content, IsError: tm.IsError})
			}
			if err := t.s.AddResults(results); err != nil {
				return "", fmt.Errorf("agent: %w", err)
			}
		default:
			return "", fmt.Errorf("agent: a %s message cannot follow the start of a session", m.Role)
		}
	}
	t.fed = len(hist)
	p, err := t.s.Prompt(reminders...)
	if err != nil {
		return "", fmt.Errorf("agent: %w", err)
	}
	return p, nil
}

func (t *transcript) Messages(hist []Msg) ([]chat.Message, error) {
	// Reminders go only with a user message that was never sent before.
	req := t.r.request(t.sys, hist)
	req.Reminders = nil
	for i := len(hist) - 1; i >= t.seen; i-- {
		if hist[i].Role == chat.RoleUser {
			req.Reminders = hist[i].Reminders
			break
		}
	}
	if t.prepared == nil {
		p, err := render.Prepare(req)
		if err != nil {
			return nil, fmt.Errorf("agent: %w", err)
		}
		t.prepared = p
	}
	req.Prepared = t.prepared
	out, err := render.ChatMessages(req)
	if err != nil {
		return nil, fmt.Errorf("agent: %w", err)
	}
	if len(t.sent) > 0 {
		if len(out) < len(t.sent) {
			return nil, fmt.Errorf("agent: chat transcript shrank from %d to %d messages", len(t.sent), len(out))
		}
		out = append(append([]chat.Message(nil), t.sent...), out[len(t.sent):]...)
	}
	t.sent, t.seen = out, len(hist)
	return out, nil
}

// CoercesValues reports whether a format writes parameter values as raw
// text, so lossless coercions apply.
func CoercesValues(format string) bool {
	switch format {
	case "xml", "qwen3-coder", "tags":
		return true
	}
	return false
}

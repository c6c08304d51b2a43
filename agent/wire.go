package agent

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

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
	// as text in the messages: a loaded template's own tool section, its
	// calls read in its own syntax as in raw mode, where the template
	// renders tools into its system turn (PlanChatCatalog); else a
	// catalog package render writes, in the format asked for or the
	// family's default.
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
	// ownCatalog: chat mode sends the template's own tool section
	// (render.Request.OwnCatalog).
	ownCatalog bool
	// parseCat is the catalog the last parser was made with (catalog);
	// serve's requests share a renderer.
	parseCat struct {
		sync.Mutex
		c *parse.Catalog
	}
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
	ownCatalog := false
	if o.Chat {
		plan, err := PlanChatCatalog(fam, o.Format)
		if err != nil {
			return nil, err
		}
		ownCatalog = plan.Own
	}
	var derived *derive.Result
	if o.Format == "" && (!o.Chat || ownCatalog) {
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
			return &renderer{fam: fam, format: format, opts: o, output: derived, ownCatalog: ownCatalog}, nil
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
	r := &renderer{fam: fam, format: format, opts: o, output: derived, ownCatalog: ownCatalog}
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
	opts := parse.Options{Tools: tools, Catalog: r.catalog(tools), Strict: r.opts.Strict}
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

// catalog is tools read once for the parsers of every generation
// (parse.Catalog), read again when the catalog changes (tool_search).
func (r *renderer) catalog(tools []chat.Tool) *parse.Catalog {
	if len(tools) == 0 {
		return nil
	}
	r.parseCat.Lock()
	defer r.parseCat.Unlock()
	if !r.parseCat.c.Of(tools) {
		r.parseCat.c = parse.NewCatalog(tools)
	}
	return r.parseCat.c
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
// it (render.TemplateTurn).
func templateCall(fam templates.Family, call chat.ToolCall) (string, error) {
	if call.ID == "" {
		call.ID = "call_0"
	}
	out, err := render.TemplateTurn(fam, chat.Message{Role: chat.RoleAssistant, ToolCalls: []chat.ToolCall{call}})
	if err != nil {
		return "", fmt.Errorf("agent: %w", err)
	}
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
	req := render.Request{Family: r.fam, Format: r.format, Tools: sys.Tools, Now: sys.Now, Verbatim: r.opts.Verbatim, OwnCatalog: r.ownCatalog}
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
	t := &transcript{r: r, sys: sys}
	// The session of the renderer's mode is started here, so that what is
	// wrong with it (a template whose tool section does not render back
	// with this system text) fails the session's start.
	var err error
	if r.opts.Chat {
		_, err = t.chatSession()
	} else {
		_, err = t.rawSession()
	}
	if err != nil {
		return nil, err
	}
	return t, nil
}

// transcript is the prefix builder of one session: render.Session in raw
// mode, render.ChatSession in chat mode, each fed only the history
// messages it has not seen.
type transcript struct {
	r   *renderer
	sys System
	s   *render.Session
	fed int // history messages given to s
	c   *render.ChatSession
	// chatFed is the history messages given to c.
	chatFed int
}

func (t *transcript) config() render.SessionConfig {
	tools := t.sys.Tools
	if len(tools) == 0 {
		tools = nil
	}
	return render.SessionConfig{Family: t.r.fam, Format: t.r.format, System: t.sys.Text, Tools: tools, Now: t.sys.Now,
		Verbatim: t.r.opts.Verbatim, VerifyEvery: t.r.opts.VerifyEvery, OwnCatalog: t.r.ownCatalog}
}

func (t *transcript) rawSession() (*render.Session, error) {
	if t.s == nil {
		s, err := render.NewSession(t.config())
		if err != nil {
			return nil, fmt.Errorf("agent: %w", err)
		}
		t.s = s
	}
	return t.s, nil
}

func (t *transcript) chatSession() (*render.ChatSession, error) {
	if t.c == nil {
		c, err := render.NewChatSession(t.config())
		if err != nil {
			return nil, fmt.Errorf("agent: chat mode: %w", err)
		}
		t.c = c
	}
	return t.c, nil
}

func (t *transcript) Prompt(hist []Msg) (string, error) {
	s, err := t.rawSession()
	if err != nil {
		return "", err
	}
	var reminders []string
	for i := t.fed; i < len(hist); {
		m := hist[i]
		switch m.Role {
		case chat.RoleUser:
			s.AddUser(m.Content)
			reminders = append(reminders, m.Reminders...)
			i++
		case chat.RoleAssistant:
			s.AddAssistant(m.Raw, m.ToolCalls)
			i++
		case chat.RoleTool:
			var results []chat.ToolResult
			for ; i < len(hist) && hist[i].Role == chat.RoleTool; i++ {
				results = append(results, toolResult(hist[i].Message))
			}
			if err := s.AddResults(results); err != nil {
				return "", fmt.Errorf("agent: %w", err)
			}
		default:
			return "", fmt.Errorf("agent: a %s message cannot follow the start of a session", m.Role)
		}
	}
	t.fed = len(hist)
	p, err := s.Prompt(reminders...)
	if err != nil {
		return "", fmt.Errorf("agent: %w", err)
	}
	return p, nil
}

// Messages is the chat-mode list: the list sent before and the new
// history converted. Reminders go only with the newest user message that
// was never sent before, and stay with it.
func (t *transcript) Messages(hist []Msg) ([]chat.Message, error) {
	c, err := t.chatSession()
	if err != nil {
		return nil, err
	}
	if len(hist) < t.chatFed {
		return nil, fmt.Errorf("agent: chat transcript shrank from %d to %d messages", t.chatFed, len(hist))
	}
	var reminders []string
	for i := t.chatFed; i < len(hist); {
		m := hist[i]
		switch m.Role {
		case chat.RoleUser:
			c.AddUser(m.Content)
			reminders = m.Reminders
			i++
		case chat.RoleAssistant:
			if err := c.AddAssistant(m.Message); err != nil {
				return nil, fmt.Errorf("agent: %w", err)
			}
			i++
		case chat.RoleTool:
			var results []chat.ToolResult
			for ; i < len(hist) && hist[i].Role == chat.RoleTool; i++ {
				results = append(results, toolResult(hist[i].Message))
			}
			if err := c.AddResults(results); err != nil {
				return nil, fmt.Errorf("agent: %w", err)
			}
		default:
			return nil, fmt.Errorf("agent: a %s message cannot follow the start of a session", m.Role)
		}
	}
	t.chatFed = len(hist)
	out, err := c.Messages(reminders...)
	if err != nil {
		return nil, fmt.Errorf("agent: %w", err)
	}
	return out, nil
}

func toolResult(m chat.Message) chat.ToolResult {
	return chat.ToolResult{CallID: m.ToolCallID, Name: m.Name, Content: m.Content, IsError: m.IsError}
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

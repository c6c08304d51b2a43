package bench

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/toolharness/toolharness/agent"
	"github.com/toolharness/toolharness/backend"
	"github.com/toolharness/toolharness/templates"
)

// AgentDriver runs cases through agent.RunCase: the agent renders the
// prompt for the model's template and the cell's format, generates,
// parses, validates, and feeds errors back for retries; the driver adds
// the strict parse of each attempt for the strict failure rate.
type AgentDriver struct {
	// Backends holds one backend per endpoint URL.
	Backends map[string]backend.Backend
	// Family returns the chat template of a model (a built-in family or
	// the model's own loaded template); when nil, Template names one. An
	// error (the server cannot be reached) fails the case with it.
	Family func(ctx context.Context, endpoint, model string) (templates.Family, error)
	// Template returns the template family of a model by name ("" is an
	// error: there is no default template).
	Template   func(ctx context.Context, endpoint, model string) (string, error)
	MaxRetries int
	// Constrained sends the call schema as the server's output
	// constraint. A case that expects calls is constrained to calls only;
	// restraint cases (and cases without an expectation) keep the answer
	// alternative, so restraint stays possible.
	Constrained bool
	// ConstrainMaxString bounds strings without a maxLength under the
	// constraint (agent.SchemaOptions.MaxString); 0 leaves them unbounded.
	ConstrainMaxString int
	// Whole asks for each reply whole (agent.Case.Whole): on llama.cpp in
	// raw mode with every generated id, which retries send back as ids.
	Whole   bool
	Options backend.Options

	mu       sync.Mutex
	families map[string]templates.Family
}

// family is a model's chat template, found once per endpoint and model
// (through Family, else the family Template names); an error is not kept,
// so the next case asks again.
func (d *AgentDriver) family(ctx context.Context, endpoint, model string) (templates.Family, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.families == nil {
		d.families = map[string]templates.Family{}
	}
	key := endpoint + "\x00" + model
	if f, ok := d.families[key]; ok {
		return f, nil
	}
	fam, err := d.findFamily(ctx, endpoint, model)
	if err != nil {
		return templates.Family{}, err
	}
	d.families[key] = fam
	return fam, nil
}

func (d *AgentDriver) findFamily(ctx context.Context, endpoint, model string) (templates.Family, error) {
	if d.Family != nil {
		return d.Family(ctx, endpoint, model)
	}
	name := ""
	if d.Template != nil {
		var err error
		if name, err = d.Template(ctx, endpoint, model); err != nil {
			return templates.Family{}, err
		}
	}
	if name == "" {
		return templates.Family{}, agent.ErrNoTemplate
	}
	return templates.Lookup(name)
}

// ModelTemplate returns the chat template a model runs with on endpoint.
func (d *AgentDriver) ModelTemplate(ctx context.Context, endpoint, model string) (templates.Family, error) {
	return d.family(ctx, endpoint, model)
}

// RunCase implements Driver.
func (d *AgentDriver) RunCase(ctx context.Context, endpoint string, cell Cell, c Case) (CaseRun, error) {
	b, ok := d.Backends[endpoint]
	if !ok {
		return CaseRun{}, fmt.Errorf("bench: no backend for endpoint %s", endpoint)
	}
	format := cell.Format
	if format == Native || format == "auto" { // "auto": results made before Native
		format = "" // the family's native format
	}
	fam, err := d.family(ctx, endpoint, cell.Model)
	if err != nil {
		return CaseRun{}, fmt.Errorf("bench: %s: %w", cell.Model, err)
	}
	server := cell.Mode == string(backend.ModeServer)
	if server {
		format = "" // the renderer only words error results: the family's own
	}
	opts := agent.RendererOptions{Family: &fam, Format: format, Chat: cell.Mode == string(backend.ModeChat) || server}
	renderer, err := agent.NewRenderer(opts)
	if err != nil {
		return CaseRun{}, fmt.Errorf("bench: %s/%s: %w", cell.Model, cell.Format, err)
	}
	run := CaseRun{FormatUsed: renderer.Format()}
	if server {
		run.FormatUsed = ServerFormat
	}
	// runErr is the case's outcome: a failed generation keeps its error
	// to the end, so the case is recorded as an error, never judged on
	// the empty text of a request that did not happen.
	res, runErr := agent.RunCase(ctx, b, agent.Case{
		Model: cell.Model, Messages: c.Messages, Tools: c.Tools, Mode: backend.Mode(cell.Mode),
		Constrained: d.Constrained, RequireCall: len(c.Expect.Calls) > 0, ConstrainMaxString: d.ConstrainMaxString,
		MaxRetries: d.MaxRetries, Options: d.Options, Renderer: renderer, Whole: d.Whole,
	})
	var parser Parser
	if !d.Constrained && !server {
		if parser, err = NewParser(renderer.Format()); err != nil {
			return run, errors.Join(runErr, err)
		}
	}
	for _, a := range res.Attempts {
		ar := AttemptRun{
			Raw: a.Raw, PromptTokens: a.Usage.PromptTokens, GeneratedTokens: a.Usage.GeneratedTokens,
			CachedTokens: a.Usage.CachedTokens, CachedKnown: a.Usage.CachedKnown, TTFT: a.TTFT, Total: a.Duration,
			StopReason: a.StopReason,
		}
		for _, m := range a.Invalid {
			ar.SchemaErrors = append(ar.SchemaErrors, Problem{Kind: m.Kind, Message: m.Message})
		}
		if parser != nil {
			// Re-parse rather than convert the agent's events: the same
			// parser, and the errors stay attached to their calls.
			var perr error
			if ar.Lenient, perr = parser.Parse(a.Raw, c.Tools, false); perr != nil {
				return run, errors.Join(runErr, perr)
			}
			if ar.Strict, perr = parser.Parse(a.Raw, c.Tools, true); perr != nil {
				return run, errors.Join(runErr, perr)
			}
		} else {
			// Constrained output is the agent's JSON call object, and in
			// server mode the calls are the server's parser's: there is
			// nothing for repairs to do, so strict equals lenient.
			ar.Lenient = fromAttempt(a)
			ar.Strict = ar.Lenient
		}
		run.Attempts = append(run.Attempts, ar)
	}
	return run, runErr
}

func fromAttempt(a agent.Attempt) ParseResult {
	p := ParseResult{Content: a.Content, Calls: []Call{}}
	for _, c := range a.Calls {
		p.Calls = append(p.Calls, Call{Name: c.Name, Arguments: c.Arguments, Repairs: c.Repairs})
	}
	for _, e := range a.ParseErrors {
		p.Errors = append(p.Errors, Problem{Kind: e.Kind, Message: e.Message})
	}
	return p
}

package derive

import (
	"encoding/json"
	"time"

	"github.com/toolharness/toolharness/templates"
)

// Jinja renders probes through a compiled chat template, the way
// transformers' apply_chat_template would.
type Jinja struct {
	Template *templates.Jinja
	// Now is strftime_now's clock (templates that print today's date).
	Now time.Time
	// Extra holds template-specific keyword arguments (enable_thinking, …).
	Extra map[string]json.RawMessage
}

// Render implements Renderer.
func (j Jinja) Render(r Request) (string, error) {
	return j.Template.Render(templates.JinjaVars{Messages: r.Messages, Tools: r.Tools,
		AddGenerationPrompt: r.AddGenerationPrompt, Now: j.Now, Extra: j.Extra})
}

// Template derives the call syntax of a compiled chat template, with its
// own special tokens; the syntax is labelled "derived:" + the template's
// name (the name a session reports as its format). A zero now renders
// with a fixed date (the date a template prints changes no call syntax).
func Template(t *templates.Jinja, now time.Time, extra map[string]json.RawMessage) (Result, error) {
	if now.IsZero() {
		now = probeClock()
	}
	tok := t.Tokens()
	res, err := Derive(Jinja{Template: t, Now: now, Extra: extra}, Tokens{BOS: tok.BOS, EOS: tok.EOS})
	res.Syntax.Label = "derived:" + t.Name()
	return res, err
}

// probeClock is the date of renders made without a clock.
func probeClock() time.Time { return time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC) }

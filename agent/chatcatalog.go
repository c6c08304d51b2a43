package agent

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/toolharness/toolharness/chat"
	"github.com/toolharness/toolharness/derive"
	"github.com/toolharness/toolharness/parse"
	"github.com/toolharness/toolharness/render"
	"github.com/toolharness/toolharness/templates"
)

// In chat mode the server applies the model's template to the messages and
// is never sent tools: a loaded template that renders tools itself sends
// its own tool section as text (render.TemplateTools), its calls are read
// in its own syntax, as raw mode reads them, and its results go as tool
// messages the template renders, as in raw mode (where it renders them:
// render.ToolSection.ToolMessages). Where the template
// renders no tools, or renders them where no system message can carry
// them, the harness adds a catalog in a format package render writes, and
// says so (ChatCatalog.Note).

// ChatCatalog is how chat mode offers tools with a family's template.
type ChatCatalog struct {
	// Family is the family, with the call syntax derived from its template
	// adopted when Own (derive.Own).
	Family templates.Family
	// Own: the template's own tool section goes in the system messages
	// (render.Request.OwnCatalog).
	Own bool
	// Note is the line said when the harness adds its catalog to a
	// loaded template instead ("" when Own, or for a built-in family).
	Note string
}

// AddedCatalogNote is the line said of a loaded template that renders no
// tools (issue 22: every command says it in these words).
func AddedCatalogNote(format string) string {
	return fmt.Sprintf("this template renders no tools: the %s catalog is added after the system text", format)
}

// chatProbeSystem is the system text the placement of a template's tool
// section is decided with; a session places it again with its own text
// and fails when that does not render back the same way.
const chatProbeSystem = "You are a helpful assistant."

// chatProbeTools is the catalog the placement is decided with.
var chatProbeTools = []chat.Tool{{Name: "probe_lookup", Description: "Looks a word up in the dictionary.",
	Parameters: []byte(`{"type": "object", "properties": {"word": {"type": "string"}}, "required": ["word"]}`)}}

// PlanChatCatalog decides how chat mode offers tools with fam's template;
// format is the one asked for ("" = the family's default). A built-in
// family, and any explicit format, get a catalog package render writes.
func PlanChatCatalog(fam templates.Family, format string) (ChatCatalog, error) {
	plan := ChatCatalog{Family: fam}
	j := fam.Jinja()
	if j == nil || slices.Contains(parse.Formats(), fam.NativeFormat) && !fam.Loaded() {
		return plan, nil
	}
	res, err := derive.Template(j, time.Time{}, nil)
	if err != nil {
		return plan, fmt.Errorf("agent: %w", err)
	}
	added := format
	if added == "" {
		added = fam.DefaultFormat
	}
	switch {
	case !res.WritesCalls:
		plan.Note = AddedCatalogNote(added)
		return plan, nil
	case format != "":
		return plan, nil
	}
	own, _, err := derive.Own(fam)
	if err != nil {
		return plan, fmt.Errorf("agent: %w", err)
	}
	_, err = render.TemplateTools(own, chatProbeSystem, chatProbeTools, time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC))
	switch {
	case err == nil:
		return ChatCatalog{Family: own, Own: true}, nil
	case errors.Is(err, render.ErrNoTemplateTools):
		plan.Note = AddedCatalogNote(added)
	case errors.Is(err, render.ErrToolsOutsideSystem):
		plan.Note = fmt.Sprintf("this template renders its tools outside the system message, where chat mode cannot send them: the %s catalog is added after the system text", added)
	default:
		plan.Note = fmt.Sprintf("this template's tools cannot be sent in chat mode (%v): the %s catalog is added after the system text", err, added)
	}
	return plan, nil
}

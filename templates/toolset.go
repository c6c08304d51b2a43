package templates

import (
	"github.com/ardanlabs/jinja"
	"github.com/toolharness/toolharness/chat"
)

// ToolSet is a tool list prepared once for all the renders of a session:
// the ordered OpenAI tool objects, what the text/template families read,
// and the Jinja engine's values. Everything here depends only on the tools,
// so a session that renders every turn pays for it once. A *ToolSet is
// never written after NewToolSet and is safe for concurrent use.
type ToolSet struct {
	tools []chat.Tool
	views []*toolView
	// openAI and functions are the ordered objects templates read.
	openAI, functions []any
	// value is the engine's list of the OpenAI tool objects, shared by the
	// renders of templates that cannot change it (see Jinja.mutates).
	value jinja.Value
	// functionsJSON is Conventions.SystemToolsJSON's string.
	functionsJSON string
	// first is the set of the first tool alone (nil when it is this set).
	first *ToolSet
}

// NewToolSet prepares tools for rendering (Input.ToolSet).
func NewToolSet(tools []chat.Tool) (*ToolSet, error) {
	var views []*toolView
	for _, t := range tools {
		tv, err := newToolView(t)
		if err != nil {
			return nil, err
		}
		views = append(views, tv)
	}
	ts, err := toolSetOf(tools, views)
	if err != nil || len(tools) <= 1 {
		return ts, err
	}
	if ts.first, err = toolSetOf(tools[:1], views[:1]); err != nil {
		return nil, err
	}
	return ts, nil
}

func toolSetOf(tools []chat.Tool, views []*toolView) (*ToolSet, error) {
	ts := &ToolSet{tools: tools, views: views}
	for _, tv := range views {
		ts.openAI = append(ts.openAI, tv.OpenAI)
		ts.functions = append(ts.functions, tv.Function)
	}
	var err error
	if ts.value, err = toValue(listOrEmpty(ts.openAI)); err != nil {
		return nil, err
	}
	if ts.functionsJSON, err = PyJSON(listOrEmpty(ts.functions), 0); err != nil {
		return nil, err
	}
	return ts, nil
}

// First is the set of the first tool alone (the set itself when it has
// at most one): a stand-in for the catalog where a rendering needs tools
// offered but not which (render.Session's windowed renders, whose catalog
// part is never used).
func (ts *ToolSet) First() *ToolSet {
	if ts.first == nil {
		return ts
	}
	return ts.first
}

// Tools returns the tools the set was prepared from.
func (ts *ToolSet) Tools() []chat.Tool { return ts.tools }

func listOrEmpty(l []any) []any {
	if l == nil {
		return []any{}
	}
	return l
}

// toolSet is in's prepared tools: nil for tools=None.
func (in Input) toolSet() (*ToolSet, error) {
	if in.ToolSet != nil {
		return in.ToolSet, nil
	}
	if in.Tools == nil {
		return nil, nil
	}
	return NewToolSet(in.Tools)
}

package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/toolharness/toolharness/chat"
)

// LocalTool is a tool the agent itself provides (skill, task). Its schema
// is a flat object whose required properties must be present; the handler
// checks the rest.
type LocalTool struct {
	Tool chat.Tool
	Run  func(ctx context.Context, args map[string]any) (string, error)
}

// withLocal adds local tools to a toolbox. Calls to a local tool are
// validated and run here, at most once per call ID; everything else goes
// to the inner toolbox.
type withLocal struct {
	inner   Toolbox
	local   map[string]LocalTool
	schemas map[string]localSchema
	order   []chat.Tool

	mu  sync.Mutex
	ran map[string]Outcome
}

// addLocal fails on a local tool whose schema cannot be read: its
// required-parameter check would be skipped.
func addLocal(inner Toolbox, tools []LocalTool) (Toolbox, error) {
	if len(tools) == 0 {
		return inner, nil
	}
	w := &withLocal{inner: inner, local: map[string]LocalTool{}, schemas: map[string]localSchema{}, ran: map[string]Outcome{}}
	for _, t := range tools {
		var schema localSchema
		if err := json.Unmarshal(t.Tool.Parameters, &schema); err != nil {
			return nil, fmt.Errorf("agent: local tool %q: schema: %w", t.Tool.Name, err)
		}
		w.local[t.Tool.Name] = t
		w.schemas[t.Tool.Name] = schema
		w.order = append(w.order, t.Tool)
	}
	return w, nil
}

// localSchema is what a local tool's flat schema says: the declared
// type of each property and the required ones.
type localSchema struct {
	Properties map[string]struct {
		Type string `json:"type"`
	} `json:"properties"`
	Required []string `json:"required"`
}

func (w *withLocal) Core() []chat.Tool {
	var out []chat.Tool
	if w.inner != nil {
		out = append(out, w.inner.Core()...)
	}
	return append(out, w.order...)
}

func (w *withLocal) Reminder() string {
	if w.inner == nil {
		return ""
	}
	return w.inner.Reminder()
}

func (w *withLocal) Validate(call chat.ToolCall) (chat.ToolCall, string, string) {
	lt, ok := w.local[call.Name]
	if !ok {
		if w.inner == nil {
			return call, "unknown_tool", unknownToolProblem(call.Name, w.Core())
		}
		return w.inner.Validate(call)
	}
	if _, problem := checkLocal(w.schemas[lt.Tool.Name], call); problem != "" {
		return call, "invalid_arguments", problem
	}
	return call, "", ""
}

func (w *withLocal) Execute(ctx context.Context, call chat.ToolCall) Outcome {
	lt, ok := w.local[call.Name]
	if !ok {
		if w.inner == nil {
			return Outcome{Call: call, Mistake: "unknown_tool", Result: chat.ToolResult{
				CallID: call.ID, Name: call.Name, IsError: true, Content: unknownToolProblem(call.Name, w.Core())}}
		}
		return w.inner.Execute(ctx, call)
	}
	w.mu.Lock()
	if o, done := w.ran[call.ID]; done {
		w.mu.Unlock()
		return o
	}
	w.mu.Unlock()
	o := Outcome{Call: call, Result: chat.ToolResult{CallID: call.ID, Name: call.Name}}
	args, problem := checkLocal(w.schemas[lt.Tool.Name], call)
	if problem != "" {
		o.Mistake, o.Result.IsError, o.Result.Content = "invalid_arguments", true, problem
	} else {
		o.Ran = true
		out, err := safeRun(ctx, lt, args)
		if err != nil {
			o.Result.IsError, o.Result.Content = true, "error: "+err.Error()
		} else {
			o.Result.Content = out
		}
	}
	w.mu.Lock()
	w.ran[call.ID] = o
	w.mu.Unlock()
	return o
}

func safeRun(ctx context.Context, lt LocalTool, args map[string]any) (out string, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("tool %s panicked: %v", lt.Tool.Name, p)
		}
	}()
	return lt.Run(ctx, args)
}

// checkLocal decodes the arguments and checks the required properties and
// their declared string type, returning a model-facing problem.
func checkLocal(schema localSchema, call chat.ToolCall) (map[string]any, string) {
	args, err := call.ArgumentsMap()
	if err != nil {
		return nil, fmt.Sprintf("the arguments of %s are not a JSON object: %v", call.Name, err)
	}
	var missing []string
	for _, r := range schema.Required {
		if _, ok := args[r]; !ok {
			missing = append(missing, r)
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Sprintf("%s is missing the required parameter(s) %s", call.Name, strings.Join(missing, ", "))
	}
	var bad []string
	for k, v := range args {
		p, known := schema.Properties[k]
		if !known {
			bad = append(bad, fmt.Sprintf("unknown parameter %q", k))
			continue
		}
		if _, isStr := v.(string); p.Type == "string" && !isStr {
			bad = append(bad, fmt.Sprintf("parameter %q must be a string", k))
		}
	}
	if len(bad) > 0 {
		sort.Strings(bad)
		return nil, fmt.Sprintf("%s: %s", call.Name, strings.Join(bad, "; "))
	}
	return args, ""
}

func unknownToolProblem(name string, tools []chat.Tool) string {
	var names []string
	for _, t := range tools {
		names = append(names, t.Name)
	}
	return fmt.Sprintf("there is no tool named %q; the tools are: %s", name, strings.Join(names, ", "))
}

package registry

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/toolharness/toolharness/chat"
)

// Handler runs one call. args is the validated (and coerced) JSON object.
// The returned string is the tool result shown to the model; an error
// becomes an error result.
type Handler func(ctx context.Context, args json.RawMessage) (string, error)

// Spec is what a tool is registered with.
type Spec struct {
	// Tool is the definition the model sees; Parameters is kept whole.
	Tool    chat.Tool
	Handler Handler
	// SideEffects marks tools that change something (files, processes,
	// remote state). Their calls go through Options.Approver.
	SideEffects bool
	// Deferred tools are left out of CoreTools; their names go in
	// DeferredReminder and tool_search loads their definitions.
	Deferred bool
	// Timeout overrides Options.CallTimeout for this tool (0: the default).
	Timeout time.Duration
}

// Options configure a Registry. The zero value is usable.
type Options struct {
	// FormatCall writes a call the way the session's format asks the model
	// to (used for the corrected example in error messages). Nil: plain JSON
	// {"name":…,"arguments":{…}}.
	FormatCall func(chat.ToolCall) (string, error)
	// RenderCatalog renders tool definitions in the session's catalog format
	// (used for tool_search results). Nil: one JSON definition per line.
	RenderCatalog func([]chat.Tool) (string, error)
	// Coerce enables the lossless coercions listed in the package doc; meant
	// for formats whose parameter values are raw text.
	Coerce bool
	// MaxConcurrency bounds the calls of one Execute running at once
	// (default 4).
	MaxConcurrency int
	// CallTimeout bounds each call (default 2 minutes).
	CallTimeout time.Duration
	// MaxResultBytes caps a result's size (default 32 KiB; negative: no cap).
	MaxResultBytes int
	// Approver decides on side-effecting calls. Nil refuses them all.
	Approver Approver
}

const (
	defaultConcurrency    = 4
	defaultCallTimeout    = 2 * time.Minute
	defaultMaxResultBytes = 32 << 10
)

// entry is one registered tool with its compiled schema.
type entry struct {
	spec   Spec
	schema *jsonschema.Schema
	// order holds the top-level property names in the order the schema
	// lists them, so examples are deterministic and read like the schema.
	order []string
}

// Registry holds the tools of a session and the state that must outlive a
// turn (the executed set, the deferred tools loaded so far). It is safe for
// concurrent use.
type Registry struct {
	opts Options

	mu      sync.Mutex
	entries map[string]*entry
	names   []string // registration order
	// executed maps a call id to the outcome of the call that ran under it.
	executed map[string]*Outcome
	running  map[string]chan struct{}
	loaded   map[string]bool
	search   *entry // tool_search, compiled on first use
}

// New returns an empty registry.
func New(opts Options) *Registry {
	if opts.MaxConcurrency <= 0 {
		opts.MaxConcurrency = defaultConcurrency
	}
	if opts.CallTimeout <= 0 {
		opts.CallTimeout = defaultCallTimeout
	}
	if opts.MaxResultBytes == 0 {
		opts.MaxResultBytes = defaultMaxResultBytes
	}
	return &Registry{
		opts:     opts,
		entries:  map[string]*entry{},
		executed: map[string]*Outcome{},
		running:  map[string]chan struct{}{},
		loaded:   map[string]bool{},
	}
}

// SchemaError is a registration error: the tool's schema does not compile.
type SchemaError struct {
	Tool string
	// Keyword is the JSON pointer of the offending keyword in the schema
	// ("/properties/city/type"), or "" when the schema is not JSON at all.
	Keyword string
	Err     error
}

func (e *SchemaError) Error() string {
	if e.Keyword == "" {
		return fmt.Sprintf("registry: tool %q: schema does not compile: %v", e.Tool, e.Err)
	}
	return fmt.Sprintf("registry: tool %q: schema does not compile at %s: %v", e.Tool, e.Keyword, e.Err)
}

func (e *SchemaError) Unwrap() error { return e.Err }

// Cause is Error without the package's words, for a command that names
// the tool's file itself.
func (e *SchemaError) Cause() string {
	if e.Keyword == "" {
		return fmt.Sprintf("tool %q: schema does not compile: %v", e.Tool, e.Err)
	}
	return fmt.Sprintf("tool %q: schema does not compile at %s: %v", e.Tool, e.Keyword, e.Err)
}

// RegisterError is a tool Register refuses for another reason than its
// schema (no name, no handler, a name taken). Cause is the reason alone;
// it wraps ErrDuplicate for a name taken.
type RegisterError struct {
	Msg string
	Err error
}

func (e *RegisterError) Error() string { return "registry: " + e.Msg }
func (e *RegisterError) Unwrap() error { return e.Err }

// Cause is Error without the package's words.
func (e *RegisterError) Cause() string { return e.Msg }

// ErrDuplicate is returned (wrapped) when a name is registered twice.
var ErrDuplicate = errors.New("registry: duplicate tool name")

// Register adds a tool. Its schema is compiled now; a schema that does not
// compile is a *SchemaError naming the tool and the keyword.
func (r *Registry) Register(s Spec) error {
	name := s.Tool.Name
	if name == "" {
		return &RegisterError{Msg: "tool without a name"}
	}
	if s.Handler == nil {
		return &RegisterError{Msg: fmt.Sprintf("tool %q: nil handler", name)}
	}
	if name == ToolSearchName {
		return &RegisterError{Msg: fmt.Sprintf("duplicate tool name: %q is built in", name), Err: ErrDuplicate}
	}
	e, err := compileEntry(s)
	if err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.entries[name]; ok {
		return &RegisterError{Msg: fmt.Sprintf("duplicate tool name: %q", name), Err: ErrDuplicate}
	}
	r.entries[name] = e
	r.names = append(r.names, name)
	return nil
}

func compileEntry(s Spec) (*entry, error) {
	params := bytes.TrimSpace(s.Tool.Parameters)
	if len(params) == 0 {
		params = json.RawMessage(`{"type":"object","properties":{}}`)
	}
	s.Tool.Parameters = params
	sch, err := CompileSchema(params)
	if err != nil {
		var se *SchemaError
		if errors.As(err, &se) {
			se.Tool = s.Tool.Name
		}
		return nil, err
	}
	return &entry{spec: s, schema: sch, order: propertyOrder(params)}, nil
}

// CompileSchema compiles a JSON Schema (draft 2020-12 unless it names its
// own $schema). Errors are *SchemaError with Keyword set where the library
// says which keyword failed.
func CompileSchema(schema json.RawMessage) (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema))
	if err != nil {
		return nil, &SchemaError{Err: fmt.Errorf("not JSON: %w", err)}
	}
	if _, ok := doc.(map[string]any); !ok {
		return nil, &SchemaError{Err: errors.New("parameters must be a JSON object")}
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	const loc = "mem://tool/schema.json"
	if err := c.AddResource(loc, doc); err != nil {
		return nil, &SchemaError{Err: err}
	}
	sch, err := safeCompile(c, loc)
	if err != nil {
		return nil, &SchemaError{Keyword: schemaErrorKeyword(err), Err: errors.New(schemaErrorText(err))}
	}
	return sch, nil
}

// schemaErrorKeyword digs the deepest instance location out of a
// metaschema validation error: that is where in the tool's schema the bad
// keyword sits.
func schemaErrorKeyword(err error) string {
	var sve *jsonschema.SchemaValidationError
	if !errors.As(err, &sve) {
		return ""
	}
	var ve *jsonschema.ValidationError
	if !errors.As(sve.Err, &ve) {
		return ""
	}
	best := ve.InstanceLocation
	var walk func(v *jsonschema.ValidationError)
	walk = func(v *jsonschema.ValidationError) {
		if len(v.InstanceLocation) > len(best) {
			best = v.InstanceLocation
		}
		for _, c := range v.Causes {
			walk(c)
		}
	}
	walk(ve)
	return "/" + strings.Join(best, "/")
}

func schemaErrorText(err error) string {
	var sve *jsonschema.SchemaValidationError
	if errors.As(err, &sve) {
		var ve *jsonschema.ValidationError
		if errors.As(sve.Err, &ve) {
			leaves := leafCauses(ve)
			if len(leaves) > 0 {
				return leaves[0].ErrorKind.LocalizedString(printer())
			}
		}
	}
	// The library's messages carry the in-memory URL; keep them readable.
	return strings.ReplaceAll(err.Error(), "mem://tool/schema.json", "schema")
}

func leafCauses(v *jsonschema.ValidationError) []*jsonschema.ValidationError {
	if len(v.Causes) == 0 {
		return []*jsonschema.ValidationError{v}
	}
	var out []*jsonschema.ValidationError
	for _, c := range v.Causes {
		out = append(out, leafCauses(c)...)
	}
	return out
}

// propertyOrder returns the keys of the schema's top-level "properties" in
// written order.
func propertyOrder(schema json.RawMessage) []string {
	v, err := chat.DecodeOrdered(schema)
	if err != nil {
		return nil
	}
	o, ok := v.(*chat.Object)
	if !ok {
		return nil
	}
	p, ok := o.Get("properties")
	if !ok {
		return nil
	}
	po, ok := p.(*chat.Object)
	if !ok {
		return nil
	}
	out := make([]string, 0, len(po.Members))
	for _, m := range po.Members {
		out = append(out, m.Key)
	}
	return out
}

// lookup returns the entry for name, including the built-in tool_search.
func (r *Registry) lookup(name string) (*entry, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if e, ok := r.entries[name]; ok {
		return e, true
	}
	if name == ToolSearchName && r.hasDeferredLocked() {
		if r.search == nil {
			r.search = r.toolSearchEntry()
		}
		return r.search, true
	}
	return nil, false
}

// Lookup returns the definition of a registered tool (deferred or not).
func (r *Registry) Lookup(name string) (chat.Tool, bool) {
	e, ok := r.lookup(name)
	if !ok {
		return chat.Tool{}, false
	}
	return e.spec.Tool, true
}

// Tools returns every tool in registration order, tool_search last when
// any tool is deferred.
func (r *Registry) Tools() []chat.Tool {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]chat.Tool, 0, len(r.names)+1)
	for _, n := range r.names {
		out = append(out, r.entries[n].spec.Tool)
	}
	if r.hasDeferredLocked() {
		out = append(out, toolSearchTool())
	}
	return out
}

// CoreTools returns the catalog for the system block: the tools that are
// not deferred, in registration order, then tool_search when any tool is
// deferred. It does not change when deferred tools are loaded, so the
// system block stays byte-identical for the session.
func (r *Registry) CoreTools() []chat.Tool {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []chat.Tool
	for _, n := range r.names {
		if e := r.entries[n]; !e.spec.Deferred {
			out = append(out, e.spec.Tool)
		}
	}
	if r.hasDeferredLocked() {
		out = append(out, toolSearchTool())
	}
	return out
}

// SideEffects reports whether the named tool is side-effecting.
func (r *Registry) SideEffects(name string) bool {
	e, ok := r.lookup(name)
	return ok && e.spec.SideEffects
}

// IsDeferred reports whether the named tool is deferred.
func (r *Registry) IsDeferred(name string) bool {
	e, ok := r.lookup(name)
	return ok && e.spec.Deferred
}

func (r *Registry) hasDeferredLocked() bool {
	for _, n := range r.names {
		if r.entries[n].spec.Deferred {
			return true
		}
	}
	return false
}

// formatCall writes a call in the session's format, or as plain JSON.
func (r *Registry) formatCall(c chat.ToolCall) string {
	if r.opts.FormatCall != nil {
		if s, err := r.opts.FormatCall(c); err == nil {
			return s
		}
	}
	args := c.Arguments
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	b, err := chat.Marshal(struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}{c.Name, args})
	if err != nil {
		return c.Name
	}
	return string(b)
}

// renderCatalog renders definitions in the session's catalog format, or as
// one JSON definition per line.
func (r *Registry) renderCatalog(tools []chat.Tool) (string, error) {
	if r.opts.RenderCatalog != nil {
		return r.opts.RenderCatalog(tools)
	}
	var b strings.Builder
	for _, t := range tools {
		data, err := chat.Marshal(t)
		if err != nil {
			return "", fmt.Errorf("registry: %w", err)
		}
		b.Write(data)
		b.WriteByte('\n')
	}
	return strings.TrimSuffix(b.String(), "\n"), nil
}

// safeCompile compiles, turning a panic inside the library (seen with
// numbers beyond its range) into a SchemaError.
func safeCompile(c *jsonschema.Compiler, loc string) (sch *jsonschema.Schema, err error) {
	defer func() {
		if p := recover(); p != nil {
			sch, err = nil, fmt.Errorf("the schema compiler failed: %v", p)
		}
	}()
	return c.Compile(loc)
}

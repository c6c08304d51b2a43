// Package registry is the single truth about tools: registration and JSON
// Schema compilation, validation with errors written for the model, the
// retry policy, deferred tools loaded through tool_search, safe concurrent
// execution, the built-in tools and MCP tools.
//
// It knows nothing of prompts or servers: how a call or a catalog is written
// in the session's format comes from functions the caller injects
// (Options.FormatCall, Options.RenderCatalog; the agent plugs in the render
// package's). When they are nil, plain JSON is used.
//
// # Public API
//
//	r := registry.New(registry.Options{...})
//	err := r.Register(registry.Spec{Tool: chat.Tool{...}, Handler: h, SideEffects: true, Deferred: false})
//	err := registry.RegisterFunc[Args](r, "name", "description", func(ctx context.Context, a Args) (string, error) {...}, registry.Spec{})
//	schema, err := registry.SchemaFor[Args]()            // JSON Schema derived from a Go struct
//
//	r.Tools() []chat.Tool          // every tool, in registration order (tool_search included when used)
//	r.CoreTools() []chat.Tool      // the catalog for the system block: not deferred, plus tool_search
//	r.DeferredReminder() string    // the reminder naming deferred tools ("" when none)
//	r.CatalogSavings() Savings     // estimated catalog tokens saved by deferring (bytes/4)
//	r.Lookup(name) (chat.Tool, bool)
//	r.SideEffects(name) bool; r.IsDeferred(name) bool
//	r.Search(query, n) (tools []chat.Tool, missing []string)   // what tool_search runs
//	r.Loaded() []string            // deferred tools tool_search has returned
//	registry.CompileSchema(schema) (*jsonschema.Schema, error)  // errors are *SchemaError{Tool, Keyword}
//
//	v, err := r.Validate(call)     // err is *registry.Error; v.Call.Arguments are coerced
//	outs := r.Execute(ctx, calls)  // validate, approve, run concurrently; one Outcome per call, in call order
//	out  := r.ExecuteOne(ctx, call)
//	r.Ran(callID) bool             // the at-most-once executed set
//
//	p := registry.DefaultRetryPolicy()   // 3 consecutive mistakes, like Cline
//	t := p.NewTracker(); d := t.Mistake(registry.MistakeInvalidArguments); t.Success(); t.NewTurn(); t.Stats()
//
//	findings := registry.Lint(tools, registry.LintOptions{}) // catalog review for `toolharness tools lint`
//	registry.MistakeOf(kind) (Mistake, bool)  // which call failures count as model mistakes
//
// Approval: Options.Approver is an Approver (Approve(ctx, call) (bool,
// error)); ApproverFunc, ApproveAll (--yes) and DenyAll (--deny) are given.
//
// Errors: every validation or execution failure is a *Error with a Kind
// (unknown_tool, invalid_arguments, malformed_arguments, denied, timeout,
// panic, tool_error, canceled). Error() is the harness-facing text, prefixed
// "registry:"; ModelMessage is the short, deterministic text fed back to the
// model, with a corrected example call in the session's format.
//
// Coercions (Options.Coerce, meant for formats whose values are raw text:
// xml, qwen3-coder, tags) are lossless only, and each is reported:
//
//   - a string holding an integer ("5") for an integer parameter;
//   - a string holding a JSON number ("2.5") for a number parameter;
//   - "true"/"false" for a boolean parameter;
//   - a string holding a JSON array or object for an array/object parameter;
//   - "null" for a parameter whose only allowed type is null.
//
// A coercion is applied only when the string is not itself valid for the
// parameter (a parameter allowing strings keeps its string).
//
// Execution: calls of one turn run concurrently up to Options.MaxConcurrency
// (default 4), each under Options.CallTimeout (default 2m, Spec.Timeout per
// tool), and results come back in call order matched by id. A handler panic or
// error becomes an error result. A call id runs at most once: a repeated id
// gets the first outcome back without running again. Side-effecting tools go
// through Options.Approver; a nil Approver refuses them. Results longer than
// Options.MaxResultBytes (default 32 KiB) are cut with a note to the model.
//
// Sub-packages: registry/builtin (workspace-confined file tools and bash),
// registry/mcp (tools from MCP servers).
package registry

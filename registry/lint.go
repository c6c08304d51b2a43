package registry

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/toolharness/toolharness/chat"
)

// Severity of a lint finding.
type Severity string

// The severities: an error makes `tools lint` exit non-zero.
const (
	SeverityError   Severity = "error"
	SeverityWarning Severity = "warning"
)

// Finding is one lint result.
type Finding struct {
	Severity Severity `json:"severity"`
	// Tool is the tool's name; "" for a finding about the whole catalog.
	Tool string `json:"tool"`
	// Param is the parameter path ("" for the tool itself).
	Param   string `json:"param,omitempty"`
	Message string `json:"message"`
}

func (f Finding) String() string {
	where := f.Tool
	if where == "" {
		where = "(catalog)"
	}
	if f.Param != "" {
		where += "." + f.Param
	}
	return fmt.Sprintf("%s: %s: %s", f.Severity, where, f.Message)
}

// DefaultLintContext is the context window (tokens) Lint measures the
// catalog against when LintOptions gives none: a common local default.
const DefaultLintContext = 8192

// LintOptions tune Lint.
type LintOptions struct {
	// ContextTokens is the model's context window; a catalog estimated
	// above a quarter of it gets a warning (the conversation needs the
	// rest). 0 means DefaultLintContext.
	ContextTokens int
}

// bytesPerToken is the estimate of catalog size in tokens: JSON schema
// text runs about four bytes a token in the BPE vocabularies of current
// local models. It is an estimate, and the finding says so.
const bytesPerToken = 4

// Lint reviews a catalog the way a model will read it: missing or
// one-word descriptions, parameters without descriptions or types, names
// that are the same or differ only in case or separators, enums whose
// values are not explained or do not fit their type, required names that
// are not properties, $ref cycles, every reason a schema does not compile,
// and a catalog too large for the context. Every finding is reported, in
// a deterministic order: by tool, then parameter, then message.
func Lint(tools []chat.Tool, opts LintOptions) []Finding {
	var out []Finding
	add := func(s Severity, tool, param, msg string) {
		out = append(out, Finding{Severity: s, Tool: tool, Param: param, Message: msg})
	}
	lintNames(tools, add)
	for _, t := range tools {
		switch d := strings.TrimSpace(t.Description); {
		case d == "":
			add(SeverityError, t.Name, "", "no description: the model can only guess what the tool does")
		case len(strings.Fields(d)) == 1:
			add(SeverityWarning, t.Name, "", fmt.Sprintf("one-word description %q: say what the tool does and when to use it", d))
		}
		lintCompile(t, add)
		v, err := chat.DecodeOrdered(t.Parameters)
		if err != nil {
			continue // reported by lintCompile
		}
		lintRefs(t.Name, v, add)
		lintSchema(t.Name, "", v, add)
	}
	lintSize(tools, opts, add)
	slices.SortStableFunc(out, func(a, b Finding) int {
		return cmp.Or(strings.Compare(a.Tool, b.Tool), strings.Compare(a.Param, b.Param), strings.Compare(a.Message, b.Message))
	})
	return out
}

type addFunc func(s Severity, tool, param, msg string)

// lintNames finds names given twice and names a model would confuse.
func lintNames(tools []chat.Tool, add addFunc) {
	count := map[string]int{}
	for _, t := range tools {
		count[t.Name]++
	}
	seen := map[string]string{}
	reported := map[string]bool{}
	for _, t := range tools {
		if t.Name == "" {
			continue
		}
		if bad := badNameChars(t.Name); bad != "" {
			add(SeverityError, t.Name, "", fmt.Sprintf("name has %s: call formats and APIs take names of letters, digits, '_', '-' and '.' (a model writing it will break the call syntax)", bad))
		}
		if n := count[t.Name]; n > 1 {
			if !reported[t.Name] {
				reported[t.Name] = true
				add(SeverityError, t.Name, "", fmt.Sprintf("defined %d times: the model cannot tell them apart", n))
			}
			continue
		}
		if prev, ok := seen[normName(t.Name)]; ok {
			add(SeverityError, t.Name, "", fmt.Sprintf("name differs from %q only in case or separators; a model will confuse them", prev))
			continue
		}
		seen[normName(t.Name)] = t.Name
	}
}

// badNameChars describes the characters of name outside [A-Za-z0-9_.-]
// ("" when there are none). Names travel inside call markup (`<function=NAME>`,
// Python calls, JSON keys of some formats) where other characters break it.
func badNameChars(name string) string {
	var bad []string
	for _, r := range name {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-', r == '.':
			continue
		}
		q := strconv.QuoteRune(r)
		if !slices.Contains(bad, q) {
			bad = append(bad, q)
		}
	}
	if len(bad) == 0 {
		return ""
	}
	return "the character(s) " + strings.Join(bad, ", ")
}

// lintCompile reports every reason the schema does not compile (the
// registry stops at the first).
func lintCompile(t chat.Tool, add addFunc) {
	_, err := CompileSchema(t.Parameters)
	if err == nil {
		return
	}
	var se *SchemaError
	if !errors.As(err, &se) {
		add(SeverityError, t.Name, "", err.Error())
		return
	}
	leaves := schemaLeaves(t.Parameters)
	if len(leaves) == 0 {
		msg := "schema does not compile: " + se.Err.Error()
		if se.Keyword != "" {
			msg = fmt.Sprintf("schema does not compile at %s: %s", se.Keyword, se.Err.Error())
		}
		add(SeverityError, t.Name, "", msg)
		return
	}
	for _, l := range leaves {
		add(SeverityError, t.Name, "", fmt.Sprintf("schema does not compile at %s: %s", l.at, l.msg))
	}
}

type schemaLeaf struct{ at, msg string }

// schemaLeaves are the metaschema's individual complaints about a schema.
func schemaLeaves(schema json.RawMessage) []schemaLeaf {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema))
	if err != nil {
		return nil
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	const loc = "mem://tool/schema.json"
	if c.AddResource(loc, doc) != nil {
		return nil
	}
	_, err = safeCompile(c, loc)
	var sve *jsonschema.SchemaValidationError
	var ve *jsonschema.ValidationError
	if !errors.As(err, &sve) || !errors.As(sve.Err, &ve) {
		return nil
	}
	// The metaschema tries alternatives ("type" is a name or a list of
	// names): at a location with several complaints, the type mismatches
	// of the alternatives ("got string, want array") are noise beside the
	// one that says what is wrong.
	byAt := map[string][]string{}
	var order []string
	for _, l := range leafCauses(ve) {
		at := "/" + strings.Join(l.InstanceLocation, "/")
		msg := l.ErrorKind.LocalizedString(printer())
		if _, ok := byAt[at]; !ok {
			order = append(order, at)
		}
		if !slices.Contains(byAt[at], msg) {
			byAt[at] = append(byAt[at], msg)
		}
	}
	var out []schemaLeaf
	for _, at := range order {
		msgs := byAt[at]
		if len(msgs) > 1 {
			if kept := slices.DeleteFunc(slices.Clone(msgs), func(m string) bool { return strings.HasPrefix(m, "got ") }); len(kept) > 0 {
				msgs = kept
			}
		}
		for _, m := range msgs {
			out = append(out, schemaLeaf{at: at, msg: m})
		}
	}
	return out
}

// lintSchema walks "properties" (and array items) of an ordered schema.
func lintSchema(tool, prefix string, schema any, add addFunc) {
	o, ok := schema.(*chat.Object)
	if !ok {
		return
	}
	props, _ := o.Get("properties")
	po, _ := props.(*chat.Object)
	if rq, ok := o.Get("required"); ok {
		if list, ok := rq.([]any); ok {
			for _, x := range list {
				name, _ := x.(string)
				has := false
				if po != nil {
					_, has = po.Get(name)
				}
				if !has {
					add(SeverityError, tool, prefix, fmt.Sprintf("required names %q, which is not a property: no call can satisfy the schema", name))
				}
			}
		}
	}
	if po == nil {
		return
	}
	for _, m := range po.Members {
		path := m.Key
		if prefix != "" {
			path = prefix + "." + m.Key
		}
		p, ok := m.Value.(*chat.Object)
		if !ok {
			continue
		}
		lintParam(tool, path, p, add)
		lintSchema(tool, path, p, add)
		if items, ok := p.Get("items"); ok {
			lintSchema(tool, path+"[]", items, add)
		}
	}
}

// lintParam checks one parameter's description, type and enum.
func lintParam(tool, path string, p *chat.Object, add addFunc) {
	desc, _ := p.Get("description")
	ds, _ := desc.(string)
	if strings.TrimSpace(ds) == "" {
		add(SeverityWarning, tool, path, "parameter has no description")
	}
	types := schemaTypes(p)
	if types == nil && !constrainsValue(p) {
		add(SeverityWarning, tool, path, "parameter has no type: the model has to guess what to write")
	}
	enum, ok := p.Get("enum")
	if !ok {
		return
	}
	vals, ok := enum.([]any)
	if !ok {
		return
	}
	if len(vals) > 1 && !describesValues(ds, vals) {
		add(SeverityWarning, tool, path, "enum values are not explained in the description")
	}
	if types == nil {
		return
	}
	for _, v := range vals {
		if !slices.ContainsFunc(types, func(t string) bool { return fitsType(v, t) }) {
			enc, _ := chat.EncodeOrdered(v)
			add(SeverityError, tool, path, fmt.Sprintf("enum value %s is not of type %s: no valid call can use it", enc, strings.Join(types, " or ")))
		}
	}
}

// schemaTypes returns the "type" of a schema as a list, nil when absent.
func schemaTypes(p *chat.Object) []string {
	t, ok := p.Get("type")
	if !ok {
		return nil
	}
	switch t := t.(type) {
	case string:
		return []string{t}
	case []any:
		var out []string
		for _, x := range t {
			if s, ok := x.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

// constrainsValue reports whether a schema without "type" still says what
// a value looks like.
func constrainsValue(p *chat.Object) bool {
	for _, k := range []string{"enum", "const", "anyOf", "oneOf", "allOf", "$ref", "properties", "items"} {
		if _, ok := p.Get(k); ok {
			return true
		}
	}
	return false
}

// fitsType reports whether a decoded JSON value is of a JSON Schema type.
func fitsType(v any, t string) bool {
	switch t {
	case "string":
		_, ok := v.(string)
		return ok
	case "boolean":
		_, ok := v.(bool)
		return ok
	case "null":
		return v == nil
	case "object":
		_, ok := v.(*chat.Object)
		return ok
	case "array":
		_, ok := v.([]any)
		return ok
	case "number", "integer":
		f, ok := number(v)
		return ok && (t == "number" || f == math.Trunc(f))
	}
	return true // an unknown type is the compiler's finding
}

func number(v any) (float64, bool) {
	switch n := v.(type) {
	case json.Number:
		f, err := n.Float64()
		return f, err == nil
	case float64:
		return n, true
	}
	return 0, false
}

// lintRefs finds local $ref cycles ("#/$defs/node" whose schema refers
// back to itself): the schema compiles, but its calls cannot be expanded
// into a prompt or checked by the registry, so every call would fail.
func lintRefs(tool string, root any, add addFunc) {
	edges := map[string][]string{}
	collectRefs(root, "#", edges)
	var cycles [][]string
	state := map[string]int{} // 0 new, 1 on the path, 2 done
	var path []string
	var visit func(n string)
	visit = func(n string) {
		state[n] = 1
		path = append(path, n)
		for _, m := range edges[n] {
			switch state[m] {
			case 0:
				visit(m)
			case 1:
				i := slices.Index(path, m)
				cycles = append(cycles, append(slices.Clone(path[i:]), m))
			}
		}
		path = path[:len(path)-1]
		state[n] = 2
	}
	nodes := make([]string, 0, len(edges))
	for n := range edges {
		nodes = append(nodes, n)
	}
	slices.Sort(nodes)
	for _, n := range nodes {
		if state[n] == 0 {
			visit(n)
		}
	}
	for _, c := range cycles {
		add(SeverityError, tool, "", fmt.Sprintf("$ref cycle %s: a recursive schema cannot be shown to the model or checked, so every call fails", strings.Join(c, " → ")))
	}
}

// collectRefs records, for the schema at pointer at, every local $ref
// inside it (in nested schemas too): an edge from the enclosing named
// location to the target.
func collectRefs(v any, at string, edges map[string][]string) {
	switch v := v.(type) {
	case *chat.Object:
		for _, m := range v.Members {
			child := at + "/" + escapePointer(m.Key)
			if m.Key == "$ref" {
				if ref, ok := m.Value.(string); ok && strings.HasPrefix(ref, "#") {
					edges[owner(at)] = append(edges[owner(at)], strings.TrimSuffix(ref, "/"))
				}
				continue
			}
			collectRefs(m.Value, child, edges)
		}
	case []any:
		for i, x := range v {
			collectRefs(x, fmt.Sprintf("%s/%d", at, i), edges)
		}
	}
}

// owner is the $ref target that contains pointer at: the nearest
// $defs/definitions entry, else the root "#".
func owner(at string) string {
	parts := strings.Split(at, "/")
	for i := len(parts) - 2; i >= 1; i-- {
		if parts[i] == "$defs" || parts[i] == "definitions" {
			return strings.Join(parts[:i+2], "/")
		}
	}
	return "#"
}

func escapePointer(s string) string {
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(s)
}

// lintSize warns when the catalog's JSON would take more than a quarter
// of the context window.
func lintSize(tools []chat.Tool, opts LintOptions, add addFunc) {
	ctx := opts.ContextTokens
	if ctx <= 0 {
		ctx = DefaultLintContext
	}
	data, err := chat.MarshalTools(tools)
	if err != nil {
		return
	}
	est := (len(data) + bytesPerToken - 1) / bytesPerToken
	if est*4 > ctx {
		add(SeverityWarning, "", "", fmt.Sprintf("the catalog is about %d tokens (%d bytes at ~%d bytes a token), more than a quarter of a %d-token context: trim descriptions, drop tools, or defer some (tool_search)",
			est, len(data), bytesPerToken, ctx))
	}
}

// describesValues reports whether a description mentions every enum value
// (the usual way to explain what each one means).
func describesValues(desc string, vals []any) bool {
	if desc == "" {
		return false
	}
	low := strings.ToLower(desc)
	for _, v := range vals {
		s, ok := v.(string)
		if !ok {
			s = fmt.Sprint(v)
		}
		if !strings.Contains(low, strings.ToLower(s)) {
			return false
		}
	}
	return true
}

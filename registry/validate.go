package registry

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/toolharness/toolharness/chat"
)

// Validated is a call that passed validation.
type Validated struct {
	// Call is the call with its arguments after coercion (key order kept).
	Call chat.ToolCall
	// Coercions lists every value that was converted, in document order.
	Coercions []Coercion
	// Deferred is true when the tool is deferred (valid whether or not
	// tool_search loaded it).
	Deferred bool
}

// Coercion is one lossless conversion applied to an argument.
type Coercion struct {
	Path string `json:"path"`
	From string `json:"from"` // the value as given (JSON)
	To   string `json:"to"`   // the value used (JSON)
}

func (c Coercion) String() string { return fmt.Sprintf("%s: %s -> %s", c.Path, c.From, c.To) }

// Validate checks a call against the registry: the tool must exist and the
// arguments must satisfy its schema (after coercion, when enabled). A
// failure is a *Error whose ModelMessage is ready for the model.
func (r *Registry) Validate(call chat.ToolCall) (Validated, error) {
	e, ok := r.lookup(call.Name)
	if !ok {
		return Validated{}, r.unknownTool(call)
	}
	args := bytes.TrimSpace(call.Arguments)
	if len(args) == 0 || bytes.Equal(args, []byte("null")) {
		args = json.RawMessage("{}")
	}
	ordered, err := chat.DecodeOrdered(args)
	if err != nil {
		return Validated{}, r.malformed(call, e, fmt.Sprintf("the arguments are not valid JSON (%v)", err))
	}
	if _, isObj := ordered.(*chat.Object); !isObj {
		return Validated{}, r.malformed(call, e, "the arguments must be a JSON object of parameter names to values")
	}
	var coercions []Coercion
	if r.opts.Coerce {
		ordered = coerce(ordered, e.schema, nil, &coercions)
		if len(coercions) > 0 {
			if args, err = chat.EncodeOrdered(ordered); err != nil {
				return Validated{}, r.malformed(call, e, err.Error())
			}
		}
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(args))
	if err != nil {
		return Validated{}, r.malformed(call, e, fmt.Sprintf("the arguments are not valid JSON (%v)", err))
	}
	if bad := hugeNumbers(inst, nil); len(bad) > 0 {
		return Validated{}, r.outOfRange(call, e, inst, bad)
	}
	if err := safeValidate(e.schema, inst); err != nil {
		var ve *jsonschema.ValidationError
		if !errors.As(err, &ve) {
			return Validated{}, &Error{Kind: KindInvalidArguments, Tool: call.Name, CallID: call.ID, Err: err,
				Message: fmt.Sprintf("Invalid arguments for %s: %v", call.Name, err)}
		}
		return Validated{}, r.invalid(call, e, inst, ve)
	}
	out := call
	out.Arguments = json.RawMessage(args)
	return Validated{Call: out, Coercions: coercions, Deferred: e.spec.Deferred}, nil
}

// printer renders the library's fallback messages; built per use since
// package-level mutable state is off limits.
func printer() *message.Printer { return message.NewPrinter(language.English) }

func (r *Registry) malformed(call chat.ToolCall, e *entry, why string) *Error {
	ex := r.formatCall(chat.ToolCall{Name: call.Name, Arguments: exampleArgs(e, nil)})
	msg := fmt.Sprintf("Invalid arguments for %s: %s.\nA valid call looks like:\n%s", call.Name, why, ex)
	return &Error{Kind: KindMalformedArguments, Tool: call.Name, CallID: call.ID,
		Causes:  []Cause{{Path: "(arguments)", Keyword: "type", Text: why}},
		Example: ex, Message: msg}
}

func (r *Registry) invalid(call chat.ToolCall, e *entry, inst any, ve *jsonschema.ValidationError) *Error {
	var causes []Cause
	for _, leaf := range flatten(ve) {
		causes = append(causes, describe(e.schema, inst, leaf)...)
	}
	slices.SortFunc(causes, func(a, b Cause) int {
		return cmp.Or(strings.Compare(a.Path, b.Path), strings.Compare(a.Keyword, b.Keyword), strings.Compare(a.Text, b.Text))
	})
	return r.argumentsError(call, dedupe(causes), exampleArgs(e, inst))
}

// argumentsError is the model-facing invalid_arguments error: one line per
// cause, then a corrected example call (with example as its arguments).
func (r *Registry) argumentsError(call chat.ToolCall, causes []Cause, example json.RawMessage) *Error {
	ex := r.formatCall(chat.ToolCall{Name: call.Name, Arguments: example})
	var b strings.Builder
	fmt.Fprintf(&b, "Invalid arguments for %s:\n", call.Name)
	for _, c := range causes {
		fmt.Fprintf(&b, "- %s\n", c)
	}
	fmt.Fprintf(&b, "A valid call looks like:\n%s", ex)
	return &Error{Kind: KindInvalidArguments, Tool: call.Name, CallID: call.ID,
		Causes: causes, Example: ex, Message: b.String()}
}

func dedupe(cs []Cause) []Cause {
	out := cs[:0]
	for i, c := range cs {
		if i > 0 && c == cs[i-1] {
			continue
		}
		out = append(out, c)
	}
	return out
}

// flatten returns the errors worth reporting: it descends through the
// structural kinds (schema, $ref, allOf groups) and stops at keywords that
// say something about a value.
func flatten(v *jsonschema.ValidationError) []*jsonschema.ValidationError {
	switch v.ErrorKind.(type) {
	case *kind.Schema, *kind.Reference, *kind.Group, *kind.AllOf:
		if len(v.Causes) == 0 {
			return []*jsonschema.ValidationError{v}
		}
		var out []*jsonschema.ValidationError
		for _, c := range v.Causes {
			out = append(out, flatten(c)...)
		}
		return out
	}
	return []*jsonschema.ValidationError{v}
}

// describe turns one validator error into model-facing causes.
func describe(root *jsonschema.Schema, inst any, v *jsonschema.ValidationError) []Cause {
	path := displayPath(inst, v.InstanceLocation)
	given := valueAt(inst, v.InstanceLocation)
	kw := ""
	if kp := v.ErrorKind.KeywordPath(); len(kp) > 0 {
		kw = kp[0]
	}
	one := func(text string) []Cause { return []Cause{{Path: path, Keyword: kw, Text: text}} }
	switch k := v.ErrorKind.(type) {
	case *kind.Required:
		var out []Cause
		for _, m := range k.Missing {
			loc := append(append([]string(nil), v.InstanceLocation...), m)
			want := describeSchema(subSchema(root, inst, loc))
			text := "missing (required)"
			if want != "" {
				text = "missing (required, expected " + want + ")"
			}
			out = append(out, Cause{Path: joinPath(path, m), Keyword: "required", Text: text})
		}
		return out
	case *kind.AdditionalProperties:
		allowed := allowedNames(subSchema(root, inst, v.InstanceLocation))
		var out []Cause
		for _, p := range k.Properties {
			text := "unknown parameter"
			if len(allowed) > 0 {
				text += " (allowed: " + strings.Join(allowed, ", ") + ")"
			}
			out = append(out, Cause{Path: joinPath(path, p), Keyword: "additionalProperties", Text: text})
		}
		return out
	case *kind.Type:
		return one(fmt.Sprintf("expected %s, given %s", strings.Join(k.Want, " or "), showTyped(given)))
	case *kind.Enum:
		return one(fmt.Sprintf("expected one of %s, given %s", showList(k.Want), show(given)))
	case *kind.Const:
		return one(fmt.Sprintf("expected %s, given %s", show(k.Want), show(given)))
	case *kind.Pattern:
		return one(fmt.Sprintf("expected a string matching %s, given %s", k.Want, show(given)))
	case *kind.MinLength:
		return one(fmt.Sprintf("expected at least %d characters, given %d (%s)", k.Want, k.Got, show(given)))
	case *kind.MaxLength:
		return one(fmt.Sprintf("expected at most %d characters, given %d", k.Want, k.Got))
	case *kind.Minimum:
		return one(fmt.Sprintf("expected %s >= %s, given %s", numberNoun(root, inst, v.InstanceLocation), ratString(k.Want), show(given)))
	case *kind.Maximum:
		return one(fmt.Sprintf("expected %s <= %s, given %s", numberNoun(root, inst, v.InstanceLocation), ratString(k.Want), show(given)))
	case *kind.ExclusiveMinimum:
		return one(fmt.Sprintf("expected %s > %s, given %s", numberNoun(root, inst, v.InstanceLocation), ratString(k.Want), show(given)))
	case *kind.ExclusiveMaximum:
		return one(fmt.Sprintf("expected %s < %s, given %s", numberNoun(root, inst, v.InstanceLocation), ratString(k.Want), show(given)))
	case *kind.MultipleOf:
		return one(fmt.Sprintf("expected a multiple of %s, given %s", ratString(k.Want), show(given)))
	case *kind.MinItems:
		return one(fmt.Sprintf("expected at least %d items, given %d", k.Want, k.Got))
	case *kind.MaxItems:
		return one(fmt.Sprintf("expected at most %d items, given %d", k.Want, k.Got))
	case *kind.UniqueItems:
		return one(fmt.Sprintf("expected unique items, items %d and %d are equal", k.Duplicates[0], k.Duplicates[1]))
	case *kind.MinProperties:
		return one(fmt.Sprintf("expected at least %d properties, given %d", k.Want, k.Got))
	case *kind.MaxProperties:
		return one(fmt.Sprintf("expected at most %d properties, given %d", k.Want, k.Got))
	case *kind.Format:
		return one(fmt.Sprintf("expected format %s, given %s", k.Want, show(given)))
	case *kind.AnyOf, *kind.OneOf:
		want := describeSchema(subSchema(root, inst, v.InstanceLocation))
		if want == "" {
			want = "a value matching one of the allowed shapes"
		}
		return one(fmt.Sprintf("expected %s, given %s", want, showTyped(given)))
	case *kind.FalseSchema:
		return one("not allowed")
	}
	return one(v.ErrorKind.LocalizedString(printer()))
}

// numberNoun is "an integer" when the schema at loc only allows
// integers, else "a number".
func numberNoun(root *jsonschema.Schema, inst any, loc []string) string {
	if s := subSchema(root, inst, loc); s != nil && s.Types != nil {
		if t := s.Types.ToStrings(); len(t) == 1 && t[0] == "integer" {
			return "an integer"
		}
	}
	return "a number"
}

// describeSchema says in a few words what a schema accepts: "string",
// "integer >= 1", "one of \"a\", \"b\"", "string or null".
func describeSchema(s *jsonschema.Schema) string {
	if s == nil {
		return ""
	}
	s = deref(s)
	if s.Enum != nil {
		return "one of " + showList(s.Enum.Values)
	}
	if s.Const != nil {
		return show(*s.Const)
	}
	if s.Types != nil && !s.Types.IsEmpty() {
		return strings.Join(s.Types.ToStrings(), " or ")
	}
	var alts []string
	for _, sub := range append(append([]*jsonschema.Schema(nil), s.AnyOf...), s.OneOf...) {
		if d := describeSchema(sub); d != "" {
			alts = append(alts, d)
		}
	}
	return strings.Join(alts, " or ")
}

func deref(s *jsonschema.Schema) *jsonschema.Schema {
	for i := 0; s != nil && s.Ref != nil && i < 32; i++ {
		if s.Types != nil || s.Enum != nil || s.Properties != nil {
			return s
		}
		s = s.Ref
	}
	return s
}

// subSchema finds the schema that governs the value at loc, following
// properties, additionalProperties, items, prefixItems and $ref. It returns
// nil when the path leads through combinators it cannot decide.
func subSchema(s *jsonschema.Schema, inst any, loc []string) *jsonschema.Schema {
	for _, seg := range loc {
		s = deref(s)
		if s == nil {
			return nil
		}
		switch x := inst.(type) {
		case map[string]any:
			inst = x[seg]
			if p, ok := s.Properties[seg]; ok {
				s = p
			} else if ap, ok := s.AdditionalProperties.(*jsonschema.Schema); ok {
				s = ap
			} else {
				return nil
			}
		case []any:
			i, err := strconv.Atoi(seg)
			if err != nil || i < 0 || i >= len(x) {
				return nil
			}
			inst = x[i]
			switch {
			case i < len(s.PrefixItems):
				s = s.PrefixItems[i]
			case s.Items2020 != nil:
				s = s.Items2020
			default:
				if it, ok := s.Items.(*jsonschema.Schema); ok {
					s = it
				} else {
					return nil
				}
			}
		default:
			// A missing property: its schema comes from the parent object.
			if p, ok := s.Properties[seg]; ok {
				s, inst = p, nil
				continue
			}
			return nil
		}
	}
	return deref(s)
}

func allowedNames(s *jsonschema.Schema) []string {
	if s == nil {
		return nil
	}
	names := make([]string, 0, len(s.Properties))
	for n := range s.Properties {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// displayPath writes an instance location the way a model writes access
// paths: "filter.tags[0]".
func displayPath(inst any, loc []string) string {
	if len(loc) == 0 {
		return "(arguments)"
	}
	var b strings.Builder
	for _, seg := range loc {
		switch x := inst.(type) {
		case []any:
			b.WriteString("[" + seg + "]")
			if i, err := strconv.Atoi(seg); err == nil && i >= 0 && i < len(x) {
				inst = x[i]
			} else {
				inst = nil
			}
			continue
		case map[string]any:
			inst = x[seg]
		default:
			inst = nil
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(seg)
	}
	return b.String()
}

func joinPath(parent, name string) string {
	if parent == "(arguments)" || parent == "" {
		return name
	}
	return parent + "." + name
}

func valueAt(inst any, loc []string) any {
	for _, seg := range loc {
		switch x := inst.(type) {
		case map[string]any:
			inst = x[seg]
		case []any:
			i, err := strconv.Atoi(seg)
			if err != nil || i < 0 || i >= len(x) {
				return nil
			}
			inst = x[i]
		default:
			return nil
		}
	}
	return inst
}

const maxShown = 60

// show writes a value as compact JSON, cut to a readable length.
func show(v any) string {
	b, err := chat.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	s := string(b)
	if len(s) > maxShown {
		cut := maxShown
		for cut > 0 && !utf8Start(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }

// showTyped prefixes a value with its JSON type: `string "five"`.
func showTyped(v any) string { return jsonType(v) + " " + show(v) }

func jsonType(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case json.Number:
		if _, err := x.Int64(); err == nil {
			return "integer"
		}
		return "number"
	case float64, int, int64:
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

func showList(vs []any) string {
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = show(v)
	}
	return strings.Join(parts, ", ")
}

// ratString writes a bound as a decimal: 0.25, not 1/4.
func ratString(r *big.Rat) string {
	if r.IsInt() {
		return r.Num().String()
	}
	f, _ := r.Float64()
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// maxExponent bounds number literals: beyond float64's range the
// validator's exact arithmetic would build numbers with millions of digits
// (or, for unparsable ones, panic), so such literals are refused first.
const maxExponent = 400

// hugeNumbers returns the locations of number literals with an absurd
// exponent or length.
func hugeNumbers(v any, loc []string) [][]string {
	switch x := v.(type) {
	case json.Number:
		s := string(x)
		if len(s) > maxExponent {
			return [][]string{loc}
		}
		if i := strings.IndexAny(s, "eE"); i >= 0 {
			exp, err := strconv.Atoi(strings.TrimPrefix(s[i+1:], "+"))
			if err != nil || exp > maxExponent || exp < -maxExponent {
				return [][]string{loc}
			}
		}
	case map[string]any:
		var out [][]string
		for k, e := range x {
			out = append(out, hugeNumbers(e, append(append([]string(nil), loc...), k))...)
		}
		return out
	case []any:
		var out [][]string
		for i, e := range x {
			out = append(out, hugeNumbers(e, append(append([]string(nil), loc...), strconv.Itoa(i)))...)
		}
		return out
	}
	return nil
}

func (r *Registry) outOfRange(call chat.ToolCall, e *entry, inst any, locs [][]string) *Error {
	var causes []Cause
	for _, loc := range locs {
		causes = append(causes, Cause{Path: displayPath(inst, loc), Keyword: "type",
			Text: fmt.Sprintf("expected a number of ordinary size, given %s", show(valueAt(inst, loc)))})
	}
	sort.Slice(causes, func(i, j int) bool { return causes[i].Path < causes[j].Path })
	return r.argumentsError(call, causes, exampleArgs(e, nil))
}

// safeValidate runs the validator, turning a panic inside the library into
// an error: model output must never crash the harness.
func safeValidate(s *jsonschema.Schema, inst any) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("registry: the schema validator failed on these arguments: %v", p)
		}
	}()
	return s.Validate(inst)
}

package templates

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ardanlabs/jinja"
	"github.com/toolharness/toolharness/chat"
)

// SpecialTokens are the BOS and EOS texts a template may print; "" = the
// tokenizer has none (left undefined, as transformers leaves unset tokens
// out of special_tokens_map).
type SpecialTokens struct {
	BOS string `yaml:"bos_token" json:"bos_token,omitempty"`
	EOS string `yaml:"eos_token" json:"eos_token,omitempty"`
}

// Jinja is a compiled Hugging Face chat template, rendered the way
// transformers' apply_chat_template renders it (see [CompileJinja]).
// A *Jinja is safe for concurrent use.
type Jinja struct {
	name       string
	source     string
	tokens     SpecialTokens
	tmpl       *jinja.Template
	deviations []Deviation
	// mutates: the template calls a method that changes a list or a dict
	// in place (the engine allows what Jinja2's sandbox refuses), so values
	// must not be shared between renders.
	mutates bool
	// vars are keyword arguments of every rendering (WithVars), as JSON
	// and as engine values.
	vars      map[string]json.RawMessage
	varValues map[string]jinja.Value
}

// WithVars returns the template with vars as keyword arguments of every
// rendering (enable_thinking, reasoning_effort, …, as transformers'
// template_kwargs), under those of the rendering itself.
func (j *Jinja) WithVars(vars map[string]json.RawMessage) (*Jinja, error) {
	c := *j
	c.vars, c.varValues = vars, make(map[string]jinja.Value, len(vars))
	for k, raw := range vars {
		val, err := jsonValue(raw)
		if err != nil {
			return nil, fmt.Errorf("templates: %s: %s: %w", j.name, k, err)
		}
		c.varValues[k] = val
	}
	return &c, nil
}

// JinjaVars are the variables of one rendering, as transformers passes them.
type JinjaVars struct {
	// Messages is a JSON array of message objects; key order is kept.
	Messages json.RawMessage
	// Tools is a JSON array, or nil for tools=None.
	Tools               json.RawMessage
	AddGenerationPrompt bool
	// Now is strftime_now's clock: rendering fails if the template calls
	// strftime_now and Now is zero (no clock is read here).
	Now time.Time
	// Extra holds the other keyword arguments (enable_thinking,
	// reasoning_effort, date_string, …); they override the special tokens,
	// as transformers' template_kwargs do.
	Extra map[string]json.RawMessage
}

// ErrNoClock is returned (wrapped) when a template calls strftime_now and
// JinjaVars.Now is zero.
var ErrNoClock = errors.New("templates: the template calls strftime_now but no clock (JinjaVars.Now) was given")

// CompileJinja compiles a chat template's source. The engine
// (github.com/ardanlabs/jinja) is configured as transformers configures
// Jinja2: trim_blocks and lstrip_blocks, loop controls, {% generation %},
// raise_exception, strftime_now and Python's tojson. Input the engine
// would mishandle is normalised first where that is sound (see
// normaliseSource); constructs it cannot match are reported by
// [Jinja.Deviations].
func CompileJinja(name, source string, tokens SpecialTokens) (*Jinja, error) {
	if strings.TrimSpace(source) == "" {
		return nil, fmt.Errorf("templates: %s: empty chat template", name)
	}
	t, err := compileGuarded(guardMacros(normaliseSource(source)))
	if err != nil {
		return nil, fmt.Errorf("templates: %s: %w", name, err)
	}
	return &Jinja{name: name, source: source, tokens: tokens, tmpl: t, deviations: detectDeviations(source),
		mutates: mutatingCall.MatchString(source)}, nil
}

// Name is the name the template was compiled under (a file or model name).
func (j *Jinja) Name() string { return j.name }

// Source is the template text as given (before any normalisation).
func (j *Jinja) Source() string { return j.source }

// Tokens are the special tokens the template is rendered with.
func (j *Jinja) Tokens() SpecialTokens { return j.tokens }

// Deviations lists the constructs of this template on which the engine is
// known to render differently from Jinja2 (nil: none known). Callers
// should report them rather than trust the rendering silently.
func (j *Jinja) Deviations() []Deviation { return j.deviations }

// Render renders v like transformers' apply_chat_template. When the
// template raises (raise_exception), the error is a *TemplateError with
// the template's own message.
func (j *Jinja) Render(v JinjaVars) (string, error) {
	data, err := j.renderData(v)
	if err != nil {
		return "", err
	}
	return j.render(data)
}

// renderObjects renders ordered message objects (messageObjects) and
// prepared tools (nil: tools=None) without going through JSON text.
func (j *Jinja) renderObjects(msgs []any, ts *ToolSet, addGenerationPrompt bool, now time.Time) (string, error) {
	messages, err := toValue(listOrEmpty(msgs))
	if err != nil {
		return "", fmt.Errorf("templates: %s: messages: %w", j.name, err)
	}
	tools := jinja.None()
	if ts != nil {
		tools = ts.value
		if j.mutates {
			if tools, err = toValue(listOrEmpty(ts.openAI)); err != nil {
				return "", fmt.Errorf("templates: %s: tools: %w", j.name, err)
			}
		}
	}
	return j.render(j.baseData(messages, tools, addGenerationPrompt, now))
}

func (j *Jinja) render(data map[string]jinja.Value) (string, error) {
	out, err := renderGuarded(j.tmpl, data)
	if err != nil {
		var raised *raisedError
		if errors.As(err, &raised) {
			return "", &TemplateError{Family: j.name, Message: raised.message}
		}
		for _, sentinel := range []error{ErrNoClock, ErrRecursion} {
			if errors.Is(err, sentinel) {
				return "", fmt.Errorf("templates: %s: %w", j.name, sentinel)
			}
		}
		return "", fmt.Errorf("templates: %s: %w", j.name, err)
	}
	return out, nil
}

func (j *Jinja) renderData(v JinjaVars) (map[string]jinja.Value, error) {
	messages, err := jsonValue(v.Messages)
	if err != nil {
		return nil, fmt.Errorf("templates: %s: messages: %w", j.name, err)
	}
	if !messages.IsList() {
		return nil, fmt.Errorf("templates: %s: messages must be a JSON array", j.name)
	}
	tools := jinja.None()
	if len(v.Tools) > 0 && strings.TrimSpace(string(v.Tools)) != "null" {
		if tools, err = jsonValue(v.Tools); err != nil {
			return nil, fmt.Errorf("templates: %s: tools: %w", j.name, err)
		}
		if !tools.IsList() {
			return nil, fmt.Errorf("templates: %s: tools must be a JSON array or null", j.name)
		}
	}
	data := j.baseData(messages, tools, v.AddGenerationPrompt, v.Now)
	for k, raw := range v.Extra {
		val, err := jsonValue(raw)
		if err != nil {
			return nil, fmt.Errorf("templates: %s: %s: %w", j.name, k, err)
		}
		data[k] = val
	}
	return data, nil
}

// baseData is the variables of every rendering.
func (j *Jinja) baseData(messages, tools jinja.Value, addGenerationPrompt bool, now time.Time) map[string]jinja.Value {
	data := map[string]jinja.Value{
		"messages":              messages,
		"tools":                 tools,
		"documents":             jinja.None(),
		"add_generation_prompt": jinja.NewBool(addGenerationPrompt),
		"raise_exception":       jinja.NewCallable("raise_exception", raiseException),
		"strftime_now":          jinja.NewCallable("strftime_now", strftimeNow(now)),
		depthExceeds:            jinja.NewCallable(depthExceeds, recursionLimit),
		"range":                 jinja.NewCallable("range", sandboxRange),
		// Filters the engine lacks: it looks a filter up among the
		// variables when it has none of that name.
		"format": jinja.NewCallable("format", formatFilter),
	}
	if j.tokens.BOS != "" {
		data["bos_token"] = jinja.NewString(j.tokens.BOS)
	}
	if j.tokens.EOS != "" {
		data["eos_token"] = jinja.NewString(j.tokens.EOS)
	}
	for k, val := range j.varValues {
		if j.mutates {
			// A template that changes values in place gets its own copy
			// (the JSON was checked in WithVars).
			val, _ = jsonValue(j.vars[k])
		}
		data[k] = val
	}
	return data
}

// mutatingCall finds calls of the methods that change a list or a dict.
var mutatingCall = regexp.MustCompile(`\.\s*(append|extend|insert|pop|remove|clear|update|setdefault|popitem|sort|reverse)\s*\(`)

// errEnginePanic marks a panic inside the engine, turned into an error:
// what a template renders includes model output, which must never crash
// the process.
var errEnginePanic = errors.New("the Jinja engine failed")

func compileGuarded(src string) (t *jinja.Template, err error) {
	defer func() {
		if r := recover(); r != nil {
			t, err = nil, fmt.Errorf("%w: %v", errEnginePanic, r)
		}
	}()
	return jinja.Compile(src)
}

func renderGuarded(t *jinja.Template, data map[string]jinja.Value) (out string, err error) {
	defer func() {
		if r := recover(); r != nil {
			out, err = "", fmt.Errorf("%w: %v", errEnginePanic, r)
		}
	}()
	return t.RenderValues(data)
}

// maxRange is Jinja2's sandbox MAX_RANGE: transformers renders in an
// ImmutableSandboxedEnvironment, whose range refuses more items.
const maxRange = 100000

// sandboxRange is the sandbox's range: Python's range, refusing more than
// maxRange items as Jinja2 does (an unbounded range would hang the
// process).
func sandboxRange(args []jinja.Value, _ map[string]jinja.Value) (jinja.Value, error) {
	var bounds [3]int64
	bounds[2] = 1
	for i, a := range args {
		if !a.IsInt() && !a.IsBool() || i > 2 {
			return jinja.Undefined(), fmt.Errorf("range() takes 1 to 3 integers")
		}
	}
	switch len(args) {
	case 1:
		bounds[1] = intOf(args[0])
	case 2, 3:
		bounds[0], bounds[1] = intOf(args[0]), intOf(args[1])
		if len(args) == 3 {
			bounds[2] = intOf(args[2])
		}
	default:
		return jinja.Undefined(), fmt.Errorf("range() takes 1 to 3 integers")
	}
	start, stop, step := bounds[0], bounds[1], bounds[2]
	if step == 0 {
		return jinja.Undefined(), fmt.Errorf("range() arg 3 must not be zero")
	}
	var n int64
	switch {
	case step > 0 && stop > start:
		n = (stop - start + step - 1) / step
	case step < 0 && stop < start:
		n = (start - stop - step - 1) / -step
	}
	if n > maxRange || n < 0 {
		//lint:ignore ST1005 Jinja2's sandbox message, word for word
		return jinja.Undefined(), fmt.Errorf("Range too big. The sandbox blocks ranges larger than MAX_RANGE (%d).", maxRange)
	}
	items := make([]jinja.Value, n)
	for i := range items {
		items[i] = jinja.NewInt(start + int64(i)*step)
	}
	return jinja.NewList(items), nil
}

func intOf(v jinja.Value) int64 {
	if v.IsBool() {
		if v.AsBool() {
			return 1
		}
		return 0
	}
	return v.AsInt()
}

// raisedError carries raise_exception's message through the engine.
type raisedError struct{ message string }

func (e *raisedError) Error() string { return e.message }

func raiseException(args []jinja.Value, _ map[string]jinja.Value) (jinja.Value, error) {
	if len(args) == 0 {
		return jinja.Undefined(), &raisedError{message: "raise_exception() called without a message"}
	}
	return jinja.Undefined(), &raisedError{message: pyStrValue(args[0])}
}

func strftimeNow(now time.Time) func([]jinja.Value, map[string]jinja.Value) (jinja.Value, error) {
	return func(args []jinja.Value, _ map[string]jinja.Value) (jinja.Value, error) {
		if now.IsZero() {
			return jinja.Undefined(), ErrNoClock
		}
		if len(args) == 0 || !args[0].IsString() {
			return jinja.Undefined(), errors.New("strftime_now() takes a format string")
		}
		return jinja.NewString(PyStrftime(args[0].AsString(), now)), nil
	}
}

// pyStrValue is Python's str() of a value (the engine prints like Python).
func pyStrValue(v jinja.Value) string {
	if v.IsString() {
		return v.AsString()
	}
	return v.String()
}

// jsonValue decodes JSON into an engine value as Python's json.loads
// would: objects keep their key order (a repeated key keeps its first
// position and its last value), integers stay integers, other numbers
// become floats.
func jsonValue(raw json.RawMessage) (jinja.Value, error) {
	v, err := chat.DecodeOrdered(raw)
	if err != nil {
		return jinja.Undefined(), err
	}
	return toValue(v)
}

func toValue(v any) (jinja.Value, error) {
	switch x := v.(type) {
	case nil:
		return jinja.None(), nil
	case bool:
		return jinja.NewBool(x), nil
	case string:
		return jinja.NewString(pyString(x)), nil
	case int:
		return jinja.NewInt(int64(x)), nil
	case json.Number:
		return numberValue(x)
	case []any:
		items := make([]jinja.Value, len(x))
		for i, e := range x {
			val, err := toValue(e)
			if err != nil {
				return jinja.Undefined(), err
			}
			items[i] = val
		}
		return jinja.NewList(items), nil
	case *chat.Object:
		d := jinja.NewDict()
		for _, m := range x.Members {
			val, err := toValue(m.Value)
			if err != nil {
				return jinja.Undefined(), err
			}
			d.AsDict().Set(m.Key, val)
		}
		return d, nil
	}
	return jinja.Undefined(), fmt.Errorf("unexpected JSON value %T", v)
}

func numberValue(n json.Number) (jinja.Value, error) {
	s := n.String()
	if !strings.ContainsAny(s, ".eE") {
		if i, err := n.Int64(); err == nil {
			return jinja.NewInt(i), nil
		}
	}
	f, err := n.Float64()
	if err != nil {
		return jinja.Undefined(), fmt.Errorf("number %s: %w", s, err)
	}
	return jinja.NewFloat(f), nil
}

// pyString is s as a Python string holds it after a JSON round trip
// (writePyString): each byte of invalid UTF-8 becomes U+FFFD.
func pyString(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b.WriteRune(utf8.RuneError)
		} else {
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

package templates

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"path"
	"sort"
	"strings"
	"text/template"
	"time"

	"github.com/toolharness/toolharness/chat"
	"gopkg.in/yaml.v3"
)

//go:embed families/*.yaml families/*.tmpl families/*.jinja
var familyFS embed.FS

// Family is one model family's chat template: its definition (a YAML file)
// and its template text (a text/template file), both embedded. Adding a
// family means adding those two files.
type Family struct {
	// Name is the command-line name (qwen2.5, llama3.1, …).
	Name        string `yaml:"name" json:"name"`
	Description string `yaml:"description" json:"description"`
	// Official names the official template this one reproduces.
	Official string `yaml:"official" json:"official"`
	// NativeFormat is the parse format the family's template renders tools
	// and calls in; "" when the template has no tool support.
	NativeFormat string `yaml:"native_format" json:"native_format,omitempty"`
	// DefaultFormat is the format used when none is asked for: the native
	// one, or a prompted format for families without native tools.
	DefaultFormat string `yaml:"default_format" json:"default_format"`
	// BOS is the beginning-of-sequence text the template prints ("" when it
	// prints none); EOS is the template's eos_token.
	BOS string `yaml:"bos" json:"bos,omitempty"`
	EOS string `yaml:"eos" json:"eos,omitempty"`
	// RoleMarkers maps a role to the text that opens its turn; EndOfTurn
	// closes a turn.
	RoleMarkers map[string]string `yaml:"role_markers" json:"role_markers"`
	EndOfTurn   string            `yaml:"end_of_turn" json:"end_of_turn"`
	// CallEnd closes an assistant turn that made tool calls when it differs
	// from EndOfTurn (gpt-oss: <|call|>).
	CallEnd string `yaml:"call_end" json:"call_end,omitempty"`
	// GenerationPrompt is what the template appends to ask for a reply.
	GenerationPrompt string `yaml:"generation_prompt" json:"generation_prompt"`
	// Stop holds the stop sequences of a generation.
	Stop []string `yaml:"stop" json:"stop"`
	// ControlTokens are the special tokens of the family's tokenizer that a
	// template emits; untrusted text must never carry them.
	ControlTokens []string `yaml:"control_tokens" json:"control_tokens"`
	// Placement says where the template puts tools, calls and results.
	Placement Placement `yaml:"placement" json:"placement"`
	// PrintsDate is true when the template prints the current date.
	PrintsDate bool `yaml:"prints_date" json:"prints_date,omitempty"`
	// Fingerprints detect the family from a template's text: a template
	// matches a set when it contains every string of the set.
	Fingerprints [][]string `yaml:"fingerprints" json:"fingerprints"`
	// Quirks lists the official template's tool-loop defects and the stable
	// alternative, for documentation.
	Quirks []string `yaml:"quirks" json:"quirks,omitempty"`
	// Template is the file name of the template under families/: the
	// official chat template itself (NAME.jinja, rendered by the Jinja
	// engine) or, where the engine cannot match it, a text/template
	// transliteration (NAME.tmpl). For a loaded template, its name.
	Template string `yaml:"template" json:"template"`
	// Tokenizer holds the special tokens the official template is
	// rendered with (bos_token, eos_token), for .jinja templates.
	Tokenizer SpecialTokens `yaml:"tokenizer" json:"tokenizer"`
	// Conventions say how the official template expects its input.
	Conventions Conventions `yaml:"conventions" json:"conventions"`

	tmpl     *template.Template
	jinja    *Jinja
	external *externalTemplate
	// loaded: the family renders a template loaded from a model (a
	// built-in family recognised in it, or none), not an embedded one
	// (see Loaded).
	loaded bool
	// renderedBy says why a transliteration renders a loaded template
	// (see RenderedBy); "" otherwise.
	renderedBy string
}

// externalTemplate is a template this package does not compile itself
// (an Ollama Go template, package templates/ollamatmpl).
type externalTemplate struct {
	source string
	render func(Input) (string, error)
}

// WithRenderer returns f rendering with render, a template this package
// does not compile itself; source is its text (Family.Source).
func (f Family) WithRenderer(source string, render func(Input) (string, error)) Family {
	f.tmpl, f.jinja = nil, nil
	f.external = &externalTemplate{source: source, render: render}
	return f
}

// Placement describes where a family's template puts tool material.
type Placement struct {
	Tools   string `yaml:"tools" json:"tools"`
	Calls   string `yaml:"calls" json:"calls"`
	Results string `yaml:"results" json:"results"`
}

// Input is what a template renders.
type Input struct {
	Messages []chat.Message
	// Tools is nil when no tools are offered (the template's tools=None).
	Tools []chat.Tool
	// ToolSet, when set, is Tools prepared once (NewToolSet) and stands
	// for them: Tools is then not read.
	ToolSet *ToolSet
	// AddGenerationPrompt appends the assistant turn opener.
	AddGenerationPrompt bool
	// Now is the clock for families that print a date. It must be set by
	// the caller (no clock is read here).
	Now time.Time
}

// ErrUnknownFamily is returned (wrapped) by Lookup for a name it does not know.
var ErrUnknownFamily = errors.New("templates: unknown family")

// TemplateError is an error the official template raises too (for example
// "This model only supports single tool-calls at once!").
type TemplateError struct {
	Family  string
	Message string
}

func (e *TemplateError) Error() string {
	return fmt.Sprintf("templates: %s: %s", e.Family, e.Message)
}

// Families returns every family, sorted by name. Each call loads fresh
// copies, so callers may not share state through them.
func Families() ([]Family, error) {
	entries, err := familyFS.ReadDir("families")
	if err != nil {
		return nil, fmt.Errorf("templates: %w", err)
	}
	var out []Family
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".yaml") {
			continue
		}
		f, err := loadFamily(e.Name())
		if err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// Names returns the family names, sorted (each family's definition file is
// named after it).
func Names() []string {
	entries, err := familyFS.ReadDir("families")
	if err != nil {
		return nil
	}
	var names []string
	for _, e := range entries {
		if n, ok := strings.CutSuffix(e.Name(), ".yaml"); ok {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	return names
}

// Lookup returns the family called name, loading only its own files.
func Lookup(name string) (Family, error) {
	for _, n := range Names() {
		if n != name {
			continue
		}
		f, err := loadFamily(name + ".yaml")
		if err != nil {
			return Family{}, err
		}
		if f.Name != name {
			return Family{}, fmt.Errorf("templates: %s.yaml names the family %q", name, f.Name)
		}
		return f, nil
	}
	return Family{}, fmt.Errorf("%w %q (known: %s)", ErrUnknownFamily, name, strings.Join(Names(), ", "))
}

func loadFamily(file string) (Family, error) {
	data, err := familyFS.ReadFile(path.Join("families", file))
	if err != nil {
		return Family{}, fmt.Errorf("templates: %w", err)
	}
	var f Family
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil {
		return Family{}, fmt.Errorf("templates: %s: %w", file, err)
	}
	if f.Name == "" || f.Template == "" || f.DefaultFormat == "" {
		return Family{}, fmt.Errorf("templates: %s: name, template and default_format are required", file)
	}
	src, err := familyFS.ReadFile(path.Join("families", f.Template))
	if err != nil {
		return Family{}, fmt.Errorf("templates: %s: %w", file, err)
	}
	if strings.HasSuffix(f.Template, ".jinja") {
		if f.jinja, err = CompileJinja(f.Name, string(src), f.Tokenizer); err != nil {
			return Family{}, err
		}
		return f, nil
	}
	t, err := template.New(f.Template).Funcs(funcMap(f.Name)).Parse(string(src))
	if err != nil {
		return Family{}, fmt.Errorf("templates: %s: %w", f.Template, err)
	}
	f.tmpl = t
	return f, nil
}

// Source returns the family's template text.
func (f Family) Source() string {
	if f.jinja != nil {
		return f.jinja.Source()
	}
	if f.external != nil {
		return f.external.source
	}
	src, _ := familyFS.ReadFile(path.Join("families", f.Template))
	return string(src)
}

// Render renders in with the family's template, byte-identical to the
// official template for the same input (in the family's native format).
func (f Family) Render(in Input) (string, error) {
	if len(in.Messages) == 0 {
		return "", fmt.Errorf("templates: %s: no messages to render", f.Name)
	}
	if f.jinja != nil {
		return f.renderJinja(in)
	}
	if f.external != nil {
		return f.external.render(in)
	}
	if f.tmpl == nil {
		return "", fmt.Errorf("templates: family %q was not loaded with Lookup or FamilyOf", f.Name)
	}
	d, err := newView(f, in)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	if err := f.tmpl.Execute(&b, d); err != nil {
		var te *TemplateError
		if errors.As(err, &te) {
			return "", te
		}
		return "", fmt.Errorf("templates: %s: %w", f.Name, err)
	}
	return b.String(), nil
}

// Jinja returns the compiled chat template the family renders with (nil
// for a transliterated family).
func (f Family) Jinja() *Jinja { return f.jinja }

// Loaded reports that the family renders a template loaded from a model
// (FamilyOf) rather than an embedded one: for a built-in family's
// definition, the calls may have moved on from its native format.
func (f Family) Loaded() bool { return f.loaded }

// Definition returns the family's definition file (YAML) as written.
func (f Family) Definition() string {
	data, _ := familyFS.ReadFile(path.Join("families", f.Name+".yaml"))
	return string(data)
}

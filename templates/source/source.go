package source

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/toolharness/toolharness/templates"
)

// Template is a chat template as found.
type Template struct {
	// Name names the model or file it came from.
	Name string `json:"name"`
	// Text is the Jinja source.
	Text string `json:"-"`
	// Tokens are the BOS and EOS texts the template is rendered with.
	Tokens templates.SpecialTokens `json:"tokens"`
	// Origin says where Text was read ("tokenizer_config.json
	// chat_template[tool_use]", "GGUF tokenizer.chat_template", …).
	Origin string `json:"origin"`
}

// Options choose among a file's templates.
type Options struct {
	// Tools picks the tool_use template of a named list (as transformers
	// does when tools are given).
	Tools bool
	// Stdin is read for the path "-".
	Stdin io.Reader
}

// ErrNoTemplate is returned (wrapped) when a file holds no chat template.
var ErrNoTemplate = errors.New("source: no chat template")

// Load reads the chat template at path: a .jinja (or any text) file, a
// tokenizer_config.json, a model folder, a .gguf file, or "-" for
// standard input.
func Load(path string, o Options) (Template, error) {
	if path == "-" {
		if o.Stdin == nil {
			return Template{}, errors.New("source: -: no standard input")
		}
		data, err := io.ReadAll(o.Stdin)
		if err != nil {
			return Template{}, fmt.Errorf("source: stdin: %w", err)
		}
		if err := checkText("standard input", data); err != nil {
			return Template{}, err
		}
		return fromText("stdin", data, o)
	}
	info, err := os.Stat(path)
	if err != nil {
		return Template{}, fmt.Errorf("source: %w", err)
	}
	if info.IsDir() {
		return FromDir(path, o)
	}
	if isGGUF(path) {
		return FromGGUF(path, o)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return Template{}, fmt.Errorf("source: %w", err)
	}
	if err := checkText(path, data); err != nil {
		return Template{}, err
	}
	t, err := fromText(path, data, o)
	if errors.Is(err, ErrNoTemplate) && filepath.Base(path) == "tokenizer_config.json" {
		// transformers' newer layout keeps the template beside the
		// config, in chat_template.jinja (or chat_template.json): the
		// folder is what the config belongs to.
		if dt, derr := FromDir(filepath.Dir(path), o); derr == nil {
			return dt, nil
		}
	}
	if err != nil {
		return Template{}, err
	}
	if t.Name == path {
		t.Name = modelName(path)
	}
	return t, nil
}

// NotTemplateError is a file that cannot hold a chat template; Reason says
// what it is instead, for a caller to print under its own prefix.
type NotTemplateError struct {
	Reason string
}

func (e *NotTemplateError) Error() string { return "source: " + e.Reason }

// checkText refuses a file that cannot be a template or a tokenizer
// config, which would otherwise be rendered as literal template text: a
// .gguf without the GGUF magic (truncated, or not a model), a .json that
// is not a JSON object, binary data.
func checkText(path string, data []byte) error {
	switch ext := strings.ToLower(filepath.Ext(path)); {
	case ext == ".gguf":
		return &NotTemplateError{path + " is not a GGUF file (it does not start with the GGUF magic)"}
	case ext == ".json" && !(bytes.HasPrefix(bytes.TrimSpace(data), []byte("{")) && json.Valid(data)):
		return &NotTemplateError{path + " is not a tokenizer_config.json or chat_template.json (not a JSON object)"}
	case bytes.IndexByte(data, 0) >= 0 || !utf8.Valid(data):
		return &NotTemplateError{path + " is binary, not a chat template (a .jinja file, tokenizer_config.json, a model folder or a .gguf)"}
	}
	return nil
}

// fromText reads a JSON tokenizer config (or chat_template.json) or a
// plain template file.
func fromText(name string, data []byte, o Options) (Template, error) {
	trimmed := bytes.TrimSpace(data)
	if bytes.HasPrefix(trimmed, []byte("{")) && json.Valid(trimmed) {
		t, err := FromTokenizerConfig(data, o)
		if err != nil {
			return Template{}, fmt.Errorf("%w (%s)", err, name)
		}
		t.Name = name
		return t, nil
	}
	if len(trimmed) == 0 {
		return Template{}, fmt.Errorf("%w: %s is empty", ErrNoTemplate, name)
	}
	return Template{Name: name, Text: string(data), Origin: "file " + filepath.Base(name)}, nil
}

// FromTokenizerConfig reads an HF tokenizer_config.json (or a
// chat_template.json, which has only chat_template).
func FromTokenizerConfig(data []byte, o Options) (Template, error) {
	var cfg struct {
		ChatTemplate json.RawMessage `json:"chat_template"`
		BOS          json.RawMessage `json:"bos_token"`
		EOS          json.RawMessage `json:"eos_token"`
	}
	if err := json.Unmarshal(data, &cfg); err != nil {
		return Template{}, fmt.Errorf("source: tokenizer config: %w", err)
	}
	bos, err := tokenText(cfg.BOS)
	if err != nil {
		return Template{}, fmt.Errorf("source: tokenizer config: bos_token: %w", err)
	}
	eos, err := tokenText(cfg.EOS)
	if err != nil {
		return Template{}, fmt.Errorf("source: tokenizer config: eos_token: %w", err)
	}
	t := Template{Tokens: templates.SpecialTokens{BOS: bos, EOS: eos}}
	t.Text, t.Origin, err = pickTemplate(cfg.ChatTemplate, o.Tools)
	return t, err
}

// pickTemplate reads chat_template: a string, or a list of {name,
// template} of which transformers takes tool_use when tools are given and
// default otherwise.
func pickTemplate(raw json.RawMessage, tools bool) (text, origin string, err error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", "", fmt.Errorf("%w: the config has no chat_template", ErrNoTemplate)
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, "tokenizer_config.json chat_template", nil
	}
	var named []struct{ Name, Template string }
	if err := json.Unmarshal(raw, &named); err != nil {
		return "", "", fmt.Errorf("source: chat_template is neither a string nor a list of {name, template}")
	}
	byName := map[string]string{}
	var names []string
	for _, n := range named {
		byName[n.Name] = n.Template
		names = append(names, n.Name)
	}
	for _, want := range choice(tools) {
		if text, ok := byName[want]; ok {
			return text, "tokenizer_config.json chat_template[" + want + "]", nil
		}
	}
	return "", "", fmt.Errorf("%w: no default template among the named ones (%s)", ErrNoTemplate, strings.Join(names, ", "))
}

func choice(tools bool) []string {
	if tools {
		return []string{"tool_use", "default"}
	}
	return []string{"default"}
}

// tokenText reads a special token written as a string, {"content": …}
// or null.
func tokenText(raw json.RawMessage) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, nil
	}
	var obj struct {
		Content *string `json:"content"`
	}
	if err := json.Unmarshal(raw, &obj); err != nil || obj.Content == nil {
		return "", errors.New("want a string or an object with content")
	}
	return *obj.Content, nil
}

// FromDir reads a Hugging Face model folder.
func FromDir(dir string, o Options) (Template, error) {
	name := modelName(dir)
	var tokens templates.SpecialTokens
	var cfgTemplate Template
	var cfgErr error
	cfgPath := filepath.Join(dir, "tokenizer_config.json")
	if data, err := os.ReadFile(cfgPath); err == nil {
		cfgTemplate, cfgErr = FromTokenizerConfig(data, o)
		tokens = cfgTemplate.Tokens
		if cfgErr != nil && !errors.Is(cfgErr, ErrNoTemplate) {
			return Template{}, fmt.Errorf("%w (%s)", cfgErr, cfgPath)
		}
	}
	if data, err := os.ReadFile(filepath.Join(dir, "chat_template.jinja")); err == nil {
		return Template{Name: name, Text: string(data), Tokens: tokens, Origin: "chat_template.jinja"}, nil
	}
	if cfgTemplate.Text != "" {
		cfgTemplate.Name = name
		return cfgTemplate, nil
	}
	if data, err := os.ReadFile(filepath.Join(dir, "chat_template.json")); err == nil {
		t, err := FromTokenizerConfig(data, o)
		if err != nil {
			return Template{}, fmt.Errorf("%w (%s)", err, filepath.Join(dir, "chat_template.json"))
		}
		t.Name, t.Tokens, t.Origin = name, tokens, "chat_template.json"
		return t, nil
	}
	return Template{}, fmt.Errorf("%w in %s: no chat_template.jinja, no chat_template in tokenizer_config.json, no chat_template.json", ErrNoTemplate, dir)
}

// modelName is a path's base name without extension, the name a loaded
// template's family gets.
func modelName(path string) string {
	base := filepath.Base(filepath.Clean(path))
	if base == "tokenizer_config.json" || base == "chat_template.json" || base == "chat_template.jinja" {
		base = filepath.Base(filepath.Dir(filepath.Clean(path)))
	}
	for _, ext := range []string{".jinja", ".j2", ".json", ".gguf", ".txt", ".tmpl"} {
		if n, ok := strings.CutSuffix(base, ext); ok {
			return n
		}
	}
	return base // a folder such as GLM-4.5 keeps its dots
}

// Compile compiles the template for the Jinja engine.
func (t Template) Compile() (*templates.Jinja, error) {
	return templates.CompileJinja(t.Name, t.Text, t.Tokens)
}

// Family compiles the template and returns its templates.Family.
func (t Template) Family() (templates.Family, error) {
	j, err := t.Compile()
	if err != nil {
		return templates.Family{}, err
	}
	return templates.FamilyOf(j)
}

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/ollama/ollama/api"
	"github.com/urfave/cli/v2"

	"github.com/toolharness/toolharness/backend/llamacpp"
	"github.com/toolharness/toolharness/derive"
	"github.com/toolharness/toolharness/internal/reach"
	"github.com/toolharness/toolharness/templates"
	"github.com/toolharness/toolharness/templates/ollamatmpl"
	"github.com/toolharness/toolharness/templates/source"
)

// chatTemplateFlag is --chat-template FILE: the model's own chat template.
func chatTemplateFlag() cli.Flag {
	return &cli.StringFlag{Name: "chat-template", Usage: "the model's own chat template: a .jinja `FILE`, tokenizer_config.json, a Hugging Face model folder, a .gguf (- = stdin for render and templates show), or an Ollama model `NAME` on --host; " +
		"default: read from the server (the Ollama model's GGUF, llama.cpp /props)"}
}

// errNoTemplateFlags: neither --template nor --chat-template.
var errNoTemplateFlags = errors.New("no template given")

// flagFamily resolves --template FAMILY and --chat-template FILE (one of
// them; errNoTemplateFlags when neither is set). tools picks a tool_use
// template of a named list.
func flagFamily(c *cli.Context, tools bool, errw io.Writer) (templates.Family, error) {
	name, file := c.String("template"), c.String("chat-template")
	tv, err := readTemplateVars(c)
	if err != nil {
		return templates.Family{}, err
	}
	if name != "" && tv.set() {
		return templates.Family{}, usageError(c, "--bos, --eos and --template-var apply to a model's own template (--chat-template or the server's), not to --template %s", name)
	}
	switch {
	case name != "" && file != "":
		return templates.Family{}, errors.New("--template and --chat-template exclude each other: a family or the model's own template")
	case name != "":
		return templates.Lookup(name)
	case isModelName(file):
		f, err := ollamaFamily(c.Context, serverHost(c), file, tools, tv, errw)
		return f, modelArgError(file, serverHost(c), err)
	case file != "":
		t, err := source.Load(file, source.Options{Tools: tools, Stdin: c.App.Reader})
		if err != nil {
			return templates.Family{}, templateLoadError("--chat-template", file, err)
		}
		return loadedFamily(t, tv, errw)
	}
	return templates.Family{}, errNoTemplateFlags
}

// loadedFamily turns a loaded template into its family and says what it
// got: the detected family or the model's own template, and any
// construct the engine is known to render differently from Jinja2.
func loadedFamily(t source.Template, tv templateVars, errw io.Writer) (templates.Family, error) {
	tv.apply(&t)
	j, err := tv.compile(t)
	if err != nil {
		return templates.Family{}, err
	}
	f, err := templates.FamilyOf(j)
	if err != nil {
		return templates.Family{}, err
	}
	what := "no built-in family matches: rendering it as it is"
	if f.Name != t.Name {
		what = "recognised as the " + f.Name + " family, rendered by " + f.RenderedBy()
	}
	fmt.Fprintf(errw, "toolharness: chat template of %s from %s, %s\n", t.Name, t.Origin, what)
	// A recognised family brings its own tokens.
	warnMissingTokens(t, f.BOS, f.EOS, errw)
	if j := f.Jinja(); j != nil {
		for _, d := range j.Deviations() {
			fmt.Fprintf(errw, "toolharness: warning: the template uses %s\n", d)
		}
	}
	return f, nil
}

// withOwnCalls gives a loaded template outside the built-in families the
// call syntax derived from it as its native format (derive.Own), so that
// the template itself writes the catalog and the calls instead of the
// prompted default format's text; agent.NewRenderer does the same for
// run, chat and bench.
func withOwnCalls(f templates.Family) (templates.Family, error) {
	f, _, err := derive.Own(f)
	return f, err
}

// commandFamily resolves the template flags, else asks the server about
// the model; there is no default template.
func commandFamily(ctx context.Context, c *cli.Context, kind, host, model string, tools bool, errw io.Writer) (templates.Family, error) {
	if c.String("chat-template") == "-" {
		// These commands read the conversation or approvals from stdin,
		// or load the template once per model.
		return templates.Family{}, errors.New("--chat-template -: this command cannot read the template from standard input; give a file")
	}
	f, err := flagFamily(c, tools, errw)
	if !errors.Is(err, errNoTemplateFlags) {
		return f, err
	}
	tv, err := readTemplateVars(c)
	if err != nil {
		return templates.Family{}, err
	}
	return modelFamily(ctx, serverRef{kind: kind, host: host, apiKey: c.String("api-key"), tv: tv}, model, tools, errw)
}

// serverRef is the server a model's template is read from, and the
// template flags to load it with.
type serverRef struct {
	kind, host, apiKey string
	tv                 templateVars
}

// modelFamily finds a model's chat template on its server: an Ollama
// model's GGUF (found through the local manifest), else its Ollama Go
// template; a llama.cpp server's /props. Failing that, a one-line error
// says which flag to pass.
func modelFamily(ctx context.Context, srv serverRef, model string, tools bool, errw io.Writer) (templates.Family, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	switch srv.kind {
	case "ollama", "":
		return ollamaFamily(ctx, srv.host, model, tools, srv.tv, errw)
	case "llamacpp":
		return llamacppFamily(ctx, srv, tools, errw)
	}
	return templates.Family{}, fmt.Errorf("%s does not say which chat template %s has, and toolharness renders the prompt and the tool catalog with it: pass --template FAMILY or --chat-template FILE (toolharness templates list names the families)",
		reach.ServerName(srv.kind), model)
}

func ollamaFamily(ctx context.Context, host, model string, tools bool, tv templateVars, errw io.Writer) (templates.Family, error) {
	t, err := source.FromOllama(host, model, source.Options{Tools: tools})
	if err == nil {
		return loadedFamily(t, tv, errw)
	}
	why := err.Error()
	u, perr := parseURL(host)
	if perr != nil {
		return templates.Family{}, fmt.Errorf("--host %q: %w", host, perr)
	}
	show, serr := api.NewClient(u, &http.Client{}).Show(ctx, &api.ShowRequest{Model: model})
	if re := reach.FromError(serr, "ollama", host); re != nil {
		return templates.Family{}, re
	}
	var se api.StatusError
	if errors.As(serr, &se) && se.StatusCode == http.StatusNotFound {
		return templates.Family{}, &modelNotFoundError{kind: "ollama", host: host, model: model, err: serr}
	}
	if serr != nil {
		return templates.Family{}, fmt.Errorf("cannot read the chat template of %s (%s; /api/show: %v): pass --template FAMILY or --chat-template FILE", model, why, serr)
	}
	if len(tv.vars) > 0 {
		return templates.Family{}, fmt.Errorf("--template-var %s: only Ollama's Go template of %s is available (%s), and it takes no variables: pass --chat-template FILE for the model's own", strings.Join(tv.names(), ", "), model, why)
	}
	f, own, err := ollamatmpl.FamilyOf(model, show.Template, ollamaStops(show.Parameters))
	if err != nil {
		return templates.Family{}, fmt.Errorf("the Ollama template of %s: %w: pass --template FAMILY or --chat-template FILE", model, err)
	}
	if own {
		fmt.Fprintf(errw, "toolharness: only Ollama's own Go template of %s is available, not its Hugging Face chat template (%s); rendering the Go template as the server would (pass --chat-template FILE for the model's own)\n", model, why)
	} else {
		fmt.Fprintf(errw, "toolharness: the Hugging Face chat template of %s is not available (%s); its Ollama template is the %s family's, whose official template is used\n", model, why, f.Name)
	}
	return f, nil
}

// ollamaStops reads the stop parameters of /api/show's parameters text
// (lines of `name value`, values quoted).
func ollamaStops(params string) []string {
	var out []string
	for _, line := range strings.Split(params, "\n") {
		name, value, ok := strings.Cut(strings.TrimSpace(line), " ")
		if !ok || name != "stop" {
			continue
		}
		value = strings.TrimSpace(value)
		if s, err := strconv.Unquote(value); err == nil {
			value = s
		}
		out = append(out, value)
	}
	return out
}

func llamacppFamily(ctx context.Context, srv serverRef, tools bool, errw io.Writer) (templates.Family, error) {
	host := srv.host
	c, err := llamacpp.New(llamacpp.Config{BaseURL: host, APIKey: srv.apiKey})
	if err != nil {
		return templates.Family{}, err
	}
	p, err := c.Props(ctx)
	if re := reach.FromError(err, "llamacpp", host); re != nil {
		return templates.Family{}, re
	}
	if err != nil {
		return templates.Family{}, fmt.Errorf("cannot read the chat template from %s/props (%v): pass --template FAMILY or --chat-template FILE", host, err)
	}
	t := source.Template{Name: p.ModelAlias, Text: p.ChatTemplate, Tokens: templates.SpecialTokens{BOS: p.BOSToken, EOS: p.EOSToken},
		Origin: "llama.cpp /props chat_template"}
	if tools && p.ChatTemplateToolUse != "" {
		t.Text, t.Origin = p.ChatTemplateToolUse, "llama.cpp /props chat_template_tool_use"
	}
	if t.Name == "" {
		t.Name = "llama.cpp model"
	}
	if strings.TrimSpace(t.Text) == "" {
		return templates.Family{}, fmt.Errorf("%s/props has no chat_template: pass --template FAMILY or --chat-template FILE", host)
	}
	return loadedFamily(t, srv.tv, errw)
}

// showLoadedTemplate is templates show --chat-template FILE.
func showLoadedTemplate(c *cli.Context) error {
	f, err := flagFamily(c, true, c.App.ErrWriter)
	if err == nil {
		f, err = withOwnCalls(f)
	}
	if err != nil {
		return err
	}
	var deviations []templates.Deviation
	if j := f.Jinja(); j != nil {
		deviations = j.Deviations()
	}
	if c.Bool("json") {
		return writeJSONLine(c.App.Writer, struct {
			templates.Family
			Deviations []templates.Deviation `json:"deviations"`
		}{f, deviations})
	}
	w := c.App.Writer
	fmt.Fprintf(w, "family: %s\norigin: %s\nnative format: %q\ndefault format: %s\nbos: %q\neos: %q\n", f.Name, f.Official, f.NativeFormat, f.DefaultFormat, f.BOS, f.EOS)
	fmt.Fprintf(w, "generation prompt: %q\nend of turn: %q\nstop: %q\ncontrol tokens: %q\n", f.GenerationPrompt, f.EndOfTurn, f.Stop, f.ControlTokens)
	for _, d := range deviations {
		fmt.Fprintf(w, "deviation: %s\n", d)
	}
	_, err = fmt.Fprintf(w, "# template\n%s", f.Source())
	return err
}

// isModelName reports whether a template argument (--chat-template,
// templates inspect's FILE) names an Ollama model rather than a file: no
// file has that name, it is no absolute or dotted path, and it has none of
// a template file's extensions.
func isModelName(arg string) bool {
	if arg == "" || arg == "-" {
		return false
	}
	if _, err := os.Stat(arg); err == nil || filepath.IsAbs(arg) || strings.HasPrefix(arg, ".") {
		// A path (an Ollama name is never absolute nor starts with a dot).
		return false
	}
	switch strings.ToLower(filepath.Ext(arg)) {
	case ".jinja", ".j2", ".json", ".gguf", ".txt", ".tmpl":
		return false
	}
	return true
}

// modelArgError says, for a template argument that is no file, that it
// was looked up as a model and what came of it.
func modelArgError(arg, host string, err error) error {
	var mnf *modelNotFoundError
	var re *reach.Error
	switch {
	case err == nil:
		return nil
	case errors.As(err, &mnf):
		return fmt.Errorf("%s: no such file, and Ollama at %s has no model of that name (ollama pull %s to fetch it)", arg, host, arg)
	case errors.As(err, &re):
		return fmt.Errorf("%s: no such file, and %s to look it up as a model (--host)", arg, re.Error())
	}
	return fmt.Errorf("%s (an Ollama model on %s): %w", arg, host, err)
}

// modelTemplate loads an Ollama model's own chat template (from its
// GGUF, which the local server's models folder holds), for the commands
// that need the Jinja template itself (templates inspect).
func modelTemplate(c *cli.Context, model string) (*templates.Jinja, error) {
	host := serverHost(c)
	t, err := source.FromOllama(host, model, source.Options{Tools: true})
	if err != nil {
		// Say whether the server has the model at all.
		if _, ferr := ollamaFamily(c.Context, host, model, true, templateVars{}, io.Discard); ferr != nil {
			return nil, modelArgError(model, host, ferr)
		}
		return nil, fmt.Errorf("%s: the model's own chat template cannot be read here (%w)", model, err)
	}
	return templateWithFlags(c, t)
}

// templateLoadError is a template file that could not be loaded, in the
// user's terms: the flag, the file and the cause, without the chain of
// package prefixes ("source: stat FILE: …") a missing file or one that is
// no template carries.
func templateLoadError(flag, path string, err error) error {
	var pe *fs.PathError
	var nt *source.NotTemplateError
	switch {
	case errors.As(err, &pe):
		return fmt.Errorf("%s: %w", strings.TrimSpace(flag+" "+path), pe.Err)
	case errors.As(err, &nt) && flag != "":
		return fmt.Errorf("%s: %s", flag, nt.Reason)
	case errors.As(err, &nt):
		return errors.New(nt.Reason)
	case flag != "":
		return fmt.Errorf("%s: %w", flag, err)
	}
	return err
}

// templateWithFlags applies --bos, --eos and --template-var to a loaded
// template and compiles it.
func templateWithFlags(c *cli.Context, t source.Template) (*templates.Jinja, error) {
	tv, err := readTemplateVars(c)
	if err != nil {
		return nil, err
	}
	tv.apply(&t)
	warnMissingTokens(t, t.Tokens.BOS, t.Tokens.EOS, c.App.ErrWriter)
	return tv.compile(t)
}

// inspectedTemplate is templates inspect's argument: a template file, or
// an Ollama model's own template (isModelName).
func inspectedTemplate(c *cli.Context, arg string) (*templates.Jinja, error) {
	if isModelName(arg) {
		return modelTemplate(c, arg)
	}
	t, err := source.Load(arg, source.Options{Tools: true, Stdin: c.App.Reader})
	if err != nil {
		return nil, templateLoadError("", arg, err)
	}
	return templateWithFlags(c, t)
}

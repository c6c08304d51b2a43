package main

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/toolharness/toolharness/templates"
	"github.com/toolharness/toolharness/templates/source"
)

// templateVarFlags are --bos, --eos and --template-var, on every command
// that renders a loaded chat template.
func templateVarFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "bos", Usage: "the BOS token `TEXT` the template's bos_token prints (a bare .jinja carries none; a GGUF or tokenizer_config.json does)"},
		&cli.StringFlag{Name: "eos", Usage: "the EOS token `TEXT` the template's eos_token prints"},
		&cli.StringSliceFlag{Name: "template-var", Usage: "`KEY=VALUE` passed to the chat template as transformers' template kwargs, VALUE as JSON (false, 3, \"high\") or else a string: enable_thinking=false, reasoning_effort=high (repeatable)"},
	}
}

// templateVars are what --bos, --eos and --template-var set.
type templateVars struct {
	bos, eos       string
	bosSet, eosSet bool
	vars           map[string]json.RawMessage
}

var templateVarKey = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// readTemplateVars reads the flags of c (none where the command has none).
func readTemplateVars(c *cli.Context) (templateVars, error) {
	var tv templateVars
	if !definesFlag(c, "template-var") {
		return tv, nil
	}
	tv.bos, tv.bosSet = c.String("bos"), c.IsSet("bos")
	tv.eos, tv.eosSet = c.String("eos"), c.IsSet("eos")
	for _, kv := range c.StringSlice("template-var") {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || !templateVarKey.MatchString(k) {
			return tv, usageError(c, "--template-var %q: want KEY=VALUE with KEY a name (enable_thinking=false)", kv)
		}
		raw := json.RawMessage(v)
		if !json.Valid(raw) {
			raw, _ = json.Marshal(v)
		}
		if tv.vars == nil {
			tv.vars = map[string]json.RawMessage{}
		}
		tv.vars[k] = raw
	}
	return tv, nil
}

// set reports whether any of the flags was given.
func (tv templateVars) set() bool { return tv.bosSet || tv.eosSet || len(tv.vars) > 0 }

// apply sets --bos and --eos on a loaded template.
func (tv templateVars) apply(t *source.Template) {
	if tv.bosSet {
		t.Tokens.BOS = tv.bos
	}
	if tv.eosSet {
		t.Tokens.EOS = tv.eos
	}
}

// warnMissingTokens warns, naming the flags, when the template prints a
// token it is rendered without (bos and eos are the texts it gets).
func warnMissingTokens(t source.Template, bos, eos string, errw io.Writer) {
	var missing []string
	if bos == "" && strings.Contains(t.Text, "bos_token") {
		missing = append(missing, "bos_token (--bos TEXT)")
	}
	if eos == "" && strings.Contains(t.Text, "eos_token") {
		missing = append(missing, "eos_token (--eos TEXT)")
	}
	if len(missing) > 0 {
		fmt.Fprintf(errw, "toolharness: warning: the template of %s prints %s, which %s does not give: it renders as empty\n",
			t.Name, strings.Join(missing, " and "), t.Origin)
	}
}

// compile compiles a loaded template with the variables.
func (tv templateVars) compile(t source.Template) (*templates.Jinja, error) {
	j, err := t.Compile()
	if err != nil || len(tv.vars) == 0 {
		return j, err
	}
	return j.WithVars(maps.Clone(tv.vars))
}

// names lists the variables, for messages.
func (tv templateVars) names() []string { return slices.Sorted(maps.Keys(tv.vars)) }

package templates

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/toolharness/toolharness/chat"
)

// Conventions say how a template expects its input where it differs from
// the usual shape (vLLM's: content a string, "" on a turn that only calls
// tools; arguments an object; reasoning in reasoning_content).
type Conventions struct {
	// ReasoningKey is the message key that carries reasoning ("" =
	// reasoning_content; gpt-oss reads thinking).
	ReasoningKey string `yaml:"reasoning_key" json:"reasoning_key,omitempty"`
	// SystemToolsJSON puts the catalog on the system message as a "tools"
	// JSON string of the function objects (Phi-4-mini's GGUF template).
	SystemToolsJSON bool `yaml:"system_tools_json" json:"system_tools_json,omitempty"`
	// ArgumentsAsString passes call arguments as JSON strings (the OpenAI
	// wire shape) for templates that add them to a string.
	ArgumentsAsString bool `yaml:"arguments_as_string" json:"arguments_as_string,omitempty"`
}

// renderJinja renders in with the family's compiled chat template. The
// engine's values are built from the messages and the prepared tools
// directly, never through JSON text.
func (f Family) renderJinja(in Input) (string, error) {
	ts, err := in.toolSet()
	if err != nil {
		return "", err
	}
	msgs, err := messageObjects(f.Conventions, in.Messages, ts)
	if err != nil {
		return "", err
	}
	return f.jinja.renderObjects(msgs, ts, in.AddGenerationPrompt, in.Now)
}

// JinjaMessages writes messages as the JSON array a chat template reads
// (keys in the order transformers' callers write them), following c.
// tools is used only for Conventions.SystemToolsJSON.
func JinjaMessages(c Conventions, msgs []chat.Message, tools []chat.Tool) (json.RawMessage, error) {
	var ts *ToolSet
	if c.SystemToolsJSON && len(tools) > 0 {
		var err error
		if ts, err = NewToolSet(tools); err != nil {
			return nil, err
		}
	}
	out, err := messageObjects(c, msgs, ts)
	if err != nil {
		return nil, err
	}
	s, err := PyJSON(out, 0)
	if err != nil {
		return nil, fmt.Errorf("templates: messages: %w", err)
	}
	return json.RawMessage(s), nil
}

// messageObjects is JinjaMessages' array as ordered objects; ts is used
// only for Conventions.SystemToolsJSON.
func messageObjects(c Conventions, msgs []chat.Message, ts *ToolSet) ([]any, error) {
	reasoningKey := c.ReasoningKey
	if reasoningKey == "" {
		reasoningKey = "reasoning_content"
	}
	out := make([]any, 0, len(msgs))
	for i, m := range msgs {
		o := &chat.Object{}
		add := func(k string, v any) { o.Members = append(o.Members, chat.Member{Key: k, Value: v}) }
		add("role", string(m.Role))
		if m.Role == chat.RoleTool {
			if m.ToolCallID != "" {
				add("tool_call_id", m.ToolCallID)
			}
			if m.Name != "" {
				add("name", m.Name)
			}
		}
		add("content", m.Content)
		if len(m.ToolCalls) > 0 {
			calls, err := jinjaCalls(m.ToolCalls, c.ArgumentsAsString)
			if err != nil {
				return nil, err
			}
			add("tool_calls", calls)
		}
		if m.Reasoning != "" {
			add(reasoningKey, m.Reasoning)
		}
		if c.SystemToolsJSON && i == 0 && m.Role == chat.RoleSystem && ts != nil && len(ts.tools) > 0 {
			add("tools", ts.functionsJSON)
		}
		out = append(out, o)
	}
	return out, nil
}

func jinjaCalls(calls []chat.ToolCall, asString bool) ([]any, error) {
	out := make([]any, 0, len(calls))
	for _, c := range calls {
		cv, err := newCallView(c)
		if err != nil {
			return nil, err
		}
		var args any = cv.Args
		if asString {
			s, err := PyJSON(cv.Args, 0)
			if err != nil {
				return nil, err
			}
			args = s
		}
		o := &chat.Object{}
		if c.ID != "" {
			o.Members = append(o.Members, chat.Member{Key: "id", Value: c.ID})
		}
		o.Members = append(o.Members,
			chat.Member{Key: "type", Value: "function"},
			chat.Member{Key: "function", Value: &chat.Object{Members: []chat.Member{{Key: "name", Value: c.Name}, {Key: "arguments", Value: args}}}})
		out = append(out, o)
	}
	return out, nil
}

// JinjaTools writes tools as the JSON array of OpenAI tool objects a chat
// template reads.
func JinjaTools(tools []chat.Tool) (json.RawMessage, error) {
	out, err := toolObjects(tools, func(tv *toolView) any { return tv.OpenAI })
	if err != nil {
		return nil, err
	}
	s, err := PyJSON(out, 0)
	if err != nil {
		return nil, fmt.Errorf("templates: tools: %w", err)
	}
	return json.RawMessage(s), nil
}

// toolObjects returns one ordered JSON object per tool: pick chooses the
// OpenAI tool object or its inner function.
func toolObjects(tools []chat.Tool, pick func(*toolView) any) ([]any, error) {
	out := make([]any, 0, len(tools))
	for _, t := range tools {
		tv, err := newToolView(t)
		if err != nil {
			return nil, err
		}
		out = append(out, pick(tv))
	}
	return out, nil
}

// FamilyOf returns the Family of a loaded chat template, so that every
// caller renders any template the same way. A template detected as a
// built-in family keeps that family's definition (stops, formats,
// placement, quirks, conventions) and renders with the loaded template
// itself (the model's own revision). A family that keeps a
// transliteration (hermes3, gpt-oss) renders with it only when the loaded
// file is byte-identical to the official template the transliteration
// was checked against ([Family.RenderedBy] says which). Any other template becomes a Family
// whose end-of-turn, stops and control tokens come from the template and
// its tokens; its native format is "" (nothing known of how it writes
// calls: the derivation of its call syntax sets NativeFormat when that
// matches a built-in format) and its default format is the prompted
// UnknownDefaultFormat.
func FamilyOf(j *Jinja) (Family, error) {
	if f, ok, err := detectedFamily(j); err != nil || ok {
		return f, err
	}
	tok := j.Tokens()
	f := Family{
		Name:          j.Name(),
		Description:   "the model's own chat template (no built-in family matches)",
		Official:      "loaded from " + j.Name(),
		DefaultFormat: UnknownDefaultFormat,
		EOS:           tok.EOS,
		Tokenizer:     tok,
		Template:      j.Name(),
		PrintsDate:    strings.Contains(j.Source(), "strftime_now"),
		jinja:         j,
		loaded:        true,
	}
	if strings.Contains(j.Source(), "bos_token") {
		f.BOS = tok.BOS
	}
	f.Conventions.ArgumentsAsString = wantsStringArguments(j)
	f.GenerationPrompt = probeGenerationPrompt(j)
	f.EndOfTurn = probeEndOfTurn(j, f.Conventions)
	f.Stop = dedupe(nonEmpty(endOfTurnStop(f.EndOfTurn), probeTurnBoundary(j, f.Conventions), tok.EOS))
	f.ControlTokens = dedupe(append(nonEmpty(tok.BOS, tok.EOS), controlTokensIn(j.Source())...))
	return f, nil
}

// detectedFamily returns the built-in family j is recognised as, if any.
// Fingerprints are strings of a template's text, and a later generation of
// a model can keep them while its turns change (Hermes 4's template has
// Hermes 3's tool prompt in Llama 3 headers): a family whose generation
// prompt is not the template's does not describe it, and is not used.
func detectedFamily(j *Jinja) (Family, bool, error) {
	d, err := Detect(j.Source())
	if err != nil && !errors.Is(err, ErrUnknownTemplate) {
		return Family{}, false, err
	}
	if err != nil || genericMatch(d, j) {
		return Family{}, false, nil
	}
	f, err := Lookup(d.Family)
	if err != nil {
		return Family{}, false, err
	}
	if gp, ok := renderGenerationPrompt(j); ok && gp != f.GenerationPrompt {
		return Family{}, false, nil
	}
	if f.jinja == nil && checkedOfficial(f.Name) == sourceSHA256(j.Source()) {
		// The official template itself, which cannot render what the
		// family must (see docs/templates.md): the transliteration checked
		// against it renders, as when the family is asked for by name.
		f.renderedBy = fmt.Sprintf("the %s transliteration: the loaded template is byte-identical to the official one it was checked against", f.Name)
		return f, true, nil
	}
	f.Official = "loaded from " + j.Name()
	f.Template = j.Name()
	f.jinja = j
	f.loaded = true
	return f, true, nil
}

// checkedOfficial is the SHA-256 of the official chat template a
// family's transliteration was checked against (testdata/official; the
// family goldens are its Jinja2 renders), "" for a family without one.
func checkedOfficial(family string) string {
	switch family {
	case "hermes3": // NousResearch-Hermes-3-Llama-3.1-8B-tool_use.jinja
		return "7ce09d55d3690e06c70b5c07228cc7e8c99c43a23cdc027762be4011efcdea6c"
	case "gpt-oss": // openai-gpt-oss-120b.jinja
		return "a4c9919cbbd4acdd51ccffe22da049264b1b73e59055fa58811a99efbd7c8146"
	}
	return ""
}

func sourceSHA256(src string) string {
	sum := sha256.Sum256([]byte(src))
	return hex.EncodeToString(sum[:])
}

// RenderedBy says what renders the family's prompts, in words the
// commands print (templates inspect): the loaded template, the family's
// embedded official template, a transliteration and why it was chosen,
// or an Ollama Go template.
func (f Family) RenderedBy() string {
	switch {
	case f.jinja != nil && f.loaded:
		return "the loaded template (" + f.jinja.Name() + ")"
	case f.jinja != nil:
		return "the family's official template (" + f.Template + ")"
	case f.external != nil:
		return "the model's Ollama Go template"
	case f.renderedBy != "":
		return f.renderedBy
	}
	return fmt.Sprintf("the %s transliteration (%s): the family was asked for by name", f.Name, f.Template)
}

// Transliterated reports whether a Go transliteration of the family's
// official template renders its prompts (see RenderedBy for why).
func (f Family) Transliterated() bool { return f.jinja == nil && f.external == nil && f.tmpl != nil }

// UnknownDefaultFormat is the prompted tool format of a template that is
// no built-in family (the same as generic ChatML's).
const UnknownDefaultFormat = "hermes"

// probeClock is the date probes render with (for templates that print one).
func probeClock() time.Time { return time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC) }

// probe texts: no whitespace (templates trim) and no markup.
const (
	probeUser  = "\u27e6toolharness-user\u27e7"
	probeReply = "\u27e6toolharness-reply\u27e7"
	probeKey   = "toolharness_probe_key"
)

// probeGenerationPrompt is what add_generation_prompt appends after a user
// turn ("" when the template cannot say).
func probeGenerationPrompt(j *Jinja) string {
	gp, _ := renderGenerationPrompt(j)
	return gp
}

// renderGenerationPrompt is probeGenerationPrompt; ok is false when the
// template cannot say (it raises, or the prompt is no extension).
func renderGenerationPrompt(j *Jinja) (string, bool) {
	msgs := json.RawMessage(`[{"role": "user", "content": "` + probeUser + `"}]`)
	without, err1 := j.Render(JinjaVars{Messages: msgs, Now: probeClock()})
	with, err2 := j.Render(JinjaVars{Messages: msgs, AddGenerationPrompt: true, Now: probeClock()})
	if err1 != nil || err2 != nil || !strings.HasPrefix(with, without) {
		return "", false
	}
	return with[len(without):], true
}

// probeEndOfTurn is what the template writes after an assistant reply
// that ends the conversation ("" when the template cannot say).
func probeEndOfTurn(j *Jinja, c Conventions) string {
	out := probeRender(j, c, []chat.Message{{Role: chat.RoleUser, Content: probeUser}, {Role: chat.RoleAssistant, Content: probeReply}})
	i := strings.LastIndex(out, probeReply)
	if i < 0 {
		return ""
	}
	return out[i+len(probeReply):]
}

// probeRender renders a probe conversation without a generation prompt
// ("" when the template refuses it).
func probeRender(j *Jinja, c Conventions, msgs []chat.Message) string {
	raw, err := JinjaMessages(c, msgs, nil)
	if err != nil {
		return ""
	}
	out, err := j.Render(JinjaVars{Messages: raw, Now: probeClock()})
	if err != nil {
		return ""
	}
	return out
}

// endOfTurnStop is the stop string of an end-of-turn text: its first
// special token, else the text itself when it is one short marker (some
// templates write more after the last reply, a generation prompt or
// instructions, which no model writes).
func endOfTurnStop(eot string) string {
	if tok := controlTokenPattern.FindString(eot); tok != "" {
		return tok
	}
	if s := strings.TrimSpace(eot); len(s) <= 16 && !strings.ContainsAny(s, " \n") {
		return s
	}
	return ""
}

// probeTurnBoundary is the first special token the template writes
// between an assistant reply and the next user text: the token a model
// of this template ends its turn with when the template has no closing
// token of its own (GLM-4.5's <|user|>). "" when none is found.
func probeTurnBoundary(j *Jinja, c Conventions) string {
	out := probeRender(j, c, []chat.Message{{Role: chat.RoleUser, Content: probeUser},
		{Role: chat.RoleAssistant, Content: probeReply}, {Role: chat.RoleUser, Content: probeUser + "2"}})
	i := strings.Index(out, probeReply)
	k := strings.LastIndex(out, probeUser+"2")
	if i < 0 || k < i+len(probeReply) {
		return ""
	}
	return controlTokenPattern.FindString(out[i+len(probeReply) : k])
}

// wantsStringArguments reports whether the template writes call arguments
// as JSON only when given them as a string: some templates add arguments
// to a string, which Jinja2 refuses for an object.
func wantsStringArguments(j *Jinja) bool {
	call := []chat.Message{
		{Role: chat.RoleUser, Content: probeUser},
		{Role: chat.RoleAssistant, ToolCalls: []chat.ToolCall{{ID: "call00001", Name: "toolharness_probe", Arguments: json.RawMessage(`{"` + probeKey + `": "v"}`)}}},
	}
	render := func(asString bool) string { return probeRender(j, Conventions{ArgumentsAsString: asString}, call) }
	asObject := render(false)
	// Written in any form but Python's str() of a dict, the object form
	// works. Python's str() is what Jinja2 prints too where the template
	// puts the dict in string context (~, {{ }}, |string, format), so the
	// object form renders as transformers renders it; only + with a
	// string, which the engine prints the same way but Jinja2 refuses
	// (TypeError), says the template wants a string.
	if strings.Contains(asObject, probeKey) && (!strings.Contains(asObject, "{'"+probeKey+"'") || !addsArgumentsToString(j.Source())) {
		return false
	}
	return strings.Contains(render(true), `"`+probeKey+`"`)
}

// genericMatch reports a detection of the generic ChatML family (its
// fingerprint is only the turn markers) for a template that has tool
// support of its own: that template is not generic ChatML.
func genericMatch(d Detection, j *Jinja) bool {
	return d.Family == "chatml" && strings.Contains(j.Source(), "tools")
}

// ControlTokensIn returns the special-token-looking literals of a
// template's text, sorted: <|…|>, <｜…｜>, [INST]-style and
// <start_of_turn>-style markers.
func ControlTokensIn(src string) []string { return controlTokensIn(src) }

// controlTokensIn finds special-token-looking literals in a template's
// text: <|…|>, <｜…｜>, [INST]-style and <start_of_turn>-style markers.
var controlTokenPattern = regexp.MustCompile(`<\|[^<>|\s]{1,40}\|>|<｜[^<>｜\s]{1,40}｜>|\[/?[A-Z][A-Z_]{2,30}\]|<(?:start|end)_of_[a-z_]{1,20}>`)

func controlTokensIn(src string) []string {
	found := controlTokenPattern.FindAllString(src, -1)
	sort.Strings(found)
	return dedupe(found)
}

func nonEmpty(ss ...string) []string {
	var out []string
	for _, s := range ss {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

func dedupe(ss []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, s := range ss {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

package templates

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/toolharness/toolharness/chat"
	goldenfile "github.com/toolharness/toolharness/internal/golden"
	"github.com/toolharness/toolharness/internal/jinjaref"
)

// conformanceEntry is one template of testdata/conformance/manifest.json.
type conformanceEntry struct {
	ID            string                     `json:"id"`
	Set           string                     `json:"set"`
	File          string                     `json:"file"`
	SpecialTokens map[string]*string         `json:"special_tokens"`
	Kwargs        map[string]json.RawMessage `json:"kwargs"`
}

type conformanceConversation struct {
	ID                  string                     `json:"id"`
	Tools               json.RawMessage            `json:"tools"`
	Messages            json.RawMessage            `json:"messages"`
	AddGenerationPrompt *bool                      `json:"add_generation_prompt"`
	Kwargs              map[string]json.RawMessage `json:"kwargs"`
}

type conformanceGolden struct {
	OK    bool   `json:"ok"`
	Text  string `json:"text"`
	Error string `json:"error"`
}

// conformanceNow is render.py's FIXED_NOW.
var conformanceNow = jinjaref.Now

const conformanceDir = "testdata/conformance"

// unseenDir holds reconstructions of current templates outside the shared
// set (testdata/unseen/README.md), checked against Jinja2 the same way.
const unseenDir = "testdata/unseen"

func readJSONFile(t testing.TB, path string, v any) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

func loadConformance(t testing.TB) ([]conformanceEntry, []conformanceConversation) {
	return loadSuiteDir(t, conformanceDir)
}

// loadSuiteDir reads a suite directory's manifest; every suite renders the
// conformance conversations.
func loadSuiteDir(t testing.TB, dir string) ([]conformanceEntry, []conformanceConversation) {
	var m struct{ Templates []conformanceEntry }
	readJSONFile(t, filepath.Join(dir, "manifest.json"), &m)
	var c struct{ Conversations []conformanceConversation }
	readJSONFile(t, filepath.Join(conformanceDir, "conversations.json"), &c)
	return m.Templates, c.Conversations
}

func (e conformanceEntry) tokens() SpecialTokens {
	var tok SpecialTokens
	if s := e.SpecialTokens["bos_token"]; s != nil {
		tok.BOS = *s
	}
	if s := e.SpecialTokens["eos_token"]; s != nil {
		tok.EOS = *s
	}
	return tok
}

// conformanceOutcome renders one golden case and says how it differs from
// Jinja2 ("" = identical, including raising with the same message).
func conformanceOutcome(j *Jinja, e conformanceEntry, c conformanceConversation, style string, want conformanceGolden) (string, error) {
	msgs, err := styleMessages(c.Messages, style)
	if err != nil {
		return "", err
	}
	vars := JinjaVars{Messages: msgs, Tools: c.Tools, AddGenerationPrompt: c.AddGenerationPrompt == nil || *c.AddGenerationPrompt,
		Now: conformanceNow, Extra: map[string]json.RawMessage{}}
	for _, kw := range []map[string]json.RawMessage{e.Kwargs, c.Kwargs} {
		for k, v := range kw {
			if v, err = jinjaref.Kwarg(v, c.Tools, jinjaref.Python{Strftime: PyStrftime, JSON: PyJSON}); err != nil {
				return "", err
			}
			vars.Extra[k] = v
		}
	}
	got, err := j.Render(vars)
	switch {
	case want.OK && err != nil:
		return "raises where Jinja2 renders: " + err.Error(), nil
	case want.OK && got != want.Text:
		return "differs:\n" + cmp.Diff(want.Text, got), nil
	case want.OK:
		return "", nil
	case err == nil:
		return "renders where Jinja2 raises " + want.Error, nil
	}
	return raiseDiff(err, want.Error), nil
}

// raiseDiff says how the engine's error differs from the exception
// Jinja2 raised ("<Class>: <message>"): "" when the engine raises the
// same class (jinja2ExceptionClass), and for TemplateError (the
// template's own raise_exception) the same message too.
func raiseDiff(err error, jinja2Error string) string {
	class, msg, _ := strings.Cut(jinja2Error, ": ")
	got := jinja2ExceptionClass(err)
	if got != class {
		return fmt.Sprintf("raises %v (Jinja2 would raise %s) where Jinja2 raises %s", err, orUnknown(got), jinja2Error)
	}
	var te *TemplateError
	if class == "TemplateError" && (!errors.As(err, &te) || te.Message != msg) {
		return fmt.Sprintf("raises %v where Jinja2 raises %s", err, jinja2Error)
	}
	return ""
}

func orUnknown(class string) string {
	if class == "" {
		return "no known exception class"
	}
	return class
}

// jinja2ExceptionClass is the Jinja2 exception class that corresponds to
// an error of the engine, as far as the engine's errors say ("" when
// they do not): the template's own raise_exception is TemplateError, the
// macro recursion guard RecursionError, a call on an undefined value
// (a missing key, a method the value lacks: "x.strip is not callable:
// Undefined") UndefinedError, and |items of a non-mapping TypeError.
func jinja2ExceptionClass(err error) string {
	var te *TemplateError
	switch msg := err.Error(); {
	case errors.As(err, &te):
		return "TemplateError"
	case errors.Is(err, ErrRecursion):
		return "RecursionError"
	case strings.HasSuffix(msg, "is not callable: Undefined"):
		return "UndefinedError"
	case strings.HasSuffix(msg, "can only get item pairs from a mapping"):
		return "TypeError"
	}
	return ""
}

// styleMessages rewrites assistant tool-call messages into one of
// render.py's input styles (apply_style), keeping key order: where content
// is missing or null, hf drops it, vllm sets "", openai sets null; openai
// also writes arguments as a JSON string (json.dumps).
func styleMessages(raw json.RawMessage, style string) (json.RawMessage, error) {
	if style == "" {
		return raw, nil
	}
	v, err := chat.DecodeOrdered(raw)
	if err != nil {
		return nil, err
	}
	msgs, _ := v.([]any)
	for _, m := range msgs {
		obj, ok := m.(*chat.Object)
		if !ok {
			continue
		}
		calls, _ := objGet(obj, "tool_calls").([]any)
		if len(calls) == 0 {
			continue
		}
		if content, present := chat.Lookup(obj, "content"); !present || content == nil {
			switch style {
			case "hf":
				deleteMember(obj, "content")
			case "vllm":
				setMember(obj, "content", "")
			default:
				setMember(obj, "content", nil)
			}
		}
		for _, c := range calls {
			fn, ok := objGet(c, "function").(*chat.Object)
			if !ok || style != "openai" {
				continue
			}
			if args, ok := chat.Lookup(fn, "arguments"); ok {
				if _, isString := args.(string); !isString {
					s, err := PyJSON(args, 0)
					if err != nil {
						return nil, err
					}
					setMember(fn, "arguments", s)
				}
			}
		}
	}
	s, err := PyJSON(msgs, 0)
	return json.RawMessage(s), err
}

func deleteMember(o *chat.Object, key string) {
	kept := o.Members[:0]
	for _, m := range o.Members {
		if m.Key != key {
			kept = append(kept, m)
		}
	}
	o.Members = kept
}

func setMember(o *chat.Object, key string, v any) {
	for i := range o.Members {
		if o.Members[i].Key == key {
			o.Members[i].Value = v
			return
		}
	}
	o.Members = append(o.Members, chat.Member{Key: key, Value: v})
}

// conformanceDeviations is testdata/conformance/deviations.json: every
// template on which the engine differs from Jinja2, the cases where it
// does, and why (written by hand; -update rewrites the cases and keeps
// the causes). The test fails when a deviation appears or disappears, and
// when a listed template has no cause.
type conformanceDeviation struct {
	Cause string   `json:"cause"`
	Cases []string `json:"cases"`
}

func TestJinjaConformance(t *testing.T) {
	checkJinjaSuite(t, conformanceDir)
}

// stringContextDir holds a template written for this project that prints
// mappings and lists in string context (testdata/stringcontext/README.md).
const stringContextDir = "testdata/stringcontext"

// TestJinjaStringContext: mappings and lists in string context (~, {{ }},
// |string, |format) print as Jinja2 prints them, Python's str().
func TestJinjaStringContext(t *testing.T) {
	checkJinjaSuite(t, stringContextDir)
}

// TestJinjaUnseen: the templates of testdata/unseen (reconstructions of
// current models' templates that the shared set lacks) against Jinja2.
func TestJinjaUnseen(t *testing.T) {
	checkJinjaSuite(t, unseenDir)
}

// checkJinjaSuite renders every template of a suite directory (manifest,
// golden/, deviations.json) over the conformance conversations and checks
// that the cases differing from Jinja2 are exactly the listed ones.
func checkJinjaSuite(t *testing.T, dir string) {
	entries, convs := loadSuiteDir(t, dir)
	found := map[string][]string{}
	wrongText := map[string]bool{} // a case Jinja2 renders, rendered differently or not at all
	for _, e := range entries {
		t.Run(e.ID, func(t *testing.T) {
			src, err := os.ReadFile(filepath.Join(dir, e.File))
			if err != nil {
				t.Fatal(err)
			}
			var golden map[string]conformanceGolden
			readJSONFile(t, filepath.Join(dir, "golden", e.ID+".json"), &golden)
			j, err := CompileJinja(e.ID, string(src), e.tokens())
			if err != nil {
				found[e.ID] = []string{"compile"}
				t.Logf("compile: %v", err)
				return
			}
			for _, c := range convs {
				for _, style := range []string{"", "hf", "vllm", "openai"} {
					key := c.ID
					if style != "" {
						key += "." + style
					}
					want, ok := golden[key]
					if !ok {
						continue
					}
					diff, err := conformanceOutcome(j, e, c, style, want)
					if err != nil {
						t.Fatalf("%s: %v", key, err)
					}
					if diff != "" {
						found[e.ID] = append(found[e.ID], key)
						if want.OK {
							wrongText[e.ID] = true
						}
						t.Logf("%s: %s", key, diff)
					}
				}
			}
		})
	}
	path := filepath.Join(dir, "deviations.json")
	var listed map[string]conformanceDeviation
	readJSONFile(t, path, &listed)
	got := map[string]conformanceDeviation{}
	for id, cases := range found {
		got[id] = conformanceDeviation{Cause: listed[id].Cause, Cases: cases}
		if strings.TrimSpace(listed[id].Cause) == "" {
			t.Errorf("%s deviates from Jinja2 on %v: give its cause in %s", id, cases, path)
		}
	}
	data, err := json.MarshalIndent(got, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	goldenfile.Check(t, *update, path, string(data)+"\n")
	t.Logf("%d of %d templates identical to Jinja2 on every conversation; %d of %d byte-identical on every conversation Jinja2 renders",
		len(entries)-len(found), len(entries), len(entries)-len(wrongText), len(entries))
}

// TestJinjaDeviationsDetected checks that Deviations reports a construct
// for exactly the conformance templates whose deviation it causes, and for
// no template that renders identically.
func TestJinjaDeviationsDetected(t *testing.T) {
	for _, dir := range []string{conformanceDir, unseenDir, stringContextDir} {
		checkDeviationsDetected(t, dir)
	}
}

func checkDeviationsDetected(t *testing.T, dir string) {
	entries, _ := loadSuiteDir(t, dir)
	var listed map[string]conformanceDeviation
	readJSONFile(t, filepath.Join(dir, "deviations.json"), &listed)
	for _, e := range entries {
		j := compileSuiteEntry(t, dir, e)
		for _, d := range j.Deviations() {
			if !strings.Contains(listed[e.ID].Cause, `"`+d.Construct+`"`) {
				t.Errorf("%s: Deviations reports %q, which deviations.json does not give as its cause", e.ID, d.Construct)
			}
		}
		for _, k := range knownConstructs {
			if strings.Contains(listed[e.ID].Cause, `"`+k.Construct+`"`) && !slicesContainsConstruct(j.Deviations(), k.Construct) {
				t.Errorf("%s: deviations.json gives %q as a cause, Deviations does not report it", e.ID, k.Construct)
			}
		}
	}
}

// compileSuiteEntry compiles a suite template; it must compile.
func compileSuiteEntry(t *testing.T, dir string, e conformanceEntry) *Jinja {
	t.Helper()
	src, err := os.ReadFile(filepath.Join(dir, e.File))
	if err != nil {
		t.Fatal(err)
	}
	j, err := CompileJinja(e.ID, string(src), e.tokens())
	if err != nil {
		t.Fatal(err)
	}
	return j
}

func slicesContainsConstruct(ds []Deviation, construct string) bool {
	for _, d := range ds {
		if d.Construct == construct {
			return true
		}
	}
	return false
}

// TestConformanceDetectsPlantedDifference plants a difference in a golden
// case the engine matches today, one per kind of outcome, and checks that
// conformanceOutcome reports each: the conformance test cannot pass on a
// case whose text, exception class or raise_exception message differs.
func TestConformanceDetectsPlantedDifference(t *testing.T) {
	entries, convs := loadConformance(t)
	byID := map[string]conformanceEntry{}
	for _, e := range entries {
		byID[e.ID] = e
	}
	conv := map[string]conformanceConversation{}
	for _, c := range convs {
		conv[c.ID] = c
	}
	tests := []struct {
		name, template, conversation, style string
		wantClass                           string // the class of the golden, checked before planting
		plant                               func(conformanceGolden) conformanceGolden
	}{
		{"text", "qwen2.5-7b-instruct", "c_call_result", "vllm", "",
			func(g conformanceGolden) conformanceGolden { g.Text += " "; return g }},
		{"TypeError as UndefinedError", "qwen3-coder", "c2_call_result_then_user", "openai", "TypeError",
			func(g conformanceGolden) conformanceGolden {
				g.Error = "UndefinedError" + strings.TrimPrefix(g.Error, "TypeError")
				return g
			}},
		{"UndefinedError as TypeError", "qwen3-0.6b", "l_content_parts", "", "UndefinedError",
			func(g conformanceGolden) conformanceGolden {
				g.Error = "TypeError" + strings.TrimPrefix(g.Error, "UndefinedError")
				return g
			}},
		{"RecursionError as TypeError", "hermes-2-pro-llama-3-8b.tool_use", "m_thinking_off", "", "RecursionError",
			func(g conformanceGolden) conformanceGolden {
				g.Error = "TypeError" + strings.TrimPrefix(g.Error, "RecursionError")
				return g
			}},
		{"TemplateError message", "llama-3.1-8b-instruct", "d_parallel", "vllm", "TemplateError",
			func(g conformanceGolden) conformanceGolden { g.Error += "!"; return g }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, ok := byID[tt.template]
			if !ok {
				t.Fatalf("no template %s", tt.template)
			}
			var golden map[string]conformanceGolden
			readJSONFile(t, filepath.Join(conformanceDir, "golden", e.ID+".json"), &golden)
			key := tt.conversation
			if tt.style != "" {
				key += "." + tt.style
			}
			want, ok := golden[key]
			if !ok {
				t.Fatalf("no golden case %s", key)
			}
			if class, _, _ := strings.Cut(want.Error, ":"); class != tt.wantClass {
				t.Fatalf("golden %s raises %q, want a case raising %q", key, want.Error, tt.wantClass)
			}
			j := compileSuiteEntry(t, conformanceDir, e)
			c := conv[tt.conversation]
			if diff, err := conformanceOutcome(j, e, c, tt.style, want); err != nil || diff != "" {
				t.Fatalf("unplanted case differs (%v): %s", err, diff)
			}
			if diff, err := conformanceOutcome(j, e, c, tt.style, tt.plant(want)); err != nil || diff == "" {
				t.Fatalf("planted difference not reported (%v)", err)
			}
		})
	}
}

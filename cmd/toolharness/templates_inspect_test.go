package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/toolharness/toolharness/derive"
	"github.com/toolharness/toolharness/internal/ollamatest"
	"github.com/toolharness/toolharness/templates"
	"github.com/toolharness/toolharness/templates/source"
)

const conformanceTemplates = "../../templates/testdata/conformance/templates"

func TestTemplatesInspect(t *testing.T) {
	for _, tc := range []struct {
		file string
		want []string
	}{
		{"zai-org-GLM-4.5.jinja", []string{"family: (none of the built-in families)\n",
			"rendered by: the loaded template (zai-org-GLM-4.5)\n", "writes calls: yes\n", "parallel calls: yes\n",
			"format: glm45\n", `reasoning: "<think>" … "</think>"` + "\n"}},
		{"Qwen3-Coder-30B-A3B-Instruct.gguf.jinja", []string{"family: qwen3-coder\n",
			"rendered by: the loaded template (Qwen3-Coder-30B-A3B-Instruct.gguf)\n"}},
		{"llama-cpp-lfm2.jinja", []string{"body: json-list\n", `call open: "<|tool_call_start|>"` + "\n",
			`call close: "<|tool_call_end|>"` + "\n", `name key: "name"` + "\n", `arguments key: "arguments"` + "\n"}},
		{"00-chatml.jinja", []string{"catalog: no\n", "writes calls: no\n", "note: the template does not render the tools it is given\n",
			`role stop: "<|im_start|>user"` + "\n"}},
		// Hermes 3's fingerprint in Llama 3 turns: the family it is used
		// as (none), not the raw fingerprint match.
		{"../../unseen/templates/hermes-4-70b.jinja", []string{"family: (none of the built-in families)\n", "format: hermes\n"}},
		// Gemma 4's quote tokens and bare keys (derive's reconstruction).
		{"../../../../derive/testdata/reconstructed/gemma-4-it.jinja", []string{`call open: "<|tool_call>"` + "\n",
			`string quote: "<|\"|>"` + "\n", "parses its own calls: yes\n"}},
	} {
		out, stderr, code := runCLI(t, "", "templates", "inspect", filepath.Join(conformanceTemplates, tc.file))
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", tc.file, code, stderr)
		}
		for _, want := range tc.want {
			if !strings.Contains(out, want) {
				t.Errorf("%s: output lacks %q:\n%s", tc.file, want, out)
			}
		}
	}
}

func TestTemplatesInspectJSON(t *testing.T) {
	cfg := writeFile(t, "tokenizer_config.json", `{"bos_token": {"content": "<s>"}, "eos_token": "</s>", `+
		`"chat_template": [{"name": "default", "template": "x"}, {"name": "tool_use", "template": `+
		`"{% for m in messages %}{{ m.role }}: {{ m.content }}{% for c in m.tool_calls %}<<CALL>>{{ c.function.name }}|{{ c.function.arguments | tojson }}<<END>>{% endfor %}{{ eos_token }}\n{% endfor %}"}]}`)
	out, stderr, code := runCLI(t, "", "templates", "inspect", "--json", cfg)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var got struct {
		BOS, EOS string
		Derived  struct {
			WritesCalls bool              `json:"writes_calls"`
			Syntax      map[string]string `json:"syntax"`
			Stop        []string
		}
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	want := got
	want.BOS, want.EOS = "<s>", "</s>"
	want.Derived.WritesCalls, want.Derived.Stop = true, []string{"</s>"}
	want.Derived.Syntax = map[string]string{"label": "derived:" + filepath.Base(filepath.Dir(cfg)), "body": "name-then-json",
		"call_open": "<<CALL>>", "call_close": "<<END>>", "arguments_prefix": "|"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("(-want +got):\n%s\n%s", d, out)
	}
}

// TestTemplatesInspectBrokenSyntax: a template whose calls the derived
// syntax cannot read back makes inspect print what it derived and fail.
func TestTemplatesInspectBrokenSyntax(t *testing.T) {
	tmpl := writeFile(t, "chat_template.jinja", `{% for m in messages %}{{ m.role }}: {{ m.content }}`+
		`{% for c in m.tool_calls %}CALL {{ c.function.name }}{% for k, v in c.function.arguments.items() %} {{ k }}={{ v }};{% endfor %}`+
		`{% endfor %}</s>\n{% endfor %}`)
	out, stderr, code := runCLI(t, "", "templates", "inspect", tmpl)
	if code != 1 || !strings.Contains(out, "parses its own calls: no\n") ||
		!strings.Contains(stderr, "does not parse the template's own render of a call") {
		t.Errorf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, stderr)
	}
}

func TestTemplatesInspectUsage(t *testing.T) {
	_, stderr, code := runCLI(t, "", "templates", "inspect")
	if code == 0 || !strings.Contains(stderr, "give one template file") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
}

// TestParseChatTemplate parses GLM-4.5 output in the syntax derived from
// its own template, whole and in 3-byte chunks.
func TestParseChatTemplate(t *testing.T) {
	tools := writeFile(t, "tools.json", `[{"type":"function","function":{"name":"lookup","parameters":{"type":"object",`+
		`"properties":{"city":{"type":"string"},"days":{"type":"integer"}}}}}]`)
	in := "Let me check.\n<tool_call>lookup<arg_key>city</arg_key>\n<arg_value>Paris</arg_value>" +
		"<arg_key>days</arg_key>\n<arg_value>3</arg_value></tool_call>"
	tmpl := filepath.Join(conformanceTemplates, "zai-org-GLM-4.5.jinja")
	want := `{"type":"call","id":"call_0","name":"lookup","arguments":{"city":"Paris","days":3},"repairs":[],"offset":14}`
	for _, chunk := range []string{"0", "3"} {
		out, stderr, code := runCLI(t, in, "parse", "--chat-template", tmpl, "--tools", tools, "--chunk", chunk)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if lines[len(lines)-1] != want {
			t.Errorf("--chunk %s: last event %s, want %s", chunk, lines[len(lines)-1], want)
		}
	}
	if _, stderr, code := runCLI(t, in, "parse", "--chat-template", tmpl, "--format", "hermes"); code == 0 || !strings.Contains(stderr, "not both") {
		t.Errorf("--format with --chat-template: exit %d, %q", code, stderr)
	}
	noCalls := filepath.Join(conformanceTemplates, "00-chatml.jinja")
	if _, stderr, code := runCLI(t, in, "parse", "--chat-template", noCalls); code != 0 || !strings.Contains(stderr, catalogNote("hermes")) {
		t.Errorf("a template without calls: exit %d, %q", code, stderr)
	}
}

// TestParseChatTemplateLFM2Python: LFM2 models write a Python list of calls
// where llama.cpp's LFM2 template writes JSON; parsed with that template,
// the call is read, with the pythonic_call repair.
func TestParseChatTemplateLFM2Python(t *testing.T) {
	tools := writeFile(t, "tools.json", `[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object",`+
		`"properties":{"city":{"type":"string"}}}}}]`)
	in := `<|tool_call_start|>[get_weather(city="Berlin")]<|tool_call_end|>`
	tmpl := filepath.Join(conformanceTemplates, "llama-cpp-lfm2.jinja")
	out, stderr, code := runCLI(t, in, "parse", "--chat-template", tmpl, "--tools", tools)
	want := `{"type":"call","id":"call_0","name":"get_weather","arguments":{"city":"Berlin"},"repairs":["pythonic_call"],"offset":0}`
	if code != 0 || !strings.Contains(out, want+"\n") {
		t.Errorf("exit %d, stderr %q, output:\n%s\nwant the event %s", code, stderr, out, want)
	}
}

// TestParseChatTemplatePromptTail: parse --chat-template reads its input as
// the output after the generation prompt. Where that prompt ends inside the
// call syntax (functionary v3.2's ">>>"), a call is found at offset 0 and
// an answer on the content channel is text byte for byte, the tail in no
// event.
func TestParseChatTemplatePromptTail(t *testing.T) {
	tools := writeFile(t, "tools.json", `[{"type":"function","function":{"name":"lookup","parameters":{"type":"object",`+
		`"properties":{"city":{"type":"string"}}}}}]`)
	tmpl := filepath.Join(conformanceTemplates, "meetkai-functionary-medium-v3.2.jinja")
	for _, tc := range []struct{ in, want string }{
		{"lookup\n{\"city\": \"Paris\"}", `{"type":"call_start","id":"call_0","name":"lookup","offset":0}` + "\n" +
			`{"type":"call","id":"call_0","name":"lookup","arguments":{"city":"Paris"},"repairs":[],"offset":0}`},
		{"all\nIt is sunny.", `{"type":"text","text":"all\nIt is sunny."}`},
	} {
		for _, chunk := range []string{"0", "1"} {
			out, stderr, code := runCLI(t, tc.in, "parse", "--chat-template", tmpl, "--tools", tools, "--chunk", chunk)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			if got := joinTextLines(t, out); got != tc.want {
				t.Errorf("%q, --chunk %s:\n%s\nwant\n%s", tc.in, chunk, got, tc.want)
			}
		}
	}
	// Batch mode reuses one parser: every record is primed.
	rec := `{"id":%d,"raw":"lookup\n{\"city\": \"Paris\"}"}` + "\n"
	out, stderr, code := runCLI(t, fmt.Sprintf(rec+rec, 1, 2), "parse", "--chat-template", tmpl, "--tools", tools, "--jsonl")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for i, line := range strings.Split(strings.TrimSpace(out), "\n") {
		want := fmt.Sprintf(`{"id":%d,"calls":[{"id":"call_0","name":"lookup","arguments":{"city":"Paris"},"repairs":[]}],"content":"","errors":[]}`, i+1)
		if line != want {
			t.Errorf("--jsonl record %d: %s, want %s", i+1, line, want)
		}
	}
}

// joinTextLines merges adjacent text events (their split depends on the
// chunking) and returns the event lines.
func joinTextLines(t *testing.T, out string) string {
	t.Helper()
	var lines []string
	text, inText := "", false
	flush := func() {
		if inText {
			b, _ := json.Marshal(struct {
				Type string `json:"type"`
				Text string `json:"text"`
			}{"text", text})
			lines = append(lines, string(b))
			text, inText = "", false
		}
	}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var ev struct{ Type, Text string }
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		if ev.Type == "text" {
			text, inText = text+ev.Text, true
			continue
		}
		flush()
		lines = append(lines, line)
	}
	flush()
	return strings.Join(lines, "\n")
}

// TestTemplatesInspectGGUF reads the chat template out of a GGUF file (the
// test Ollama's tiny model carrying LFM2's template) and from stdin.
func TestTemplatesInspectGGUF(t *testing.T) {
	src, err := os.ReadFile(filepath.Join(conformanceTemplates, "llama-cpp-lfm2.jinja"))
	if err != nil {
		t.Fatal(err)
	}
	gguf := ollamatest.TemplateModel(t, t.TempDir(), string(src))
	for _, args := range [][]string{{"templates", "inspect", gguf}, {"templates", "inspect", "-"}} {
		out, stderr, code := runCLI(t, string(src), args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, stderr)
		}
		if !strings.Contains(out, `call open: "<|tool_call_start|>"`) {
			t.Errorf("%v: derived syntax missing:\n%s", args, out)
		}
	}
}

// TestParseChatTemplateSuite is the done-criterion through the command:
// for every conformance-suite template that writes calls, the assistant
// turn the template renders for two known calls (one where it renders only
// one) is parsed back by `parse --chat-template` to those calls — the turn
// from its header on, and what a model writes after the generation prompt.
func TestParseChatTemplateSuite(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(conformanceTemplates, "*.jinja"))
	official, err2 := filepath.Glob(filepath.Join(conformanceTemplates, "..", "..", "official", "*.jinja"))
	files = append(files, official...)
	if err != nil || err2 != nil || len(files) < 70 {
		t.Fatalf("suite templates: %v %v (%d)", err, err2, len(files))
	}
	toolsFile := writeFile(t, "tools.json", suiteTools)
	parsed := 0
	for _, f := range files {
		loaded, err := source.Load(f, source.Options{Tools: true})
		if err != nil {
			t.Fatal(err)
		}
		tmpl, err := loaded.Compile()
		if err != nil {
			t.Fatal(err)
		}
		res, err := derive.Template(tmpl, time.Now(), nil)
		if err != nil || !res.WritesCalls {
			continue
		}
		turn, output, want, err := suiteTurn(tmpl, res)
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		name := filepath.Base(f)
		// A history turn of a template whose prompt opens reasoning lacks
		// what the model wrote before the call; the command reads output
		// as reasoning up to the close, so only the output form applies.
		got, out := parseCLICalls(t, turn, f, toolsFile)
		if d := cmp.Diff(want, got); d != "" && !res.ThinkOpen {
			t.Errorf("%s (%s): turn's calls (-want +got):\n%s\ninput %q\noutput %s", name, res.FormatName(), d, turn, out)
			continue
		}
		got, out = parseCLICalls(t, output, f, toolsFile)
		// The output is what follows the generation prompt: functionary
		// v3.2's starts after ">>>", gpt-oss's after "<|start|>assistant".
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("%s (%s): output's calls (-want +got):\n%s\ninput %q\noutput %s", name, res.FormatName(), d, output, out)
			continue
		}
		parsed++
	}
	if parsed < 27 {
		t.Errorf("%d templates round-tripped through parse --chat-template, want every one that writes calls", parsed)
	}
	t.Logf("%d templates: their own call turns parsed back by parse --chat-template", parsed)
}

const suiteTools = `[{"type": "function", "function": {"name": "lookup", "description": "Look up.", "parameters": {"type": "object", ` +
	`"properties": {"city": {"type": "string", "description": "A city."}, "days": {"type": "integer", "description": "Days."}}}}}, ` +
	`{"type": "function", "function": {"name": "note", "description": "Note.", "parameters": {"type": "object", ` +
	`"properties": {"text": {"type": "string", "description": "Text."}}}}}]`

var suiteCalls = []derive.Call{{ID: "abcDEF123", Name: "lookup", Arguments: json.RawMessage(`{"city": "Zürich \"Nord\"", "days": 3}`)},
	{ID: "xyzUVW789", Name: "note", Arguments: json.RawMessage(`{"text": "a\nb"}`)}}

// suiteTurn renders two calls (one where the template renders one) and
// returns the assistant turn from its header on, what a model writes after
// the generation prompt (the reasoning the prompt opened closed first; the
// part of the call syntax the prompt ends with is the parser's to supply),
// and the calls as "name {args}".
func suiteTurn(tmpl *templates.Jinja, res derive.Result) (turn, output string, want []string, err error) {
	n := 1
	if res.Parallel {
		n = 2
	}
	style := derive.Styles[0]
	for _, s := range derive.Styles {
		if s.Name == res.Style {
			style = s
		}
	}
	user := `{"role": "user", "content": "hi"}`
	r := derive.Jinja{Template: tmpl, Now: time.Now()}
	full, err := r.Render(derive.Request{Messages: json.RawMessage("[" + user + ", " + string(derive.AssistantCalls(style, suiteCalls[:n])) + "]"),
		Tools: json.RawMessage(suiteTools)})
	if err != nil {
		return "", "", nil, err
	}
	base, err := r.Render(derive.Request{Messages: json.RawMessage("[" + user + "]"), Tools: json.RawMessage(suiteTools)})
	if err != nil {
		return "", "", nil, err
	}
	prompt, err := r.Render(derive.Request{Messages: json.RawMessage("[" + user + "]"), Tools: json.RawMessage(suiteTools), AddGenerationPrompt: true})
	if err != nil {
		return "", "", nil, err
	}
	output = derive.Tail(prompt, full)
	if res.ThinkOpen {
		output = "Let me look.\n" + res.Syntax.ReasoningClose + "\n\n" + strings.TrimPrefix(output, res.Syntax.ReasoningClose)
	}
	for _, c := range suiteCalls[:n] {
		var v any
		if err := json.Unmarshal(c.Arguments, &v); err != nil {
			return "", "", nil, err
		}
		b, _ := json.Marshal(v)
		want = append(want, c.Name+" "+string(b))
	}
	return derive.Tail(base, full), output, want, nil
}

// parseCLICalls runs parse --chat-template on input and returns the calls
// read without error, as "name {args}", and the command's output.
func parseCLICalls(t *testing.T, input, tmpl, toolsFile string) ([]string, string) {
	t.Helper()
	out, stderr, code := runCLI(t, input, "parse", "--chat-template", tmpl, "--tools", toolsFile)
	if code != 0 {
		t.Fatalf("%s: exit %d: %s", tmpl, code, stderr)
	}
	var got []string
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var ev struct {
			Type, Name string
			Arguments  json.RawMessage
			Error      any
		}
		if json.Unmarshal([]byte(line), &ev) == nil && ev.Type == "call" && ev.Error == nil {
			got = append(got, ev.Name+" "+compactJSON(t, ev.Arguments))
		}
	}
	return got, out
}

func compactJSON(t *testing.T, raw json.RawMessage) string {
	t.Helper()
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("%s: %v", raw, err)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

package templates

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolharness/toolharness/chat"
)

// corpusRaw returns up to n raw model outputs of the repository's corpus
// (testdata/corpus: real outputs of local models).
func corpusRaw(t testing.TB, n int) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", "testdata", "corpus", "*.jsonl"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no corpus in ../testdata/corpus (err %v)", err)
	}
	var out []string
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(fh)
		sc.Buffer(nil, 4<<20)
		for sc.Scan() && len(out) < n*len(files) {
			var rec struct{ Raw string }
			if json.Unmarshal(sc.Bytes(), &rec) == nil && rec.Raw != "" {
				out = append(out, rec.Raw)
			}
		}
		fh.Close()
	}
	return out
}

// FuzzJinjaRender renders model output (as the assistant's text, a call's
// argument and a tool result) through templates of several shapes: no
// panic, no hang, the same bytes twice, one-line errors.
func FuzzJinjaRender(f *testing.F) {
	for _, raw := range corpusRaw(f, 20) {
		f.Add(raw)
	}
	f.Add("{{ raise_exception('x') }}\r\n\\\n<|im_end|>")
	var fams []Family
	for _, file := range []string{"../official/Qwen-Qwen2.5-7B-Instruct.jinja", "../official/NousResearch-Hermes-3-Llama-3.1-8B-tool_use.jinja",
		"templates/zai-org-GLM-4.5.jinja", "templates/llama-cpp-lfm2.jinja", "templates/moonshotai-Kimi-K2.jinja"} {
		fam, err := FamilyOf(loadedJinja(f, file, SpecialTokens{BOS: "<s>", EOS: "</s>"}))
		if err != nil {
			f.Fatal(err)
		}
		fams = append(fams, fam)
	}
	tools := []chat.Tool{{Name: "get_weather", Description: "d", Parameters: json.RawMessage(`{"type":"object","properties":{"city":{"type":["string","null"]}}}`)}}
	f.Fuzz(func(t *testing.T, text string) {
		args, _ := json.Marshal(map[string]string{"city": text})
		in := Input{Messages: []chat.Message{
			{Role: chat.RoleUser, Content: text},
			{Role: chat.RoleAssistant, Content: text, ToolCalls: []chat.ToolCall{{ID: "call00001", Name: "get_weather", Arguments: args}}},
			{Role: chat.RoleTool, ToolCallID: "call00001", Name: "get_weather", Content: text},
		}, Tools: tools, AddGenerationPrompt: true, Now: fixedNow}
		for _, fam := range fams {
			a, errA := fam.Render(in)
			b, errB := fam.Render(in)
			if a != b || (errA == nil) != (errB == nil) {
				t.Fatalf("%s: two renderings differ", fam.Name)
			}
			if errA != nil && strings.Contains(errA.Error(), "\n") {
				t.Errorf("%s: multi-line error %q", fam.Name, errA)
			}
		}
	})
}

// FuzzCompileJinja compiles and renders arbitrary template text: an error
// or a rendering, never a panic or a hang.
func FuzzCompileJinja(f *testing.F) {
	for _, file := range []string{"../official/Qwen-Qwen3-0.6B.jinja", "templates/zai-org-GLM-4.5.jinja", "templates/32-chatqa.jinja"} {
		src, err := os.ReadFile(filepath.Join(conformanceDir, file))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(src))
	}
	f.Add("{% macro m(a) %}{{ m(a) }}{% endmacro %}{{ m(1) }}")
	f.Add("{%- if x -%}\n  {#- c -#}\n{{- y -}}{% endif %}")
	msgs := json.RawMessage(`[{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}]`)
	f.Fuzz(func(t *testing.T, src string) {
		j, err := CompileJinja("fuzz", src, SpecialTokens{BOS: "<s>"})
		if err != nil {
			return
		}
		_, _ = j.Render(JinjaVars{Messages: msgs, AddGenerationPrompt: true, Now: fixedNow})
		_ = j.Deviations()
	})
}

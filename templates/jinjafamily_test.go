package templates

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/toolharness/toolharness/chat"
)

// TestFamiliesRenderOfficialTemplates checks that every family rendered
// by the Jinja engine embeds its official template byte for byte (the
// family goldens of TestConformance then hold for the file itself).
func TestFamiliesRenderOfficialTemplates(t *testing.T) {
	official := map[string]string{}
	var m struct{ Templates []conformanceEntry }
	readJSONFile(t, filepath.Join(conformanceDir, "manifest.json"), &m)
	fams, err := Families()
	if err != nil {
		t.Fatal(err)
	}
	jinjaFamilies := 0
	for _, f := range fams {
		if f.Jinja() == nil {
			if !strings.HasSuffix(f.Template, ".tmpl") {
				t.Errorf("%s: template %s is neither .jinja nor .tmpl", f.Name, f.Template)
			}
			continue
		}
		jinjaFamilies++
		found := false
		entries, _ := os.ReadDir(filepath.Join("testdata", "official"))
		for _, e := range entries {
			data, err := os.ReadFile(filepath.Join("testdata", "official", e.Name()))
			if err == nil && string(data) == f.Source() {
				found = true
				official[f.Name] = e.Name()
			}
		}
		if !found {
			t.Errorf("%s: families/%s is not byte-identical to any official template in testdata/official", f.Name, f.Template)
		}
	}
	if jinjaFamilies < 11 {
		t.Errorf("only %d families render their official template; the conformance suite measured 11", jinjaFamilies)
	}
}

func loadedJinja(t testing.TB, file string, tok SpecialTokens) *Jinja {
	t.Helper()
	src, err := os.ReadFile(filepath.Join(conformanceDir, file))
	if err != nil {
		t.Fatal(err)
	}
	j, err := CompileJinja(filepath.Base(file), string(src), tok)
	if err != nil {
		t.Fatal(err)
	}
	return j
}

func TestFamilyOf(t *testing.T) {
	tests := []struct {
		file           string
		tok            SpecialTokens
		wantFamily     string // a built-in family, or "" for an unknown template
		wantNative     string
		wantStop       []string
		wantGenPrompt  string
		wantControl    []string // must be among ControlTokens
		wantStringArgs bool
	}{
		{"../official/Qwen-Qwen2.5-7B-Instruct.jinja", SpecialTokens{EOS: "<|im_end|>"}, "qwen2.5", "hermes", nil, "<|im_start|>assistant\n", nil, false},
		{"templates/zai-org-GLM-4.5.jinja", SpecialTokens{EOS: "<|endoftext|>"}, "", "", []string{"<|user|>", "<|endoftext|>"}, "<|assistant|>", []string{"<|user|>", "<|assistant|>", "<|observation|>"}, false},
		{"templates/llama-cpp-lfm2.jinja", SpecialTokens{BOS: "<|startoftext|>", EOS: "<|im_end|>"}, "", "", []string{"<|im_end|>"}, "<|im_start|>assistant\n", []string{"<|im_start|>", "<|tool_call_start|>"}, false},
		{"templates/deepseek-ai-DeepSeek-V3.1.jinja", SpecialTokens{BOS: "<｜begin▁of▁sentence｜>", EOS: "<｜end▁of▁sentence｜>"}, "", "", []string{"<｜end▁of▁sentence｜>"}, "<｜Assistant｜></think>", []string{"<｜tool▁calls▁begin｜>"}, true},
		// Hermes 3's tool prompt (its fingerprint) in Llama 3 turns: not
		// the hermes3 family, whose transliteration writes ChatML.
		{"../unseen/templates/hermes-4-70b.jinja", SpecialTokens{BOS: "<|begin_of_text|>", EOS: "<|eot_id|>"}, "", "", []string{"<|eot_id|>"}, "<|start_header_id|>assistant<|end_header_id|>\n\n", []string{"<|start_header_id|>"}, false},
		// Recognised by its turns, and its generation prompt agrees.
		{"../unseen/templates/granite-4.0.jinja", SpecialTokens{EOS: "<|end_of_text|>"}, "granite3", "json", nil, "<|start_of_role|>assistant<|end_of_role|>", nil, false},
	}
	for _, tt := range tests {
		t.Run(filepath.Base(tt.file), func(t *testing.T) {
			f, err := FamilyOf(loadedJinja(t, tt.file, tt.tok))
			if err != nil {
				t.Fatal(err)
			}
			if tt.wantFamily != "" {
				if f.Name != tt.wantFamily || f.NativeFormat != tt.wantNative {
					t.Fatalf("family %s native %q, want %s %q", f.Name, f.NativeFormat, tt.wantFamily, tt.wantNative)
				}
			} else {
				if f.NativeFormat != "" || f.DefaultFormat != UnknownDefaultFormat {
					t.Errorf("unknown template: native %q default %q, want \"\" and %q", f.NativeFormat, f.DefaultFormat, UnknownDefaultFormat)
				}
				if diff := cmp.Diff(tt.wantStop, f.Stop); diff != "" {
					t.Errorf("stop (-want +got):\n%s", diff)
				}
			}
			if f.GenerationPrompt != tt.wantGenPrompt && tt.wantFamily == "" {
				t.Errorf("generation prompt %q, want %q", f.GenerationPrompt, tt.wantGenPrompt)
			}
			for _, c := range tt.wantControl {
				if !contains(f.ControlTokens, c) {
					t.Errorf("control tokens %q lack %q", f.ControlTokens, c)
				}
			}
			if f.Conventions.ArgumentsAsString != tt.wantStringArgs {
				t.Errorf("arguments as string = %v, want %v", f.Conventions.ArgumentsAsString, tt.wantStringArgs)
			}
			got, err := f.Render(Input{Messages: []chat.Message{{Role: chat.RoleUser, Content: "hi"}}, AddGenerationPrompt: true, Now: fixedNow})
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(got, "hi") {
				t.Errorf("rendering lacks the user text: %q", got)
			}
		})
	}
}

// TestFamilyOfRendersLikeJinja2 renders conformance conversations through
// a loaded unknown template's Family (chat.Message in, the JSON shape out)
// and compares with the Jinja2 goldens (vllm style).
func TestFamilyOfRendersLikeJinja2(t *testing.T) {
	entries, convs := loadConformance(t)
	for _, id := range []string{"zai-org-GLM-4.5", "llama-cpp-lfm2", "moonshotai-Kimi-K2", "NVIDIA-Nemotron-Nano-v2"} {
		var e conformanceEntry
		for _, x := range entries {
			if x.ID == id {
				e = x
			}
		}
		f, err := FamilyOf(loadedJinja(t, e.File, e.tokens()))
		if err != nil {
			t.Fatal(err)
		}
		var golden map[string]conformanceGolden
		readJSONFile(t, filepath.Join(conformanceDir, "golden", id+".json"), &golden)
		for _, c := range convs {
			if c.Kwargs != nil || strings.HasPrefix(c.ID, "shared_") || c.ID == "l_content_parts" {
				continue // kwargs and other input shapes are not what toolharness sends
			}
			key := c.ID
			if _, ok := golden[key]; !ok {
				key += ".vllm"
			}
			want := golden[key]
			body, _ := json.Marshal(map[string]json.RawMessage{"messages": c.Messages, "tools": c.Tools})
			conv, err := chat.ParseConversation(body)
			if err != nil {
				t.Fatal(err)
			}
			in := Input{Messages: conv.Messages, Tools: conv.Tools, AddGenerationPrompt: c.AddGenerationPrompt == nil || *c.AddGenerationPrompt, Now: conformanceNow}
			got, err := f.Render(in)
			if !want.OK {
				if err == nil {
					t.Errorf("%s/%s: Jinja2 raises %s, FamilyOf renders", id, key, want.Error)
				}
				continue
			}
			if err != nil {
				t.Errorf("%s/%s: %v", id, key, err)
				continue
			}
			if diff := cmp.Diff(want.Text, got); diff != "" {
				t.Errorf("%s/%s (-jinja2 +ours):\n%s", id, key, diff)
			}
		}
	}
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

func TestEndOfTurnStop(t *testing.T) {
	for eot, want := range map[string]string{
		"<|im_end|>\n": "<|im_end|>", "</s>": "</s>", "<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n": "<|eot_id|>",
		"<|endoftext|>\n\n### Response": "<|endoftext|>", "<step> Source: assistant\nDestination: user\n\n": "", "": "",
		"<end_message>": "<end_message>",
	} {
		if got := endOfTurnStop(eot); got != want {
			t.Errorf("endOfTurnStop(%q) = %q, want %q", eot, got, want)
		}
	}
}

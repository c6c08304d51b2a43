package templates

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolharness/toolharness/chat"
)

// TestLoadedTemplateRendersAsLoaded: a loaded template fingerprinted as a
// family that keeps a transliteration (hermes3, gpt-oss) renders as
// loaded: the transliteration renders it only when the file is the
// official template it was checked against, byte for byte. An edit to the
// official file must show in the render.
func TestLoadedTemplateRendersAsLoaded(t *testing.T) {
	tests := []struct {
		family, file, phrase string
		tokens               SpecialTokens
	}{
		{"hermes3", "NousResearch-Hermes-3-Llama-3.1-8B-tool_use.jinja", "You are a function calling AI model.", SpecialTokens{BOS: "<|begin_of_text|>", EOS: "<|im_end|>"}},
		{"gpt-oss", "openai-gpt-oss-120b.jinja", "You are ChatGPT, a large language model trained by OpenAI.", SpecialTokens{BOS: "<|startoftext|>", EOS: "<|return|>"}},
	}
	in := Input{
		Messages: []chat.Message{{Role: chat.RoleUser, Content: "Weather in Paris?"}},
		Tools: []chat.Tool{{Name: "get_weather", Description: "Get the weather.",
			Parameters: json.RawMessage(`{"type": "object", "properties": {"location": {"type": "string"}}, "required": ["location"]}`)}},
		AddGenerationPrompt: true,
		Now:                 time.Date(2025, 3, 14, 9, 26, 53, 0, time.UTC),
	}
	for _, tt := range tests {
		t.Run(tt.family, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata", "official", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			official := string(data)
			const edit = "EDITED BY THE USER."
			if !strings.Contains(official, tt.phrase) {
				t.Fatalf("%s lacks %q", tt.file, tt.phrase)
			}
			edited := strings.Replace(official, tt.phrase, tt.phrase+" "+edit, 1)
			for _, c := range []struct {
				name, src      string
				transliterated bool
			}{
				{"official", official, true},
				{"edited", edited, false},
			} {
				j, err := CompileJinja(tt.file, c.src, tt.tokens)
				if err != nil {
					t.Fatal(err)
				}
				f, err := FamilyOf(j)
				if err != nil {
					t.Fatal(err)
				}
				if f.Name != tt.family || f.Transliterated() != c.transliterated {
					t.Fatalf("%s: family %s transliterated %v (%s), want %s %v", c.name, f.Name, f.Transliterated(), f.RenderedBy(), tt.family, c.transliterated)
				}
				out, err := f.Render(in)
				if err != nil {
					t.Fatalf("%s: %v", c.name, err)
				}
				if got := strings.Contains(out, edit); got == c.transliterated {
					t.Errorf("%s: the edit shows in the render: %v (rendered by %s)", c.name, got, f.RenderedBy())
				}
				want := "byte-identical to the official one"
				if !c.transliterated {
					want = "the loaded template (" + tt.file + ")"
				}
				if !strings.Contains(f.RenderedBy(), want) {
					t.Errorf("%s: RenderedBy %q, want it to say %q", c.name, f.RenderedBy(), want)
				}
			}
			byName, err := Lookup(tt.family)
			if err != nil {
				t.Fatal(err)
			}
			if !byName.Transliterated() || !strings.Contains(byName.RenderedBy(), "asked for by name") {
				t.Errorf("by name: transliterated %v, %q", byName.Transliterated(), byName.RenderedBy())
			}
		})
	}
}

// TestCheckedOfficialHashes: the hashes the transliterations are chosen
// by are those of the official files their goldens were rendered from.
func TestCheckedOfficialHashes(t *testing.T) {
	for family, file := range map[string]string{
		"hermes3": "NousResearch-Hermes-3-Llama-3.1-8B-tool_use.jinja",
		"gpt-oss": "openai-gpt-oss-120b.jinja",
	} {
		data, err := os.ReadFile(filepath.Join("testdata", "official", file))
		if err != nil {
			t.Fatal(err)
		}
		if got := sourceSHA256(string(data)); got != checkedOfficial(family) {
			t.Errorf("%s: %s has SHA-256 %s, checkedOfficial says %s", family, file, got, checkedOfficial(family))
		}
	}
}

// TestAddsArgumentsToString: only + with the arguments themselves is
// what Jinja2 refuses for a dict; ~, {{ }} and filters print its str().
func TestAddsArgumentsToString(t *testing.T) {
	tests := []struct {
		src  string
		want bool
	}{
		{`{{ '{"arguments": ' + tool_call.function.arguments + '}' }}`, true},
		{`{{ '<｜tool▁sep｜>' + tool['function']['arguments'] }}`, true},
		{`{{ tc.arguments + '}' }}`, true},
		{`{% set args = tool_call.function.arguments %}{{ 'x' + args }}`, true},
		{`{{ '"arguments": ' ~ tool_call.function.arguments }}`, false},
		{`{{ tool_call.function.arguments }}`, false},
		{`{{ 'x' + tool_call.function.arguments|tojson }}`, false},
		{`{{ 'x' + tool_call.function.arguments|string }}`, false},
		{`{{ 'x' + tool_call.function.arguments.city }}`, false},
		{`{{ 'write + arguments here' ~ x }}`, false},
		{`{# 'x' + arguments #}{{ arguments }}`, false},
	}
	for _, tt := range tests {
		if got := addsArgumentsToString(tt.src); got != tt.want {
			t.Errorf("%s: %v, want %v", tt.src, got, tt.want)
		}
	}
}

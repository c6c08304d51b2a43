package render

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/toolharness/toolharness/chat"
	"github.com/toolharness/toolharness/templates"
)

// FuzzPrompt renders untrusted text (seeded with real model outputs, which
// are full of markers) as a user message and a tool result, in every
// family and format picked by the fuzzer, and checks that rendering never
// fails and that the text adds no marker to the prompt.
func FuzzPrompt(f *testing.F) {
	file, err := os.Open(filepath.Join("testdata", "seeds.jsonl"))
	if err != nil {
		f.Fatal(err)
	}
	defer file.Close()
	sc := bufio.NewScanner(file)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for i := uint8(0); sc.Scan(); i++ {
		var rec struct{ Raw string }
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			f.Fatal(err)
		}
		f.Add(rec.Raw, i, i/3)
	}
	fams, err := templates.Families()
	if err != nil {
		f.Fatal(err)
	}
	formats := Formats()
	tools := []chat.Tool{{Name: "get_weather", Description: "Weather.", Parameters: []byte(`{"type":"object","properties":{"location":{"type":"string"}}}`)}}
	conv := func(text string) []chat.Message {
		return []chat.Message{
			{Role: chat.RoleSystem, Content: "sys"},
			{Role: chat.RoleUser, Content: text},
			{Role: chat.RoleAssistant, ToolCalls: []chat.ToolCall{{ID: "call00001", Name: "get_weather", Arguments: []byte(`{"location":"Paris"}`)}}},
			{Role: chat.RoleTool, ToolCallID: "call00001", Content: text},
		}
	}
	f.Fuzz(func(t *testing.T, text string, famIdx, formatIdx uint8) {
		if !utf8.ValidString(text) || strings.Contains(text, Breaker) {
			return
		}
		fam := fams[int(famIdx)%len(fams)]
		format := formats[int(formatIdx)%len(formats)]
		got, err := Prompt(Request{Family: fam, Format: format, Messages: conv(text), Tools: tools, Now: fixedNow})
		if err != nil {
			t.Fatalf("%s/%s: %v", fam.Name, format, err)
		}
		base, err := Prompt(Request{Family: fam, Format: format, Messages: conv("x"), Tools: tools, Now: fixedNow})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range ResultTextMarkers(fam, format) {
			if strings.Count(got, m) != strings.Count(base, m) {
				t.Fatalf("%s/%s: %q added by untrusted text", fam.Name, format, m)
			}
		}
	})
}

package derive

import (
	"path/filepath"
	"testing"

	"github.com/toolharness/toolharness/chat"
	"github.com/toolharness/toolharness/parse"
)

// reconstructedDir holds templates written for these tests (see its
// README): Gemma 4's, with its <|"|> quote tokens.
const reconstructedDir = "testdata/reconstructed"

func loadReconstructed(t testing.TB) []suiteEntry {
	t.Helper()
	// compileSuite reads files relative to the conformance directory.
	return loadManifest(t, reconstructedDir, filepath.Join("..", "..", "..", "derive", reconstructedDir))
}

// TestReconstructedSuite is TestUnseenSuite for testdata/reconstructed.
func TestReconstructedSuite(t *testing.T) {
	checkReconstructions(t, loadReconstructed(t), "renders-reconstructed", "reconstructed.txt")
}

// TestGemma4 derives Gemma 4's call syntax (quote tokens standing for
// JSON's quotes, bare keys) and reads a call as a model writes it.
func TestGemma4(t *testing.T) {
	var e suiteEntry
	for _, x := range loadReconstructed(t) {
		if x.ID == "gemma-4-it" {
			e = x
		}
	}
	if e.ID == "" {
		t.Fatal("gemma-4-it is not in the reconstructed manifest")
	}
	res, err := Derive(compileSuite(t, e), Tokens{BOS: e.token("bos_token"), EOS: e.token("eos_token")})
	if err != nil {
		t.Fatal(err)
	}
	s := res.Syntax
	if !res.WritesCalls || !res.Parallel || !res.ParsesOwnCalls || res.Format != "" {
		t.Fatalf("writes calls %v, parallel %v, parses its own calls %v, format %q; notes %q",
			res.WritesCalls, res.Parallel, res.ParsesOwnCalls, res.Format, res.Notes)
	}
	if s.Body != parse.BodyNameJSON || s.CallOpen != "<|tool_call>" || s.CallClose != "<tool_call|>" ||
		s.NamePrefix != "call:" || s.Quote != `<|"|>` {
		t.Fatalf("derived %+v", s)
	}
	tools, err := chat.ParseTools([]byte(`[{"type": "function", "function": {"name": "get_weather", "parameters": ` +
		`{"type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}}}}}]`))
	if err != nil {
		t.Fatal(err)
	}
	p, err := res.NewOutputParser(parse.Options{Tools: tools})
	if err != nil {
		t.Fatal(err)
	}
	out := `Let me check.<|tool_call>call:get_weather{city:<|"|>Berlin<|"|>}<tool_call|>` +
		`<|tool_call>call:get_weather{city:<|"|>Paris, "FR"<|"|>,days:3}<tool_call|>`
	var content string
	var calls []chat.ToolCall
	emit := func(ev parse.Event) {
		switch ev.Type {
		case parse.EventText:
			content += ev.Text
		case parse.EventCall:
			calls = append(calls, ev.Call)
			if ev.Err != nil {
				t.Errorf("call %s: %v", ev.Call.Name, ev.Err)
			}
		case parse.EventError:
			t.Errorf("error: %v", ev.Err)
		}
	}
	p.Feed(out, emit)
	p.Close(emit)
	want := []string{`get_weather {"city":"Berlin"}`, `get_weather {"city":"Paris, \"FR\"","days":3}`}
	if len(calls) != len(want) || content != "Let me check." {
		t.Fatalf("content %q, calls %v", content, calls)
	}
	for i, c := range calls {
		if s := c.Name + " " + string(c.Arguments); s != want[i] {
			t.Errorf("call %d: %s, want %s", i, s, want[i])
		}
	}
}

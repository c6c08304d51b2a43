package templates

import (
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	goldenfile "github.com/toolharness/toolharness/internal/golden"

	"github.com/google/go-cmp/cmp"
	"github.com/toolharness/toolharness/chat"
)

var update = flag.Bool("update", false, "rewrite the Go-only goldens (*.go.txt); official goldens come from testdata/gen.py")

// fixedNow is the clock of testdata/official/render.py.
var fixedNow = time.Date(2025, 3, 14, 9, 26, 53, 0, time.UTC)

// deviations are conversations where the official template raises but
// toolharness renders on purpose; their expected output is <id>.go.txt.
var deviations = map[string]string{
	"hermes3/a_system_user":           "tool_use variant raises on tools=None; transformers would pick the default ChatML variant, which we render",
	"hermes3/a2_user_only":            "same",
	"hermes3/a3_no_generation_prompt": "same",
}

type testConv struct {
	ID                  string          `json:"id"`
	AddGenerationPrompt *bool           `json:"add_generation_prompt"`
	Tools               json.RawMessage `json:"tools"`
	Messages            json.RawMessage `json:"messages"`
}

func loadConversations(t *testing.T) []struct {
	ID string
	In Input
} {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "conversations.json"))
	if err != nil {
		t.Fatalf("read conversations (regenerate with testdata/make_conversations.py): %v", err)
	}
	var doc struct {
		Conversations []testConv `json:"conversations"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	var out []struct {
		ID string
		In Input
	}
	for _, c := range doc.Conversations {
		body, _ := json.Marshal(map[string]json.RawMessage{"messages": c.Messages, "tools": c.Tools})
		conv, err := chat.ParseConversation(body)
		if err != nil {
			t.Fatalf("%s: %v", c.ID, err)
		}
		in := Input{Messages: conv.Messages, Tools: conv.Tools, AddGenerationPrompt: true, Now: fixedNow}
		if c.AddGenerationPrompt != nil {
			in.AddGenerationPrompt = *c.AddGenerationPrompt
		}
		out = append(out, struct {
			ID string
			In Input
		}{c.ID, in})
	}
	return out
}

// TestConformance renders every conversation with every family and compares
// with the official template's rendering made by the real Jinja2 engine.
func TestConformance(t *testing.T) {
	fams, err := Families()
	if err != nil {
		t.Fatal(err)
	}
	convs := loadConversations(t)
	for _, f := range fams {
		dir := filepath.Join("testdata", "golden", f.Name)
		if _, err := os.Stat(dir); err != nil {
			t.Errorf("%s: no goldens in %s (add the family to testdata/gen.py and run it)", f.Name, dir)
			continue
		}
		for _, c := range convs {
			key := f.Name + "/" + c.ID
			t.Run(key, func(t *testing.T) {
				got, rerr := f.Render(c.In)
				base := filepath.Join(dir, c.ID)
				if _, dev := deviations[key]; dev {
					compareGoOnly(t, base+".go.txt", got, rerr)
					return
				}
				if want, err := os.ReadFile(base + ".txt"); err == nil {
					if rerr != nil {
						t.Fatalf("official template renders, we fail: %v", rerr)
					}
					if diff := cmp.Diff(string(want), got); diff != "" {
						t.Errorf("(-official +ours):\n%s", diff)
					}
					return
				}
				want, err := os.ReadFile(base + ".err")
				if err != nil {
					t.Fatalf("no golden %s.txt or .err: run testdata/gen.py", base)
				}
				if rerr == nil {
					t.Fatalf("official template raises %q, we render:\n%s", strings.TrimSpace(string(want)), got)
				}
			})
		}
	}
}

func compareGoOnly(t *testing.T, path, got string, rerr error) {
	t.Helper()
	if rerr != nil {
		t.Fatalf("render: %v", rerr)
	}
	goldenfile.Check(t, *update, path, got)
}

func TestLookupUnknown(t *testing.T) {
	if _, err := Lookup("nope"); !errors.Is(err, ErrUnknownFamily) {
		t.Errorf("got %v", err)
	}
}

func TestFamilyFilesNamedAfterFamilies(t *testing.T) {
	fams, err := Families()
	if err != nil {
		t.Fatal(err)
	}
	names := Names()
	if len(fams) != len(names) || len(fams) != 13 {
		t.Fatalf("%d families, %d names", len(fams), len(names))
	}
	for i, f := range fams {
		if f.Name != names[i] {
			t.Errorf("family %q in file %s.yaml", f.Name, names[i])
		}
		if f.Definition() == "" || f.Source() == "" {
			t.Errorf("%s: empty definition or template", f.Name)
		}
		if f.NativeFormat != "" && f.DefaultFormat != f.NativeFormat {
			t.Errorf("%s: default format %s differs from native %s", f.Name, f.DefaultFormat, f.NativeFormat)
		}
		if len(f.Stop) == 0 || len(f.ControlTokens) == 0 || len(f.Fingerprints) == 0 {
			t.Errorf("%s: stop tokens, control tokens and fingerprints are required", f.Name)
		}
	}
}

func TestTemplateErrorIsTyped(t *testing.T) {
	f, err := Lookup("llama3.1")
	if err != nil {
		t.Fatal(err)
	}
	calls := []chat.ToolCall{{Name: "a", Arguments: []byte(`{}`)}, {Name: "b", Arguments: []byte(`{}`)}}
	_, err = f.Render(Input{Messages: []chat.Message{{Role: chat.RoleUser, Content: "x"}, {Role: chat.RoleAssistant, ToolCalls: calls}}, Tools: []chat.Tool{{Name: "a"}, {Name: "b"}}})
	var te *TemplateError
	if !errors.As(err, &te) || te.Message != "This model only supports single tool-calls at once!" || te.Family != "llama3.1" {
		t.Errorf("got %v", err)
	}
	if _, err := f.Render(Input{}); err == nil {
		t.Error("no messages: no error")
	}
}

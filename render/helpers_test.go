package render

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	goldenfile "github.com/toolharness/toolharness/internal/golden"

	"github.com/toolharness/toolharness/chat"
	"github.com/toolharness/toolharness/templates"
)

var update = flag.Bool("update", false, "rewrite the goldens under testdata/")

// fixedNow is the clock of the reference renderings (templates/testdata).
var fixedNow = time.Date(2025, 3, 14, 9, 26, 53, 0, time.UTC)

// testTools are the conversations' tools plus one with every value type.
func testTools(t *testing.T) []chat.Tool {
	t.Helper()
	tools, err := chat.ParseTools([]byte(`[
 {"type":"function","function":{"name":"get_weather","description":"Get the current weather for a location.","parameters":{"type":"object","properties":{"location":{"type":"string","description":"City name, e.g. Paris"},"unit":{"type":"string","enum":["celsius","fahrenheit"],"description":"Temperature unit"}},"required":["location"]}}},
 {"type":"function","function":{"name":"read_file","description":"Read a text file from disk.","parameters":{"type":"object","properties":{"path":{"type":"string","description":"Absolute path of the file"},"limit":{"type":"integer","description":"Maximum number of lines to return (optional)"}},"required":["path"]}}},
 {"type":"function","function":{"name":"edit","description":"Edit <files> & \"things\" — ünïcode.","parameters":{"type":"object","properties":{"text":{"type":"string"},"n":{"type":"number","default":1.0},"flag":{"type":"boolean"},"list":{"type":"array","items":{"type":"string"}},"opts":{"type":"object","properties":{"a":{"type":"integer"}}}},"required":["text"]}}}
]`))
	if err != nil {
		t.Fatal(err)
	}
	return tools
}

func lookup(t *testing.T, name string) templates.Family {
	t.Helper()
	f, err := templates.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func families(t *testing.T) []templates.Family {
	t.Helper()
	fams, err := templates.Families()
	if err != nil {
		t.Fatal(err)
	}
	return fams
}

// golden compares got with testdata/name, rewriting it under -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	goldenfile.Check(t, *update, filepath.Join("testdata", name), got)
}

type refConv struct {
	ID                  string
	AddGenerationPrompt bool
	Conv                chat.Conversation
}

// referenceConversations reads the conversations the templates package's
// official goldens were rendered from.
func referenceConversations(t *testing.T) []refConv {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "templates", "testdata", "conversations.json"))
	if err != nil {
		t.Fatalf("%v (the reference conversations live in templates/testdata)", err)
	}
	var doc struct {
		Conversations []struct {
			ID                  string          `json:"id"`
			AddGenerationPrompt *bool           `json:"add_generation_prompt"`
			Tools               json.RawMessage `json:"tools"`
			Messages            json.RawMessage `json:"messages"`
		} `json:"conversations"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	var out []refConv
	for _, c := range doc.Conversations {
		body, _ := json.Marshal(map[string]json.RawMessage{"messages": c.Messages, "tools": c.Tools})
		conv, err := chat.ParseConversation(body)
		if err != nil {
			t.Fatalf("%s: %v", c.ID, err)
		}
		out = append(out, refConv{ID: c.ID, AddGenerationPrompt: c.AddGenerationPrompt == nil || *c.AddGenerationPrompt, Conv: conv})
	}
	return out
}

func lookupFamily(name string) (templates.Family, error) { return templates.Lookup(name) }

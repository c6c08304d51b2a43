package registry

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/toolharness/toolharness/chat"
)

func TestLint(t *testing.T) {
	tool := func(name, desc, schema string) chat.Tool {
		return chat.Tool{Name: name, Description: desc, Parameters: json.RawMessage(schema)}
	}
	tests := []struct {
		name  string
		tools []chat.Tool
		want  []string
	}{
		{"clean", []chat.Tool{
			tool("get_weather", "Current weather for a city.", `{"type":"object","properties":{"city":{"type":"string","description":"city name"},"units":{"type":"string","enum":["c","f"],"description":"c for Celsius, f for Fahrenheit"}}}`),
		}, nil},
		{"descriptions", []chat.Tool{
			tool("a", "", `{"type":"object"}`),
			tool("b", "  Searches ", `{"type":"object","properties":{"q":{"type":"string"},"opts":{"type":"object","properties":{"deep":{"type":"boolean"}}},"tags":{"type":"array","description":"tags","items":{"type":"object","properties":{"k":{"type":"string"}}}}}}`),
		}, []string{
			"error: a: no description: the model can only guess what the tool does",
			`warning: b: one-word description "Searches": say what the tool does and when to use it`,
			"warning: b.opts: parameter has no description",
			"warning: b.opts.deep: parameter has no description",
			"warning: b.q: parameter has no description",
			"warning: b.tags[].k: parameter has no description",
		}},
		{"names", []chat.Tool{
			tool("read_file", "Read a file.", `{}`),
			tool("ReadFile", "Read a file too.", `{}`),
			tool("read-file", "Read a file again.", `{}`),
		}, []string{
			`error: ReadFile: name differs from "read_file" only in case or separators; a model will confuse them`,
			`error: read-file: name differs from "read_file" only in case or separators; a model will confuse them`,
		}},
		{"name characters", []chat.Tool{
			tool("b c", "Has a space.", `{}`),
			tool("mcp__srv__x.y-z", "A fine name.", `{}`),
			tool("get<tool>", "Markup in the name.", `{}`),
		}, []string{
			`error: b c: name has the character(s) ' ': call formats and APIs take names of letters, digits, '_', '-' and '.' (a model writing it will break the call syntax)`,
			`error: get<tool>: name has the character(s) '<', '>': call formats and APIs take names of letters, digits, '_', '-' and '.' (a model writing it will break the call syntax)`,
		}},
		{"enum and schema", []chat.Tool{
			tool("sort", "Sort rows.", `{"type":"object","properties":{"order":{"type":"string","enum":["asc","desc"],"description":"sort order"}}}`),
			tool("broken", "Broken schema.", `{"type":"object","properties":{"n":{"type":"int"}}}`),
		}, []string{
			"error: broken: schema does not compile at /properties/n/type: value must be one of 'array', 'boolean', 'integer', 'null', 'number', 'object', 'string'",
			"warning: broken.n: parameter has no description", // a schema that does not compile is still reviewed
			"warning: sort.order: enum values are not explained in the description",
		}},
		{"duplicates among other findings", []chat.Tool{
			tool("read_file", "Read a file.", `{"type":"object","properties":{"path":{"type":"string","description":"file path"}}}`),
			tool("read_file", "Read a file again.", `{}`),
			tool("grep", "", `{}`),
			tool("read_file", "Once more.", `{}`),
		}, []string{
			"error: grep: no description: the model can only guess what the tool does",
			"error: read_file: defined 3 times: the model cannot tell them apart",
		}},
		{"every schema error", []chat.Tool{
			tool("two", "Two bad types.", `{"type":"object","properties":{"a":{"type":"int","description":"a"},"b":{"type":"str","description":"b"}}}`),
		}, []string{
			"error: two: schema does not compile at /properties/a/type: value must be one of 'array', 'boolean', 'integer', 'null', 'number', 'object', 'string'",
			"error: two: schema does not compile at /properties/b/type: value must be one of 'array', 'boolean', 'integer', 'null', 'number', 'object', 'string'",
		}},
		{"ref cycles", []chat.Tool{
			tool("tree", "Walk a tree.", `{"type":"object","properties":{"root":{"$ref":"#/$defs/node","description":"the root"}},"$defs":{"node":{"type":"object","properties":{"kids":{"type":"array","description":"children","items":{"$ref":"#/$defs/node"}}}}}}`),
			tool("pair", "Two schemas that refer to each other.", `{"type":"object","properties":{"a":{"$ref":"#/$defs/a","description":"a"}},"$defs":{"a":{"type":"object","properties":{"b":{"$ref":"#/$defs/b","description":"b"}}},"b":{"type":"object","properties":{"a":{"$ref":"#/$defs/a","description":"a"}}}}}`),
			tool("flat", "A ref without a cycle.", `{"type":"object","properties":{"p":{"$ref":"#/$defs/s","description":"p"}},"$defs":{"s":{"type":"string"}}}`),
		}, []string{
			"error: pair: $ref cycle #/$defs/a → #/$defs/b → #/$defs/a: a recursive schema cannot be shown to the model or checked, so every call fails",
			"error: tree: $ref cycle #/$defs/node → #/$defs/node: a recursive schema cannot be shown to the model or checked, so every call fails",
		}},
		{"required, types and enums", []chat.Tool{
			tool("set", "Set a value.", `{"type":"object","required":["key","vlaue"],"properties":{"key":{"type":"string","description":"the key"},"value":{"description":"the value"},"level":{"type":"integer","enum":[1,2,"high",2.5],"description":"1, 2, high or 2.5"},"opts":{"type":"object","description":"options","required":["x"]}}}`),
		}, []string{
			`error: set: required names "vlaue", which is not a property: no call can satisfy the schema`,
			`error: set.level: enum value "high" is not of type integer: no valid call can use it`,
			`error: set.level: enum value 2.5 is not of type integer: no valid call can use it`,
			`error: set.opts: required names "x", which is not a property: no call can satisfy the schema`,
			"warning: set.value: parameter has no type: the model has to guess what to write",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, f := range Lint(tt.tools, LintOptions{}) {
				got = append(got, f.String())
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestLintCatalogSize checks the context estimate: a catalog above a
// quarter of the window is a catalog-level warning, below it nothing.
func TestLintCatalogSize(t *testing.T) {
	var tools []chat.Tool
	for i := 0; i < 40; i++ {
		tools = append(tools, chat.Tool{Name: fmt.Sprintf("tool_%02d", i), Description: strings.Repeat("Does a thing well. ", 10),
			Parameters: json.RawMessage(`{"type":"object","properties":{"x":{"type":"string","description":"the x"}}}`)})
	}
	size := func(ctx int) []string {
		var got []string
		for _, f := range Lint(tools, LintOptions{ContextTokens: ctx}) {
			if f.Tool == "" {
				got = append(got, f.String())
			}
		}
		return got
	}
	got := size(8192)
	if len(got) != 1 || !strings.HasPrefix(got[0], "warning: (catalog): the catalog is about ") || !strings.Contains(got[0], "more than a quarter of a 8192-token context") {
		t.Errorf("8k context: %q", got)
	}
	if got := size(1 << 20); len(got) != 0 {
		t.Errorf("1M context: %q", got)
	}
}

// TestLintDeterministic: the same catalog gives the same findings in the
// same order, run after run.
func TestLintDeterministic(t *testing.T) {
	tools := []chat.Tool{
		{Name: "b", Parameters: json.RawMessage(`{"type":"object","properties":{"z":{},"a":{"type":"int"}},"required":["q","p"]}`)},
		{Name: "a", Description: "x", Parameters: json.RawMessage(`{"type":"object","properties":{"n":{"$ref":"#/$defs/n"}},"$defs":{"n":{"properties":{"m":{"$ref":"#/$defs/n"}}}}}`)},
		{Name: "b", Parameters: json.RawMessage(`{}`)},
	}
	first := Lint(tools, LintOptions{})
	for i := 0; i < 20; i++ {
		if diff := cmp.Diff(first, Lint(tools, LintOptions{})); diff != "" {
			t.Fatalf("run %d differs:\n%s", i, diff)
		}
	}
}

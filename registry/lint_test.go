package registry

import (
	"encoding/json"
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
		{"enum and schema", []chat.Tool{
			tool("sort", "Sort rows.", `{"type":"object","properties":{"order":{"type":"string","enum":["asc","desc"],"description":"sort order"}}}`),
			tool("broken", "Broken schema.", `{"type":"object","properties":{"n":{"type":"int"}}}`),
		}, []string{
			"error: broken: schema does not compile at /properties/n/type: value must be one of 'array', 'boolean', 'integer', 'null', 'number', 'object', 'string'",
			"warning: sort.order: enum values are not explained in the description",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, f := range Lint(tt.tools) {
				got = append(got, f.String())
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

package agent

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/toolharness/toolharness/chat"
)

var testTools = []chat.Tool{
	{Name: "read_file", Description: "Read a file.", Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"},"limit":{"type":"integer"}},"required":["path"]}`)},
	{Name: "list_dir", Description: "List a directory.", Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"},"opts":{"type":"object","properties":{"all":{"type":"boolean"}}}},"additionalProperties":true}`)},
}

func TestCallSchema(t *testing.T) {
	for _, tt := range []struct {
		name   string
		answer bool
	}{{"schema_calls.golden", false}, {"schema_calls_answer.golden", true}} {
		t.Run(tt.name, func(t *testing.T) {
			s, err := CallSchema(testTools, SchemaOptions{AllowAnswer: tt.answer})
			if err != nil {
				t.Fatal(err)
			}
			golden(t, tt.name, string(s)+"\n")
			// The schema must compile and accept/refuse as intended.
			var doc any
			if err := json.Unmarshal(s, &doc); err != nil {
				t.Fatal(err)
			}
			c := jsonschema.NewCompiler()
			if err := c.AddResource("s.json", doc); err != nil {
				t.Fatal(err)
			}
			sch, err := c.Compile("s.json")
			if err != nil {
				t.Fatal(err)
			}
			for in, want := range map[string]bool{
				`{"name":"read_file","arguments":{"path":"a"}}`:          true,
				`{"name":"read_file","arguments":{"path":"a","x":1}}`:    false,
				`{"name":"list_dir","arguments":{"x":1}}`:                true, // declared open
				`{"name":"list_dir","arguments":{"opts":{"x":1}}}`:       false,
				`{"name":"rm","arguments":{}}`:                           false,
				`{"answer":"done"}`:                                      tt.answer,
				`{"name":"read_file","arguments":{"path":"a"},"more":1}`: false,
			} {
				var v any
				_ = json.Unmarshal([]byte(in), &v)
				if got := sch.Validate(v) == nil; got != want {
					t.Errorf("%s: valid=%v, want %v", in, got, want)
				}
			}
		})
	}
	if _, err := CallSchema(nil, SchemaOptions{}); err == nil {
		t.Error("no tools, no answer: no error")
	}
	if _, err := CallSchema([]chat.Tool{{Name: "x", Parameters: json.RawMessage(`{"a":`)}}, SchemaOptions{AllowAnswer: true}); err == nil {
		t.Error("bad schema: no error")
	}
}

func TestConstrainedParser(t *testing.T) {
	tests := []struct {
		in   string
		want []Event
	}{
		{in: `{"name":"read_file","arguments":{"path":"a.go"}}`, want: []Event{
			{Kind: EventCallStart, Call: &chat.ToolCall{Name: "read_file"}},
			{Kind: EventCall, Call: &chat.ToolCall{Name: "read_file", Arguments: json.RawMessage(`{"path":"a.go"}`), Raw: `{"name":"read_file","arguments":{"path":"a.go"}}`}},
		}},
		{in: `{"answer":"it is 4"}`, want: []Event{{Kind: EventText, Text: "it is 4"}}},
		{in: `{"name":"read_file","argu`, want: []Event{{Kind: EventError, Err: &ParseError{Kind: "bad_json", Message: "the constrained output is not one JSON object: unexpected end of JSON input"}}}},
		{in: `{}`, want: []Event{{Kind: EventError, Err: &ParseError{Kind: "missing_name", Message: `the output has neither "name" nor "answer"`}}}},
	}
	for _, tt := range tests {
		p := &constrainedParser{}
		var got []Event
		for i := 0; i < len(tt.in); i += 3 {
			got = append(got, p.Feed(tt.in[i:min(i+3, len(tt.in))])...)
		}
		got = append(got, p.Close()...)
		if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(ParseError{})); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.in, diff)
		}
	}
}

func TestCallSchemaMaxString(t *testing.T) {
	tools := []chat.Tool{{Name: "f", Parameters: json.RawMessage(`{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"string","maxLength":3},"c":{"type":"string","enum":["x"]},"d":{"type":"array","items":{"type":"string"}}}}`)}}
	s, err := CallSchema(tools, SchemaOptions{AllowAnswer: true, MaxString: 16})
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "schema_maxstring.golden", string(s)+"\n")
}

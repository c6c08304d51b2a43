package registry

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"path/filepath"
	"strings"
	"testing"

	goldenfile "github.com/toolharness/toolharness/internal/golden"

	"github.com/google/go-cmp/cmp"

	"github.com/toolharness/toolharness/chat"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

func nop(context.Context, json.RawMessage) (string, error) { return "ok", nil }

// weatherSchema exercises every keyword the model-facing messages cover.
const weatherSchema = `{"type":"object","properties":{
"city":{"type":"string","minLength":2,"maxLength":40,"description":"city name"},
"units":{"type":"string","enum":["celsius","fahrenheit"]},
"days":{"type":"integer","minimum":1,"maximum":7},
"date":{"type":"string","pattern":"^\\d{4}-\\d{2}-\\d{2}$"},
"ratio":{"type":"number","exclusiveMinimum":0,"exclusiveMaximum":1,"multipleOf":0.25},
"tags":{"type":"array","items":{"type":"string"},"minItems":1,"maxItems":3,"uniqueItems":true},
"detail":{"type":"object","properties":{"level":{"type":"integer"},"hourly":{"type":"boolean"}},"required":["level"],"additionalProperties":false},
"mode":{"const":"fast"},
"when":{"anyOf":[{"type":"string"},{"type":"integer"}]},
"note":{"type":["string","null"]}
},"required":["city","days"],"additionalProperties":false}`

func newWeather(t *testing.T, opts Options) *Registry {
	t.Helper()
	r := New(opts)
	if err := r.Register(Spec{Tool: chat.Tool{Name: "get_weather", Description: "Weather forecast.", Parameters: json.RawMessage(weatherSchema)}, Handler: nop}); err != nil {
		t.Fatal(err)
	}
	if err := r.Register(Spec{Tool: chat.Tool{Name: "set_alarm", Description: "Set an alarm.", Parameters: json.RawMessage(`{"type":"object","properties":{"time":{"type":"string"}},"required":["time"]}`)}, Handler: nop}); err != nil {
		t.Fatal(err)
	}
	return r
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	goldenfile.Check(t, *update, filepath.Join("testdata", name), got)
}

func TestValidateModelMessages(t *testing.T) {
	tests := []struct {
		name    string
		call    string // tool name
		args    string
		kind    Kind
		keyword []string // keywords of the causes, in order
	}{
		{"missing_required", "get_weather", `{"days":2}`, KindInvalidArguments, []string{"required"}},
		{"all_missing", "get_weather", `{}`, KindInvalidArguments, []string{"required", "required"}},
		{"wrong_type", "get_weather", `{"city":"Paris","days":"two"}`, KindInvalidArguments, []string{"type"}},
		{"enum", "get_weather", `{"city":"Paris","days":2,"units":"kelvin"}`, KindInvalidArguments, []string{"enum"}},
		{"pattern", "get_weather", `{"city":"Paris","days":2,"date":"tomorrow"}`, KindInvalidArguments, []string{"pattern"}},
		{"bounds", "get_weather", `{"city":"P","days":9,"ratio":1}`, KindInvalidArguments, []string{"minLength", "maximum", "exclusiveMaximum"}},
		{"max_length", "get_weather", `{"city":"` + strings.Repeat("x", 41) + `","days":1}`, KindInvalidArguments, []string{"maxLength"}},
		{"exclusive_min_multiple", "get_weather", `{"city":"Paris","days":1,"ratio":0}`, KindInvalidArguments, []string{"exclusiveMinimum"}},
		{"multiple_of", "get_weather", `{"city":"Paris","days":1,"ratio":0.3}`, KindInvalidArguments, []string{"multipleOf"}},
		{"additional", "get_weather", `{"city":"Paris","days":1,"colour":"red","zz":1}`, KindInvalidArguments, []string{"additionalProperties", "additionalProperties"}},
		{"items", "get_weather", `{"city":"Paris","days":1,"tags":["a",2,"a"]}`, KindInvalidArguments, []string{"uniqueItems", "type"}},
		{"min_items", "get_weather", `{"city":"Paris","days":1,"tags":[]}`, KindInvalidArguments, []string{"minItems"}},
		{"max_items", "get_weather", `{"city":"Paris","days":1,"tags":["a","b","c","d"]}`, KindInvalidArguments, []string{"maxItems"}},
		{"nested", "get_weather", `{"city":"Paris","days":1,"detail":{"hourly":"yes","x":1}}`, KindInvalidArguments, []string{"type", "required", "additionalProperties"}},
		{"const", "get_weather", `{"city":"Paris","days":1,"mode":"slow"}`, KindInvalidArguments, []string{"const"}},
		{"any_of", "get_weather", `{"city":"Paris","days":1,"when":true}`, KindInvalidArguments, []string{"anyOf"}},
		{"nullable", "get_weather", `{"city":"Paris","days":1,"note":5}`, KindInvalidArguments, []string{"type"}},
		{"huge_number", "get_weather", `{"city":"Paris","days":1,"ratio":1e-9999999,"detail":{"level":1e401}}`, KindInvalidArguments, []string{"type", "type"}},
		{"not_object", "get_weather", `[1,2]`, KindMalformedArguments, []string{"type"}},
		{"not_json", "get_weather", `{"city":`, KindMalformedArguments, []string{"type"}},
		{"unknown_tool_close", "get_wheather", `{}`, KindUnknownTool, nil},
		{"unknown_tool_case", "GetWeather", `{}`, KindUnknownTool, nil},
		{"unknown_tool_far", "launch_rocket", `{}`, KindUnknownTool, nil},
		{"no_name", "", `{}`, KindUnknownTool, nil},
	}
	r := newWeather(t, Options{})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := r.Validate(chat.ToolCall{ID: "c1", Name: tt.call, Arguments: json.RawMessage(tt.args)})
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("want *Error, got %v", err)
			}
			if e.Kind != tt.kind {
				t.Errorf("kind %s, want %s", e.Kind, tt.kind)
			}
			var kws []string
			for _, c := range e.Causes {
				kws = append(kws, c.Keyword)
			}
			if tt.keyword != nil {
				if diff := cmp.Diff(tt.keyword, kws); diff != "" {
					t.Errorf("keywords (-want +got):\n%s", diff)
				}
			}
			if !strings.HasPrefix(e.Error(), "registry: ") {
				t.Errorf("harness error %q lacks the package prefix", e.Error())
			}
			// Deterministic: the same call gives the same text.
			_, err2 := r.Validate(chat.ToolCall{ID: "c1", Name: tt.call, Arguments: json.RawMessage(tt.args)})
			if err2.(*Error).Message != e.Message {
				t.Errorf("message not stable:\n%s\n---\n%s", e.Message, err2.(*Error).Message)
			}
			golden(t, filepath.Join("messages", tt.name+".txt"), e.Message+"\n")
		})
	}
}

func TestExampleIsValid(t *testing.T) {
	// The corrected example must itself pass validation (placeholders fit
	// the schema), or the model is taught a wrong call.
	r := newWeather(t, Options{})
	for _, args := range []string{`{}`, `{"days":0,"ratio":5,"units":"x"}`, `{"city":"Paris","days":"3","tags":[1]}`,
		`{"city":"Paris","days":1,"detail":{"x":1}}`, `{"city":"Paris","days":1,"ratio":0}`, `{"city":"Paris","days":1,"tags":[]}`} {
		_, err := r.Validate(chat.ToolCall{Name: "get_weather", Arguments: json.RawMessage(args)})
		e := err.(*Error)
		var ex struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		}
		if err := json.Unmarshal([]byte(e.Example), &ex); err != nil {
			t.Fatalf("example %q: %v", e.Example, err)
		}
		if _, err := r.Validate(chat.ToolCall{Name: ex.Name, Arguments: ex.Arguments}); err != nil {
			t.Errorf("example for %s is itself invalid: %v", args, err)
		}
	}
}

func TestFormatCallInjected(t *testing.T) {
	r := New(Options{FormatCall: func(c chat.ToolCall) (string, error) {
		return "<tool_call>" + c.Name + " " + string(c.Arguments) + "</tool_call>", nil
	}})
	if err := r.Register(Spec{Tool: chat.Tool{Name: "f", Parameters: json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}`)}, Handler: nop}); err != nil {
		t.Fatal(err)
	}
	_, err := r.Validate(chat.ToolCall{Name: "f", Arguments: json.RawMessage(`{}`)})
	want := "Invalid arguments for f:\n- n: missing (required, expected integer)\nA valid call looks like:\n<tool_call>f {\"n\":0}</tool_call>"
	if got := err.(*Error).Message; got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

func TestCoercion(t *testing.T) {
	tests := []struct {
		name, args, want string
		coercions        []Coercion
		invalid          bool
	}{
		{"integer", `{"city":"Paris","days":"5"}`, `{"city":"Paris","days":5}`, []Coercion{{"days", `"5"`, `5`}}, false},
		{"number", `{"city":"Paris","days":1,"ratio":"0.25"}`, `{"city":"Paris","days":1,"ratio":0.25}`, []Coercion{{"ratio", `"0.25"`, `0.25`}}, false},
		{"boolean nested", `{"city":"Paris","days":1,"detail":{"level":"2","hourly":"true"}}`, `{"city":"Paris","days":1,"detail":{"level":2,"hourly":true}}`, []Coercion{{"detail.level", `"2"`, `2`}, {"detail.hourly", `"true"`, `true`}}, false},
		{"array from string", `{"city":"Paris","days":1,"tags":"[\"a\",\"b\"]"}`, `{"city":"Paris","days":1,"tags":["a","b"]}`, []Coercion{{"tags", `"[\"a\",\"b\"]"`, `["a","b"]`}}, false},
		{"object from string", `{"city":"Paris","days":1,"detail":"{\"level\":\"3\"}"}`, `{"city":"Paris","days":1,"detail":{"level":3}}`, []Coercion{{"detail.level", `"3"`, `3`}, {"detail", `"{\"level\":\"3\"}"`, `{"level":3}`}}, false},
		{"string kept", `{"city":"55","days":1}`, `{"city":"55","days":1}`, nil, false},
		{"anyOf string kept", `{"city":"Paris","days":1,"when":"5"}`, `{"city":"Paris","days":1,"when":"5"}`, nil, false},
		{"leading zero not lossless", `{"city":"Paris","days":"05"}`, ``, nil, true},
		{"spaces not lossless", `{"city":"Paris","days":" 5"}`, ``, nil, true},
		{"fraction for integer", `{"city":"Paris","days":"2.5"}`, ``, nil, true},
		{"big exact", `{"city":"Paris","days":1,"ratio":"1e-1"}`, ``, nil, true}, // 0.1 is no multiple of 0.25: coerced, then refused
	}
	r := newWeather(t, Options{Coerce: true})
	off := newWeather(t, Options{})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := r.Validate(chat.ToolCall{Name: "get_weather", Arguments: json.RawMessage(tt.args)})
			if tt.invalid {
				if err == nil {
					t.Fatalf("accepted %s as %s", tt.args, v.Call.Arguments)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if string(v.Call.Arguments) != tt.want {
				t.Errorf("arguments %s, want %s", v.Call.Arguments, tt.want)
			}
			if diff := cmp.Diff(tt.coercions, v.Coercions); diff != "" {
				t.Errorf("coercions (-want +got):\n%s", diff)
			}
			if len(tt.coercions) > 0 {
				if _, err := off.Validate(chat.ToolCall{Name: "get_weather", Arguments: json.RawMessage(tt.args)}); err == nil {
					t.Error("without Coerce the call was accepted")
				}
			}
		})
	}
}

func TestSchemaCompileErrors(t *testing.T) {
	tests := []struct{ schema, keyword string }{
		{`{"type":"object","properties":{"a":{"type":"strng"}}}`, "/properties/a/type"},
		{`{"type":"object","properties":{"a":{"type":"string","pattern":"(("}}}`, "/properties/a/pattern"},
		{`{"type":"object","required":"a"}`, "/required"},
		{`{"type":"object","properties":{"n":{"minimum":"1"}}}`, "/properties/n/minimum"},
		{`{"type":"object","properties":{"r":{"$ref":"#/$defs/missing"}}}`, ""},
		{`not json`, ""},
	}
	for _, tt := range tests {
		r := New(Options{})
		err := r.Register(Spec{Tool: chat.Tool{Name: "broken", Parameters: json.RawMessage(tt.schema)}, Handler: nop})
		var se *SchemaError
		if !errors.As(err, &se) {
			t.Errorf("%s: want *SchemaError, got %v", tt.schema, err)
			continue
		}
		if se.Tool != "broken" || se.Keyword != tt.keyword {
			t.Errorf("%s: tool %q keyword %q, want broken %q (%v)", tt.schema, se.Tool, se.Keyword, tt.keyword, err)
		}
		if !strings.Contains(err.Error(), `"broken"`) {
			t.Errorf("error %q does not name the tool", err)
		}
	}
	r := New(Options{})
	if err := r.Register(Spec{Tool: chat.Tool{Name: "a"}, Handler: nop}); err != nil {
		t.Fatal(err)
	}
	err := r.Register(Spec{Tool: chat.Tool{Name: "a"}, Handler: nop})
	if !errors.Is(err, ErrDuplicate) {
		t.Errorf("duplicate: %v", err)
	}
	// The package's line for programs, the cause alone for a command.
	var re *RegisterError
	if !errors.As(err, &re) || err.Error() != `registry: duplicate tool name: "a"` || re.Cause() != `duplicate tool name: "a"` {
		t.Errorf("duplicate: %v (%T)", err, err)
	}
}

type typedArgs struct {
	Path  string `json:"path" jsonschema_description:"file path"`
	Lines int    `json:"lines,omitempty" jsonschema:"minimum=1"`
}

func TestRegisterFunc(t *testing.T) {
	r := New(Options{})
	var got typedArgs
	err := RegisterFunc(r, "head", "First lines of a file.", func(_ context.Context, a typedArgs) (string, error) {
		got = a
		return "done", nil
	}, Spec{})
	if err != nil {
		t.Fatal(err)
	}
	tool, _ := r.Lookup("head")
	want := `{"properties":{"path":{"type":"string","description":"file path"},"lines":{"type":"integer","minimum":1}},"additionalProperties":false,"type":"object","required":["path"]}`
	if string(tool.Parameters) != want {
		t.Errorf("schema\n got %s\nwant %s", tool.Parameters, want)
	}
	out := r.ExecuteOne(context.Background(), chat.ToolCall{ID: "1", Name: "head", Arguments: json.RawMessage(`{"path":"a.txt","lines":3}`)})
	if out.Err != nil || out.Result.Content != "done" || got != (typedArgs{"a.txt", 3}) {
		t.Errorf("outcome %+v, args %+v", out, got)
	}
	if _, err := r.Validate(chat.ToolCall{Name: "head", Arguments: json.RawMessage(`{"lines":0}`)}); err == nil {
		t.Error("derived schema accepted a call without path")
	}
}

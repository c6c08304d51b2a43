package registry

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/toolharness/toolharness/chat"
)

// FuzzValidate feeds random schemas and arguments: registration may fail,
// validation may refuse, but nothing panics, and every refusal carries a
// kind and a model-facing message.
func FuzzValidate(f *testing.F) {
	f.Add(weatherSchema, `{"city":"Paris","days":"3"}`, true)
	f.Add(weatherSchema, `{"detail":{"level":"x"},"tags":"[1,2]"}`, true)
	f.Add(`{"type":"object","properties":{"a":{"$ref":"#/$defs/x"}},"$defs":{"x":{"type":"array","prefixItems":[{"type":"integer"}]}}}`, `{"a":["1",2]}`, true)
	f.Add(`{"type":"object","properties":{"o":{"oneOf":[{"type":"string"},{"type":"object","required":["k"]}]}}}`, `{"o":{}}`, false)
	f.Add(`{"type":"object","additionalProperties":{"type":"boolean"}}`, `{"x":"true","y":null}`, true)
	f.Add(`{"type":"object","properties":{"n":{"type":"number","exclusiveMinimum":0.5,"multipleOf":0.1}},"required":["n","m"]}`, `{}`, true)
	f.Add(`{}`, `[`, false)
	f.Add(`{"type":"object","properties":{"s":{"type":"string","pattern":"^a+$","minLength":1e2}}}`, `{"s":"\u00e9\u0000"}`, true)
	f.Fuzz(func(t *testing.T, schema, args string, coerce bool) {
		r := New(Options{Coerce: coerce})
		if err := r.Register(Spec{Tool: chat.Tool{Name: "t", Parameters: json.RawMessage(schema)}, Handler: nop}); err != nil {
			if !strings.HasPrefix(err.Error(), "registry: ") {
				t.Errorf("error without prefix: %v", err)
			}
			return
		}
		v, err := r.Validate(chat.ToolCall{Name: "t", Arguments: json.RawMessage(args)})
		if err != nil {
			e, ok := err.(*Error)
			if !ok || e.Kind == "" || e.Message == "" {
				t.Fatalf("bad error %#v", err)
			}
			return
		}
		if !json.Valid(v.Call.Arguments) {
			t.Fatalf("accepted arguments are not JSON: %s", v.Call.Arguments)
		}
		if o := r.ExecuteOne(context.Background(), chat.ToolCall{ID: "x", Name: "t", Arguments: json.RawMessage(args)}); o.Err != nil {
			t.Fatalf("valid call failed to run: %v", o.Err)
		}
	})
}

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
	f.Add(weatherSchema, `{"city":"Paris","days":1,"ratio":1e-9999999}`, false)
	f.Add(`{"type":"object","properties":{"n":{"minimum":1e-9999999}}}`, `{"n":1}`, false)
	// Real calls from local models, with the schemas they were given.
	regs := realRegistries(f)
	for i, c := range readRealCalls(f) {
		if i%4 != 0 {
			continue // a quarter of them is seed enough
		}
		if tool, ok := regs[c.Set].Lookup(c.Name); ok {
			f.Add(string(tool.Parameters), string(c.Arguments), i%8 == 0)
		}
	}
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

package jsonerr

import (
	"encoding/json"
	"testing"
)

func TestDescribe(t *testing.T) {
	type record struct {
		Raw   *string  `json:"raw"`
		Tools []string `json:"tools"`
		N     int      `json:"n"`
	}
	tests := []struct{ in, want string }{
		{`[1]`, "a JSON array, not an object"},
		{`"x"`, "a JSON string, not an object"},
		{`{"raw":5}`, `"raw" must be a string, not a number`},
		{`{"tools":{}}`, `"tools" must be a list, not an object`},
		{`{"n":"5"}`, `"n" must be a number, not a string`},
		{`{not json`, "invalid character 'n' looking for beginning of object key string"},
	}
	for _, tt := range tests {
		var r record
		err := json.Unmarshal([]byte(tt.in), &r)
		if err == nil {
			t.Fatalf("%s decoded", tt.in)
		}
		if got := Describe(err); got != tt.want {
			t.Errorf("%s: got %q, want %q", tt.in, got, tt.want)
		}
	}
}

package jinjaref

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

// fakePython records what it is asked to format, so the test sees Kwarg's
// reading of the spec, not a formatter's.
var fakePython = Python{
	Strftime: func(format string, t time.Time) string { return format + "@" + t.Format(time.RFC3339) },
	JSON: func(v any, indent int) (string, error) {
		b, err := json.Marshal(v)
		return fmt.Sprintf("%d:%s", indent, b), err
	},
}

func TestKwarg(t *testing.T) {
	tools := json.RawMessage(`[{"b":1,"a":2}]`)
	for _, c := range []struct {
		name, v, tools, want, err string
	}{
		{"plain string", `"x"`, "", `"x"`, ""},
		{"plain object", `{"k": 1}`, "", `{"k": 1}`, ""},
		{"strftime", `{"$strftime": "%d %b %Y"}`, "", `"%d %b %Y@2025-03-14T09:26:53Z"`, ""},
		// The formatter gets the tools with their keys in order.
		{"tools json", `{"$tools_json": {"indent": 4}}`, string(tools), `"4:[{\"Members\":[{\"Key\":\"b\",\"Value\":1},{\"Key\":\"a\",\"Value\":2}]}]"`, ""},
		{"tools json, no tools", `{"$tools_json": {}}`, "", `""`, ""},
		{"tools json, null tools", `{"$tools_json": {}}`, "null", `""`, ""},
		{"bad strftime", `{"$strftime": 3}`, "", "", "jinjaref: $strftime"},
		{"bad indent", `{"$tools_json": {"indent": "x"}}`, string(tools), "", "jinjaref: $tools_json"},
		{"bad tools", `{"$tools_json": {}}`, `[`, "", "jinjaref: tools"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := Kwarg(json.RawMessage(c.v), json.RawMessage(c.tools), fakePython)
			switch {
			case c.err != "" && (err == nil || !strings.HasPrefix(err.Error(), c.err)):
				t.Fatalf("got %s, %v; want an error %q", got, err, c.err)
			case c.err == "" && err != nil:
				t.Fatal(err)
			case string(got) != c.want:
				t.Errorf("got %s, want %s", got, c.want)
			}
		})
	}
}

func TestKwargFormatterError(t *testing.T) {
	boom := errors.New("boom")
	py := fakePython
	py.JSON = func(any, int) (string, error) { return "", boom }
	if _, err := Kwarg(json.RawMessage(`{"$tools_json": {}}`), json.RawMessage(`[]`), py); !errors.Is(err, boom) {
		t.Errorf("got %v, want the formatter's error", err)
	}
}

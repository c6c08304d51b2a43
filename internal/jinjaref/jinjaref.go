// Package jinjaref holds what the tests that compare with the Jinja2
// reference renders of the conformance suite (templates/testdata/
// conformance, written by its render.py) share: the suite's clock and the
// kwargs its manifest computes per render. The jinja engine's conformance
// test and derive's suite test both render the suite; they read its
// computed kwargs here, the one reading of them.
package jinjaref

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/toolharness/toolharness/chat"
)

// Now is render.py's FIXED_NOW, the clock of every reference render.
var Now = time.Date(2025, 3, 14, 9, 26, 53, 0, time.UTC)

// Python is how Python formats what a kwarg computes: package templates'
// PyStrftime and PyJSON. They are passed in because package templates' own
// tests use this package, which therefore cannot import it.
type Python struct {
	Strftime func(format string, t time.Time) string
	JSON     func(v any, indent int) (string, error)
}

// Kwarg is the value of one kwarg of the manifest for a render offering
// tools (JSON, null or empty when none): {"$strftime": FORMAT} is Now
// formatted as Python's strftime formats it, {"$tools_json": {"indent":
// N}} the tools as Python's json.dumps writes them ("" without tools);
// any other value is itself.
func Kwarg(v, tools json.RawMessage, py Python) (json.RawMessage, error) {
	var spec map[string]json.RawMessage
	if json.Unmarshal(v, &spec) != nil {
		return v, nil
	}
	if f, ok := spec["$strftime"]; ok {
		var format string
		if err := json.Unmarshal(f, &format); err != nil {
			return nil, fmt.Errorf("jinjaref: $strftime: %w", err)
		}
		return json.Marshal(py.Strftime(format, Now))
	}
	if opt, ok := spec["$tools_json"]; ok {
		var o struct{ Indent int }
		if err := json.Unmarshal(opt, &o); err != nil {
			return nil, fmt.Errorf("jinjaref: $tools_json: %w", err)
		}
		if len(tools) == 0 || string(tools) == "null" {
			return json.Marshal("")
		}
		ov, err := chat.DecodeOrdered(tools)
		if err != nil {
			return nil, fmt.Errorf("jinjaref: tools: %w", err)
		}
		s, err := py.JSON(ov, o.Indent)
		if err != nil {
			return nil, fmt.Errorf("jinjaref: tools: %w", err)
		}
		return json.Marshal(s)
	}
	return v, nil
}

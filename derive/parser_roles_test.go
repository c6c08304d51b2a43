package derive

import (
	"testing"

	"github.com/toolharness/toolharness/chat"
	"github.com/toolharness/toolharness/parse"
)

// TestParserEndsAtRoleStops: a derived parser ends the turn at the
// template's own role marker, which is none of the common ones, so a call
// the model writes inside an invented user turn is not taken.
func TestParserEndsAtRoleStops(t *testing.T) {
	const out = "I will read it.\n<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"a.txt\"}}\n</tool_call>" +
		"<|user|>thanks\n<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"b.txt\"}}\n</tool_call>"
	tools := []chat.Tool{{Name: "read_file", Parameters: []byte(`{"type":"object","properties":{"path":{"type":"string"}}}`)}}
	for _, tc := range []struct {
		name      string
		roleStops []string
		calls     int
		ended     bool
	}{
		{"with the template's marker", []string{"<|user|>"}, 1, true},
		{"without it", nil, 2, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := Result{WritesCalls: true, Format: "hermes", RoleStops: tc.roleStops}
			p, err := r.NewParser(parse.Options{Tools: tools})
			if err != nil {
				t.Fatal(err)
			}
			calls, ended := 0, false
			count := func(ev parse.Event) {
				switch ev.Type {
				case parse.EventCall:
					calls++
				case parse.EventEndTurn:
					ended = true
				}
			}
			p.Feed(out, count)
			p.Close(count)
			if calls != tc.calls || ended != tc.ended {
				t.Errorf("calls %d, turn ended %v; want %d, %v", calls, ended, tc.calls, tc.ended)
			}
		})
	}
}

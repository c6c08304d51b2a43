package derive

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/toolharness/toolharness/chat"
	"github.com/toolharness/toolharness/parse"
	"github.com/toolharness/toolharness/templates"
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

// TestStopNotFromCatalogMarker: with no EOS given, a template whose answer
// nothing closes stops at what opens the next user turn, not at the marker
// of a catalog written before the last user message (Mistral Small 3.2's
// [AVAILABLE_TOOLS]).
func TestStopNotFromCatalogMarker(t *testing.T) {
	src, err := os.ReadFile(filepath.Join(conformanceDir, "templates", "Mistral-Small-3.2-24B-Instruct-2506.jinja"))
	if err != nil {
		t.Fatal(err)
	}
	j, err := templates.CompileJinja("mistral-small-3.2", string(src), templates.SpecialTokens{})
	if err != nil {
		t.Fatal(err)
	}
	res, err := Derive(Jinja{Template: j, Now: suiteNow}, Tokens{})
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(res.Stop, "[AVAILABLE_TOOLS]") || !slices.Contains(res.Stop, "[INST]") {
		t.Errorf("stop %q: want [INST], not [AVAILABLE_TOOLS]", res.Stop)
	}
}

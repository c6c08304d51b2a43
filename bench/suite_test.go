package bench

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/toolharness/toolharness/chat"
)

func TestDefaultSuite(t *testing.T) {
	s, err := DefaultSuite()
	if err != nil {
		t.Fatal(err)
	}
	cats := map[string]int{}
	for _, c := range s.Cases {
		cats[c.Category]++
		if len(c.Tools) != 5 {
			t.Errorf("%s: %d tools, want the 5 shared ones", c.ID, len(c.Tools))
		}
	}
	for _, want := range []string{"single", "multiple", "parallel", "multi_turn", "restraint", "awkward"} {
		if cats[want] == 0 {
			t.Errorf("default suite has no %s case", want)
		}
	}
	// The catalog keeps the key order of the file (prompts print it).
	if got := string(s.Cases[0].Tools[0].Parameters); !strings.HasPrefix(got, `{"type":"object","properties":{"city":`) {
		t.Errorf("schema order lost: %s", got)
	}
}

// Each default case must accept the answer a careful model gives, so a
// failure in a live run is the model's, not the suite's.
func TestDefaultSuiteAcceptsCorrectAnswers(t *testing.T) {
	s, err := DefaultSuite()
	if err != nil {
		t.Fatal(err)
	}
	good := map[string][]Call{
		"single_weather":                 {{Name: "get_weather", Arguments: json.RawMessage(`{"city":"Paris"}`)}},
		"single_read_limit":              {{Name: "read_file", Arguments: json.RawMessage(`{"path":"src/main.go","limit":20}`)}},
		"single_calculate":               {{Name: "calculate", Arguments: json.RawMessage(`{"expression":"0.175 * 2480"}`)}},
		"multiple_choice_email":          {{Name: "send_email", Arguments: json.RawMessage(`{"to":"bob@example.com","subject":"Lunch","body":"See you at noon."}`)}},
		"multiple_choice_read_not_write": {{Name: "read_file", Arguments: json.RawMessage(`{"path":"notes/todo.txt"}`)}},
		"parallel_weather": {{Name: "get_weather", Arguments: json.RawMessage(`{"city":"Oslo"}`)},
			{Name: "get_weather", Arguments: json.RawMessage(`{"city":"Tokyo"}`)}},
		"parallel_read_two": {{Name: "read_file", Arguments: json.RawMessage(`{"path":"README.md"}`)},
			{Name: "read_file", Arguments: json.RawMessage(`{"path":"go.mod"}`)}},
		"multi_turn_follow_up":    {{Name: "get_weather", Arguments: json.RawMessage(`{"city":"Madrid"}`)}},
		"multi_turn_use_result":   {{Name: "write_file", Arguments: json.RawMessage(`{"path":"count.txt","content":"3"}`)}},
		"restraint_greeting":      nil,
		"restraint_capabilities":  nil,
		"restraint_result_given":  nil,
		"awkward_code":            {{Name: "write_file", Arguments: json.RawMessage(`{"path":"cmp.c","content":"if (a < b && b > c) { printf(\"<ok> & done\\n\"); }"}`)}},
		"awkward_unicode":         {{Name: "send_email", Arguments: json.RawMessage(`{"to":"zoë@example.com","subject":"Café ☕ 東京","body":"Grüße aus Köln 🎉"}`)}},
		"awkward_quotes_newlines": {{Name: "write_file", Arguments: json.RawMessage(`{"path":"quote.txt","content":"She said \"it's 5 o'clock\" \\ then left.\nPath: C:\\temp\\new"}`)}},
		"awkward_long_string":     {{Name: "write_file", Arguments: json.RawMessage(`{"path":"lorem.txt","content":"Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore et dolore magna aliqua. Ut enim ad minim veniam, quis nostrud exercitation ullamco laboris nisi ut aliquip ex ea commodo consequat. Duis aute irure dolor in reprehenderit in voluptate velit esse cillum dolore eu fugiat nulla pariatur. Excepteur sint occaecat cupidatat non proident, sunt in culpa qui officia deserunt mollit anim id est laborum."}`)}},
	}
	for _, c := range s.Cases {
		calls, ok := good[c.ID]
		if !ok {
			t.Errorf("case %s has no known-good answer in this test", c.ID)
			continue
		}
		if v := Judge(c.Expect, ParseResult{Calls: calls}, false); v != VerdictOK {
			t.Errorf("%s: correct answer judged %s", c.ID, v)
		}
		if len(calls) > 0 {
			if v := Judge(c.Expect, ParseResult{}, false); v != VerdictMissedCall {
				t.Errorf("%s: prose answer judged %s, want missed_call", c.ID, v)
			}
		}
	}
}

func TestParseSuiteErrors(t *testing.T) {
	tools := `tools: [{name: f, input_schema: {type: object, properties: {a: {type: string}}}}]`
	tests := []struct {
		name, yaml, want string
	}{
		{"no cases", tools + "\ncases: []", "no cases"},
		{"duplicate id", tools + "\ncases: [{id: a, prompt: x, expect: {no_call: true}}, {id: a, prompt: y, expect: {no_call: true}}]", "duplicate id"},
		{"unknown tool", tools + "\ncases: [{id: a, prompt: x, expect: {calls: [{name: g}]}}]", `names no tool`},
		{"no expectation", tools + "\ncases: [{id: a, prompt: x}]", "give calls or no_call"},
		{"both", tools + "\ncases: [{id: a, prompt: x, expect: {no_call: true, calls: [{name: f}]}}]", "no_call together"},
		{"bad regex", tools + "\ncases: [{id: a, prompt: x, expect: {calls: [{name: f, args: {a: {regex: '('}}}]}}]", "missing closing"},
		{"two kinds", tools + "\ncases: [{id: a, prompt: x, expect: {calls: [{name: f, args: {a: {exact: 1, any: true}}}]}}]", "exactly one of"},
		{"object needs exact", tools + "\ncases: [{id: a, prompt: x, expect: {calls: [{name: f, args: {a: {k: 1}}}]}}]", "unknown matcher key"},
		{"no prompt", tools + "\ncases: [{id: a, expect: {no_call: true}}]", "no prompt or messages"},
		{"unknown field", tools + "\ncases: [{id: a, prompt: x, expectt: {no_call: true}}]", "unknown field"},
		{"no tools", "cases: [{id: a, prompt: x, expect: {no_call: true}}]", "no tools"},
		{"yaml syntax", "cases: [", "did not find"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseSuite([]byte(tt.yaml))
			if err == nil || !strings.Contains(err.Error(), tt.want) || !errors.Is(err, ErrSuite) {
				t.Fatalf("err = %v, want ErrSuite containing %q", err, tt.want)
			}
		})
	}
}

func TestSuiteRoundTrip(t *testing.T) {
	s, err := DefaultSuite()
	if err != nil {
		t.Fatal(err)
	}
	data, err := chat.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	back, err := ParseSuite(data)
	if err != nil {
		t.Fatalf("re-reading the marshalled suite: %v", err)
	}
	again, err := chat.Marshal(back)
	if err != nil {
		t.Fatal(err)
	}
	if string(again) != string(data) {
		t.Errorf("suite does not round-trip:\n%s\n%s", data, again)
	}
	if strings.Contains(string(data), `\u003c`) {
		t.Error("suite JSON is HTML-escaped")
	}
}

package bench

import (
	"encoding/json"
	"testing"
)

func call(name, args string) Call { return Call{Name: name, Arguments: json.RawMessage(args)} }

func expectCalls(t *testing.T, js string) Expectation {
	t.Helper()
	var e wireExpect
	if err := json.Unmarshal([]byte(js), &e); err != nil {
		t.Fatal(err)
	}
	return Expectation(e)
}

func TestJudge(t *testing.T) {
	weather := `{"calls":[{"name":"w","args":{"city":{"one_of":["Paris","paris"]},"unit":{"any":true,"optional":true}}}]}`
	two := `{"calls":[{"name":"w","args":{"city":"A"}},{"name":"w","args":{"city":"B"}}]}`
	twoOrdered := `{"ordered":true,"calls":[{"name":"w","args":{"city":"A"}},{"name":"w","args":{"city":"B"}}]}`
	bad := &Problem{Kind: "bad_json"}
	unknown := &Problem{Kind: KindUnknownTool}
	tests := []struct {
		name   string
		exp    string
		parsed ParseResult
		schema bool
		want   Verdict
	}{
		{"ok", weather, ParseResult{Calls: []Call{call("w", `{"city":"Paris"}`)}}, false, VerdictOK},
		{"ok optional present", weather, ParseResult{Calls: []Call{call("w", `{"city":"paris","unit":"c"}`)}}, false, VerdictOK},
		{"extra arg refused", weather, ParseResult{Calls: []Call{call("w", `{"city":"Paris","x":1}`)}}, false, VerdictWrongArgs},
		{"wrong value", weather, ParseResult{Calls: []Call{call("w", `{"city":"Lyon"}`)}}, false, VerdictWrongArgs},
		{"missing required", weather, ParseResult{Calls: []Call{call("w", `{}`)}}, false, VerdictWrongArgs},
		{"wrong tool", weather, ParseResult{Calls: []Call{call("v", `{"city":"Paris"}`)}}, false, VerdictWrongTool},
		{"unknown tool is wrong tool", weather, ParseResult{Calls: []Call{{Name: "ww", Error: unknown}}}, false, VerdictWrongTool},
		{"parse failure", weather, ParseResult{Calls: []Call{{Name: "w", Error: bad}}}, false, VerdictParseFailure},
		{"block error", weather, ParseResult{Errors: []Problem{{Kind: "unclosed_block"}}}, false, VerdictParseFailure},
		{"schema invalid", weather, ParseResult{Calls: []Call{call("w", `{"city":"Paris"}`)}}, true, VerdictSchemaInvalid},
		{"missed", weather, ParseResult{Content: "It is sunny."}, false, VerdictMissedCall},
		{"unordered any order", two, ParseResult{Calls: []Call{call("w", `{"city":"B"}`), call("w", `{"city":"A"}`)}}, false, VerdictOK},
		{"ordered wrong order", twoOrdered, ParseResult{Calls: []Call{call("w", `{"city":"B"}`), call("w", `{"city":"A"}`)}}, false, VerdictWrongArgs},
		{"ordered right order", twoOrdered, ParseResult{Calls: []Call{call("w", `{"city":"A"}`), call("w", `{"city":"B"}`)}}, false, VerdictOK},
		{"duplicate not double counted", two, ParseResult{Calls: []Call{call("w", `{"city":"A"}`), call("w", `{"city":"A"}`)}}, false, VerdictWrongArgs},
		{"too few", two, ParseResult{Calls: []Call{call("w", `{"city":"A"}`)}}, false, VerdictWrongCount},
		{"restraint ok", `{"no_call":true}`, ParseResult{Content: "Hi!"}, false, VerdictOK},
		{"restraint call", `{"no_call":true}`, ParseResult{Calls: []Call{call("w", `{}`)}}, false, VerdictFalseCall},
		{"overran turn", weather, ParseResult{Calls: []Call{call("w", `{"city":"Paris"}`)}, EndTurn: &Problem{Kind: KindOverranTurn}}, false, VerdictOverranTurn},
		{"overran turn after a bad call is the bad call", weather, ParseResult{Calls: []Call{{Name: "w", Error: bad}}, EndTurn: &Problem{Kind: KindOverranTurn}}, false, VerdictParseFailure},
		{"restraint overran", `{"no_call":true}`, ParseResult{Content: "Hi!", EndTurn: &Problem{Kind: KindOverranTurn}}, false, VerdictOverranTurn},
		{"restraint call then overran", `{"no_call":true}`, ParseResult{Calls: []Call{call("w", `{}`)}, EndTurn: &Problem{Kind: KindOverranTurn}}, false, VerdictFalseCall},
		{"restraint broken call", `{"no_call":true}`, ParseResult{Errors: []Problem{{Kind: "truncated"}}}, false, VerdictFalseCall},
		{"no expectation ok", `{}`, ParseResult{Calls: []Call{call("w", `{}`)}}, false, VerdictUnscored},
		{"no expectation schema", `{}`, ParseResult{Calls: []Call{call("w", `{}`)}}, true, VerdictSchemaInvalid},
		{"no expectation unknown", `{}`, ParseResult{Calls: []Call{{Name: "q", Error: unknown}}}, false, VerdictParseFailure},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Judge(expectCalls(t, tt.exp), tt.parsed, tt.schema); got != tt.want {
				t.Errorf("Judge = %s, want %s", got, tt.want)
			}
		})
	}
}

func TestMatchers(t *testing.T) {
	tests := []struct {
		matcher string
		value   string
		want    bool
	}{
		{`3`, `3.0`, true},
		{`3`, `"3"`, false},
		{`{"exact":{"a":[1,"x"]}}`, `{"a":[1.0,"x"]}`, true},
		{`{"exact":{"a":[1,"x"]}}`, `{"a":["x",1]}`, false},
		{`{"one_of":["Los Angeles","LA"],"normalize":true}`, `"los angeles"`, true},
		{`{"one_of":["Los Angeles","LA"]}`, `"los angeles"`, false},
		{`{"regex":"a+"}`, `"aaa"`, true},
		{`{"regex":"a+"}`, `"baaa"`, false},
		{`{"regex":"a+"}`, `1`, false},
		{`{"approx":3.14,"tolerance":0.01}`, `3.141`, true},
		{`{"approx":3.14,"tolerance":0.01}`, `3.2`, false},
		{`{"approx":3.14,"tolerance":0.01}`, `"3.14"`, false},
		{`{"any":true}`, `null`, true},
		{`true`, `true`, true},
		{`null`, `null`, true},
		{`null`, `false`, false},
	}
	for _, tt := range tests {
		var c ExpectedCall
		if err := json.Unmarshal([]byte(`{"name":"f","args":{"x":`+tt.matcher+`}}`), &c); err != nil {
			t.Fatalf("%s: %v", tt.matcher, err)
		}
		args, err := decodeArgs(json.RawMessage(`{"x":` + tt.value + `}`))
		if err != nil {
			t.Fatal(err)
		}
		if got := c.Args[0].Match(args["x"]); got != tt.want {
			t.Errorf("%s matches %s = %v, want %v", tt.matcher, tt.value, got, tt.want)
		}
	}
}

package chatwire

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/toolharness/toolharness/chat"
)

// TestCallsAdd puts streamed call pieces together in the shapes servers
// send them: OpenAI and llama-server (id and name first, arguments in
// parts, by index), Ollama's /v1 (each call whole, by index), servers
// without an index (a new id starts a new call).
func TestCallsAdd(t *testing.T) {
	for _, tc := range []struct {
		name    string
		events  string // a JSON array of events, each a tool_calls array
		want    []chat.ToolCall
		wantErr string
	}{
		{"pieces by index", `[[{"index":0,"id":"a","function":{"name":"f","arguments":""}}],[{"index":0,"function":{"arguments":"{\"x\""}}],[{"index":0,"function":{"arguments":":1}"}}]]`,
			[]chat.ToolCall{{ID: "a", Name: "f", Arguments: json.RawMessage(`{"x":1}`)}}, ""},
		{"two calls interleaved", `[[{"index":0,"id":"a","function":{"name":"f","arguments":"{"}}],[{"index":1,"id":"b","function":{"name":"g","arguments":"{}"}}],[{"index":0,"function":{"arguments":"}"}}]]`,
			[]chat.ToolCall{{ID: "a", Name: "f", Arguments: json.RawMessage(`{}`)}, {ID: "b", Name: "g", Arguments: json.RawMessage(`{}`)}}, ""},
		{"whole calls in one event", `[[{"index":0,"id":"a","function":{"name":"f","arguments":"{\"x\":1}"}},{"index":1,"id":"b","function":{"name":"f","arguments":"{\"x\":2}"}}]]`,
			[]chat.ToolCall{{ID: "a", Name: "f", Arguments: json.RawMessage(`{"x":1}`)}, {ID: "b", Name: "f", Arguments: json.RawMessage(`{"x":2}`)}}, ""},
		{"no index", `[[{"id":"a","function":{"name":"f","arguments":"{\"x\""}}],[{"function":{"arguments":":1}"}}],[{"id":"b","function":{"name":"g","arguments":""}}]]`,
			[]chat.ToolCall{{ID: "a", Name: "f", Arguments: json.RawMessage(`{"x":1}`)}, {ID: "b", Name: "g", Arguments: json.RawMessage(`{}`)}}, ""},
		{"arguments not an object", `[[{"index":0,"id":"a","function":{"name":"f","arguments":"[1]"}}]]`,
			[]chat.ToolCall{{ID: "a", Name: "f", Raw: "[1]"}}, ""},
		{"second name", `[[{"index":0,"id":"a","function":{"name":"f"}}],[{"index":0,"function":{"name":"g"}}]]`, nil, `tool call 0: a second name "g" after "f"`},
		{"second id", `[[{"index":0,"id":"a","function":{"name":"f"}}],[{"index":0,"id":"b"}]]`, nil, `tool call 0: a second id "b" after "a"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var events [][]DeltaCall
			if err := json.Unmarshal([]byte(tc.events), &events); err != nil {
				t.Fatal(err)
			}
			var a Calls
			var err error
			for _, ev := range events {
				if err = a.Add(ev); err != nil {
					break
				}
			}
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("err %v; want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, a.Done()); diff != "" {
				t.Errorf("calls (-want +got):\n%s", diff)
			}
		})
	}
}

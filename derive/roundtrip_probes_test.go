package derive

import "encoding/json"

// The round-trip conversations: calls whose arguments exercise every JSON
// type and the text that breaks naive framing (quotes, newlines, braces,
// angle brackets, non-ASCII), rendered by the template as an assistant turn
// and parsed back by the derived parser.
const roundTripTools = `[{"type": "function", "function": {"name": "lookup_record", "description": "Look a record up.", ` +
	`"parameters": {"type": "object", "properties": {"query": {"type": "string", "description": "Free text."}, ` +
	`"limit": {"type": "integer"}, "ratio": {"type": "number"}, "exact": {"type": "boolean"}, ` +
	`"filters": {"type": "object"}, "tags": {"type": "array", "items": {"type": "string"}}}, "required": ["query"]}}}, ` +
	`{"type": "function", "function": {"name": "write_note", "description": "Write a note.", ` +
	`"parameters": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}}}]`

var roundTripCalls = []Call{
	{ID: "abcDEF123", Name: "lookup_record", Arguments: json.RawMessage(
		`{"query": "say \"hi\" to Zoë\nline two: {x} <b>&</b> 東京", "limit": 7, "ratio": 0.25, "exact": false, ` +
			`"filters": {"owner": {"name": "Zoë", "ids": [1, 2]}, "active": true}, "tags": ["a b", "c"]}`)},
	{ID: "xyzUVW789", Name: "write_note", Arguments: json.RawMessage(`{"text": "plain note"}`)},
}

func roundTripName(n int, s Style) string { return "roundtrip-" + probeCallName(n, s) }

// roundTripProbes renders each style with one call and with two.
func roundTripProbes() []Probe {
	user := userMessage()
	var ps []Probe
	for _, s := range Styles {
		for n := 1; n <= 2; n++ {
			ps = append(ps, Probe{roundTripName(n, s), Request{
				Messages: messages(user, string(AssistantCalls(s, roundTripCalls[:n]))), Tools: json.RawMessage(roundTripTools)}})
		}
	}
	ps = append(ps, Probe{"roundtrip-prompt", Request{Messages: messages(user), Tools: json.RawMessage(roundTripTools), AddGenerationPrompt: true}})
	return ps
}

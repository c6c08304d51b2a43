package derive

import "encoding/json"

// The round-trip conversations: calls whose arguments exercise every JSON
// type and the text that breaks naive framing (quotes, newlines, braces,
// angle brackets, non-ASCII), rendered by the template as an assistant turn
// and parsed back by the derived parser.
const roundTripTools = `[{"type": "function", "function": {"name": "lookup_record", "description": "Look a record up.", ` +
	`"parameters": {"type": "object", "properties": {"query": {"type": "string", "description": "Free text."}, ` +
	`"limit": {"type": "integer", "description": "At most."}, "ratio": {"type": "number", "description": "A share."}, ` +
	`"exact": {"type": "boolean", "description": "Exact match."}, ` +
	`"filters": {"type": "object", "additionalProperties": true, "description": "Field filters."}, ` +
	`"tags": {"type": "array", "items": {"type": "string"}, "description": "Labels."}}, "required": ["query"]}}}, ` +
	`{"type": "function", "function": {"name": "write_note", "description": "Write a note.", ` +
	`"parameters": {"type": "object", "properties": {"text": {"type": "string", "description": "The note."}}, "required": ["text"]}}}]`

var roundTripCalls = []Call{
	{ID: "abcDEF123", Name: "lookup_record", Arguments: json.RawMessage(
		`{"query": "say \"hi\" to Zoë\nline two: {x} <b>&</b> 東京", "limit": 7, "ratio": 0.25, "exact": false, ` +
			`"filters": {"owner": {"name": "Zoë", "ids": [1, 2]}, "active": true}, "tags": ["a b", "c"]}`)},
	{ID: "xyzUVW789", Name: "write_note", Arguments: json.RawMessage(`{"text": "plain note"}`)},
}

// roundTripBase is the conversation before the assistant turn, without a
// generation prompt: what a rendered turn is cut from.
const roundTripBase = "roundtrip-base"

func roundTripName(n int, s Style) string { return "roundtrip-" + probeCallName(n, s) }

// roundTripProbes renders each style with one call and with two.
func roundTripProbes() []Probe {
	user := userMessage()
	var ps []Probe
	for _, s := range Styles {
		for n := 1; n <= 2; n++ {
			ps = append(ps, Probe{roundTripName(n, s), roundTripRequest(s, n)})
		}
	}
	ps = append(ps, Probe{roundTripBase, Request{Messages: messages(user), Tools: json.RawMessage(roundTripTools)}})
	return ps
}

package parse

import (
	"encoding/json"
	"testing"
)

// TestArenaKeepsEmittedCalls: the Raw text and arguments of calls emitted
// earlier stay what they were while later calls share their arena, and a
// caller appending to one call's arguments changes no other call.
func TestArenaKeepsEmittedCalls(t *testing.T) {
	for _, c := range []struct{ format, input string }{{"hermes", "hermes"}, {"auto", "hermes"}, {"qwen3-coder", "qwen3-coder"}, {"auto", "qwen3-coder"}} {
		format, in := c.format, denseInput(c.input)
		p, err := New(format, Options{Tools: mustTools(denseTools)})
		if err != nil {
			t.Fatal(err)
		}
		var calls []Event
		emit := func(e Event) {
			if e.Type == EventCall {
				calls = append(calls, e)
			}
		}
		for _, c := range chunksOf(in, 4) {
			p.Feed(c, emit)
		}
		p.Close(emit)
		if len(calls) != denseCalls {
			t.Fatalf("%s: %d calls, want %d", format, len(calls), denseCalls)
		}
		for _, e := range calls {
			// What a caller may do with the arguments it got: the
			// next call's Raw follows them in the arena.
			_ = append(e.Call.Arguments, "garbage"...)
		}
		for i, e := range calls {
			c := e.Call
			if got := in[c.Offset : c.Offset+len(c.Raw)]; c.Raw != got {
				t.Fatalf("%s: call %d Raw %q, input there %q", format, i, c.Raw, got)
			}
			var args map[string]any
			if err := json.Unmarshal(c.Arguments, &args); err != nil || args["path"] == nil {
				t.Fatalf("%s: call %d arguments %s: %v", format, i, c.Arguments, err)
			}
		}
	}
}

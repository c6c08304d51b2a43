package agent

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/toolharness/toolharness/chat"
)

// CallSchema is the JSON Schema of one constrained generation: one call
// {"name": <tool>, "arguments": <that tool's parameters>} per tool, and,
// when allowAnswer, a final {"answer": "…"}. Each tool's schema is kept in
// its own key order; objects without additionalProperties get false so a
// constrained model cannot wander into keys nobody declared.
func CallSchema(tools []chat.Tool, allowAnswer bool) (json.RawMessage, error) {
	var alts []any
	for _, t := range tools {
		params := t.Parameters
		if len(strings.TrimSpace(string(params))) == 0 {
			params = json.RawMessage(`{"type":"object","properties":{}}`)
		}
		v, err := chat.DecodeOrdered(params)
		if err != nil {
			return nil, fmt.Errorf("agent: schema of tool %q: %w", t.Name, err)
		}
		closeObjects(v)
		alts = append(alts, obj(
			"type", "object",
			"properties", obj("name", obj("const", t.Name), "arguments", v),
			"required", []any{"name", "arguments"},
			"additionalProperties", false,
		))
	}
	if allowAnswer {
		alts = append(alts, obj(
			"type", "object",
			"properties", obj("answer", obj("type", "string")),
			"required", []any{"answer"},
			"additionalProperties", false,
		))
	}
	if len(alts) == 0 {
		return nil, fmt.Errorf("agent: constrained generation needs at least one tool")
	}
	var schema any = obj("anyOf", alts)
	if len(alts) == 1 {
		schema = alts[0]
	}
	return chat.EncodeOrdered(schema)
}

func obj(kv ...any) *chat.Object {
	o := &chat.Object{}
	for i := 0; i+1 < len(kv); i += 2 {
		o.Members = append(o.Members, chat.Member{Key: kv[i].(string), Value: kv[i+1]})
	}
	return o
}

// closeObjects sets additionalProperties:false on every object schema
// with properties that leaves it open by omission.
func closeObjects(v any) {
	switch x := v.(type) {
	case *chat.Object:
		_, hasProps := x.Get("properties")
		_, hasAP := x.Get("additionalProperties")
		if hasProps && !hasAP {
			x.Members = append(x.Members, chat.Member{Key: "additionalProperties", Value: false})
		}
		for _, m := range x.Members {
			closeObjects(m.Value)
		}
	case []any:
		for _, e := range x {
			closeObjects(e)
		}
	}
}

// constrainedParser reads the JSON a constrained generation produced: one
// call or one answer. It buffers until Close because the whole output is a
// single JSON value.
type constrainedParser struct {
	buf strings.Builder
	id  string
}

func (p *constrainedParser) Feed(chunk string) []Event {
	p.buf.WriteString(chunk)
	return nil
}

func (p *constrainedParser) Close() []Event {
	raw := p.buf.String()
	var v struct {
		Name      *string         `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
		Answer    *string         `json:"answer"`
	}
	if err := json.Unmarshal([]byte(raw), &v); err != nil {
		return []Event{{Kind: EventError, Err: &ParseError{Kind: "bad_json", Message: "the constrained output is not one JSON object: " + err.Error()}}}
	}
	switch {
	case v.Name != nil:
		args := v.Arguments
		if len(args) == 0 {
			args = json.RawMessage("{}")
		}
		c := chat.ToolCall{ID: p.id, Name: *v.Name, Arguments: args, Raw: raw}
		return []Event{{Kind: EventCallStart, Call: &chat.ToolCall{ID: p.id, Name: *v.Name}}, {Kind: EventCall, Call: &c}}
	case v.Answer != nil:
		return []Event{{Kind: EventText, Text: *v.Answer}}
	}
	return []Event{{Kind: EventError, Err: &ParseError{Kind: "missing_name", Message: `the output has neither "name" nor "answer"`}}}
}

// NewConstrainedParser returns the parser of constrained output: the
// whole generation is one JSON call or answer object (see CallSchema).
func NewConstrainedParser() StreamParser { return &constrainedParser{} }

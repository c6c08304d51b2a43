package agent

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/toolharness/toolharness/chat"
)

// SchemaOptions shape a constrained generation's schema.
type SchemaOptions struct {
	// AllowAnswer adds the final {"answer": "…"} alternative.
	AllowAnswer bool
	// MaxString, when positive, gives every string without a maxLength
	// that bound, so a weak model cannot write one string until its token
	// limit cuts the JSON short.
	MaxString int
}

// CallSchema is the JSON Schema of one constrained generation: one call
// {"name": <tool>, "arguments": <that tool's parameters>} per tool, and,
// with AllowAnswer, a final {"answer": "…"}. Each tool's schema is kept in
// its own key order; objects without additionalProperties get false so a
// constrained model cannot wander into keys nobody declared.
func CallSchema(tools []chat.Tool, o SchemaOptions) (json.RawMessage, error) {
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
		tighten(v, o.MaxString)
		alts = append(alts, obj(
			"type", "object",
			"properties", obj("name", obj("const", t.Name), "arguments", v),
			"required", []any{"name", "arguments"},
			"additionalProperties", false,
		))
	}
	if o.AllowAnswer {
		answer := obj("type", "string")
		if o.MaxString > 0 {
			answer.Members = append(answer.Members, chat.Member{Key: "maxLength", Value: json.Number(fmt.Sprint(o.MaxString))})
		}
		alts = append(alts, obj(
			"type", "object",
			"properties", obj("answer", answer),
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

// tighten sets additionalProperties:false on every object schema with
// properties that leaves it open by omission, and bounds strings without
// a maxLength by maxString (when positive).
func tighten(v any, maxString int) {
	switch x := v.(type) {
	case *chat.Object:
		_, hasProps := x.Get("properties")
		_, hasAP := x.Get("additionalProperties")
		if hasProps && !hasAP {
			x.Members = append(x.Members, chat.Member{Key: "additionalProperties", Value: false})
		}
		_, hasMax := x.Get("maxLength")
		_, hasEnum := x.Get("enum")
		if t, _ := x.Get("type"); t == "string" && maxString > 0 && !hasMax && !hasEnum {
			x.Members = append(x.Members, chat.Member{Key: "maxLength", Value: json.Number(fmt.Sprint(maxString))})
		}
		for _, m := range x.Members {
			tighten(m.Value, maxString)
		}
	case []any:
		for _, e := range x {
			tighten(e, maxString)
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

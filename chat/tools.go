package chat

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
)

// Tool is a tool definition as the model sees it.
type Tool struct {
	Name        string
	Description string
	// Parameters is the JSON Schema of the arguments, kept whole and in the
	// key order it was written.
	Parameters json.RawMessage
}

type (
	wireTool struct {
		Type     string        `json:"type"`
		Function *wireToolFunc `json:"function"`
	}
	wireToolFunc struct {
		Name        string          `json:"name"`
		Description string          `json:"description,omitempty"`
		Parameters  json.RawMessage `json:"parameters,omitempty"`
	}
	// anyTool holds the fields of every accepted tool shape at once.
	anyTool struct {
		Type        string          `json:"type"`
		Function    *wireToolFunc   `json:"function"`
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Parameters  json.RawMessage `json:"parameters"`
		InputSchema json.RawMessage `json:"input_schema"`
	}
)

// MarshalJSON writes the OpenAI tool shape.
func (t Tool) MarshalJSON() ([]byte, error) {
	params := t.Parameters
	if len(bytes.TrimSpace(params)) == 0 {
		params = json.RawMessage(`{"type":"object","properties":{}}`)
	}
	return marshalNoEscape(wireTool{Type: "function", Function: &wireToolFunc{
		Name: t.Name, Description: t.Description, Parameters: params,
	}})
}

// UnmarshalJSON reads one tool in the OpenAI shape
// ({"type":"function","function":{…}}), as a bare function object
// ({"name","description","parameters"}) or in the Anthropic shape
// ({"name","description","input_schema"}).
func (t *Tool) UnmarshalJSON(data []byte) error {
	var a anyTool
	if err := json.Unmarshal(data, &a); err != nil {
		return &ToolError{Err: err}
	}
	switch {
	case a.Function != nil:
		if a.Type != "" && a.Type != "function" {
			return &ToolError{Name: a.Function.Name, Reason: fmt.Sprintf("type %q is not supported (function only)", a.Type)}
		}
		*t = Tool{Name: a.Function.Name, Description: a.Function.Description, Parameters: a.Function.Parameters}
	case len(a.InputSchema) > 0:
		*t = Tool{Name: a.Name, Description: a.Description, Parameters: a.InputSchema}
	default:
		*t = Tool{Name: a.Name, Description: a.Description, Parameters: a.Parameters}
	}
	if t.Name == "" {
		return &ToolError{Reason: fmt.Sprintf("%.60s", bytes.TrimSpace(data))}
	}
	t.Parameters = bytes.TrimSpace(t.Parameters)
	if len(t.Parameters) == 0 || bytes.Equal(t.Parameters, []byte("null")) {
		t.Parameters = json.RawMessage(`{"type":"object","properties":{}}`)
	}
	if t.Parameters[0] != '{' {
		return &ToolError{Name: t.Name, Reason: "parameters must be a JSON Schema object"}
	}
	return nil
}

// ParseTools reads a tool catalog in any accepted shape:
//   - a list of tools, each OpenAI, bare-function or Anthropic shaped;
//   - an object with a "tools" list (OpenAI request bodies, suite files);
//   - Gemini declarations: {"function_declarations":[…]} (or
//     "functionDeclarations"), or a list of such objects. Gemini's upper-case
//     OpenAPI type names ("STRING") are lower-cased to JSON Schema's.
//
// YAML is accepted too (any input whose first character is not '{' or '['),
// with key order kept.
func ParseTools(data []byte) ([]Tool, error) {
	data, err := toJSON(data)
	if err != nil {
		return nil, &InputError{Doc: "tools", Index: -1, Err: err}
	}
	var items []json.RawMessage
	switch data[0] {
	case '[':
		if err := json.Unmarshal(data, &items); err != nil {
			return nil, &InputError{Doc: "tools", Index: -1, Err: err}
		}
	case '{':
		var obj struct {
			Tools []json.RawMessage `json:"tools"`
		}
		if err := json.Unmarshal(data, &obj); err != nil {
			return nil, &InputError{Doc: "tools", Index: -1, Err: err}
		}
		if obj.Tools != nil {
			items = obj.Tools
		} else {
			items = []json.RawMessage{data}
		}
	default:
		return nil, &InputError{Doc: "tools", Index: -1, Err: errors.New("expected a JSON list or object")}
	}
	var tools []Tool
	for i, item := range items {
		if decls, ok, err := geminiDeclarations(item); err != nil {
			err.Index = i
			return nil, err
		} else if ok {
			tools = append(tools, decls...)
			continue
		}
		var t Tool
		if err := json.Unmarshal(item, &t); err != nil {
			return nil, &InputError{Doc: "tools", Index: i, Err: err}
		}
		tools = append(tools, t)
	}
	seen := map[string]bool{}
	for _, t := range tools {
		if seen[t.Name] {
			return nil, &InputError{Doc: "tools", Index: -1, Err: fmt.Errorf("duplicate tool name %q", t.Name)}
		}
		seen[t.Name] = true
	}
	return tools, nil
}

// geminiDeclarations reads item as Gemini declarations; ok is false when
// it is not. The error's Index is the caller's to set.
func geminiDeclarations(item json.RawMessage) ([]Tool, bool, *InputError) {
	var g struct {
		Snake []json.RawMessage `json:"function_declarations"`
		Camel []json.RawMessage `json:"functionDeclarations"`
	}
	if err := json.Unmarshal(item, &g); err != nil {
		return nil, false, nil // not an object: let the tool decoder report it
	}
	decls := append(g.Snake, g.Camel...)
	if g.Snake == nil && g.Camel == nil {
		return nil, false, nil
	}
	var tools []Tool
	for j, d := range decls {
		var t Tool
		if err := json.Unmarshal(d, &t); err != nil {
			return nil, true, &InputError{Doc: "tools", Path: fmt.Sprintf("function_declarations[%d]", j), Err: err}
		}
		p, err := lowerTypeNames(t.Parameters)
		if err != nil {
			return nil, true, &InputError{Doc: "tools", Path: fmt.Sprintf("function_declarations[%d]", j), Err: err}
		}
		t.Parameters = p
		tools = append(tools, t)
	}
	return tools, true, nil
}

// lowerTypeNames rewrites "type":"STRING" to "type":"string" throughout a
// schema, keeping every other byte's order.
func lowerTypeNames(schema json.RawMessage) (json.RawMessage, error) {
	v, err := DecodeOrdered(schema)
	if err != nil {
		return nil, err
	}
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case *Object:
			for i := range x.Members {
				m := &x.Members[i]
				if s, ok := m.Value.(string); ok && m.Key == "type" {
					m.Value = strings.ToLower(s)
				}
				walk(m.Value)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(v)
	return EncodeOrdered(v)
}

// Conversation is a message list with the tools offered in it, as read from
// a --messages file.
type Conversation struct {
	Messages []Message `json:"messages"`
	Tools    []Tool    `json:"tools,omitempty"`
}

// ParseConversation reads a list of messages, or an object with "messages"
// and optional "tools" (an OpenAI request body works as is).
func ParseConversation(data []byte) (Conversation, error) {
	data, err := toJSON(data)
	if err != nil {
		return Conversation{}, &InputError{Doc: "messages", Index: -1, Err: err}
	}
	var c Conversation
	if data[0] == '[' {
		if err := json.Unmarshal(data, &c.Messages); err != nil {
			return c, &InputError{Doc: "messages", Index: -1, Err: err}
		}
		return c, nil
	}
	var obj struct {
		Messages []Message        `json:"messages"`
		Tools    *json.RawMessage `json:"tools"`
	}
	if err := json.Unmarshal(data, &obj); err != nil {
		return c, &InputError{Doc: "messages", Index: -1, Err: err}
	}
	if obj.Messages == nil {
		return c, &InputError{Doc: "messages", Index: -1, Err: errors.New(`object has no "messages" list`)}
	}
	c.Messages = obj.Messages
	if obj.Tools != nil && !bytes.Equal(bytes.TrimSpace(*obj.Tools), []byte("null")) {
		if c.Tools, err = ParseTools(*obj.Tools); err != nil {
			return c, err
		}
	}
	return c, nil
}

// ReadToolsFile reads a tool catalog file, see [ParseTools].
func ReadToolsFile(path string) ([]Tool, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("chat: %w", err)
	}
	tools, err := ParseTools(data)
	if err != nil {
		return nil, fmt.Errorf("%w (in %s)", err, path)
	}
	return tools, nil
}

// ReadConversationFile reads a messages file, see [ParseConversation].
func ReadConversationFile(path string) (Conversation, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Conversation{}, fmt.Errorf("chat: %w", err)
	}
	c, err := ParseConversation(data)
	if err != nil {
		return c, fmt.Errorf("%w (in %s)", err, path)
	}
	return c, nil
}

// MarshalTools writes tools as an OpenAI "tools" list.
func MarshalTools(tools []Tool) ([]byte, error) {
	if tools == nil {
		tools = []Tool{}
	}
	return marshalNoEscape(tools)
}

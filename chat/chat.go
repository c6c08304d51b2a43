package chat

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// Role is who speaks a message.
type Role string

// The roles of a conversation. RoleDeveloper is OpenAI's newer name for the
// system role; templates that know it (gpt-oss) render it on its own.
const (
	RoleSystem    Role = "system"
	RoleDeveloper Role = "developer"
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool"
)

// Valid reports whether r is one of the known roles.
func (r Role) Valid() bool {
	switch r {
	case RoleSystem, RoleDeveloper, RoleUser, RoleAssistant, RoleTool:
		return true
	}
	return false
}

// Message is one turn of a conversation.
type Message struct {
	Role Role
	// Content is the visible text. For an assistant turn that only calls
	// tools it is empty (written as null in the OpenAI shape).
	Content string
	// Reasoning is the model's reasoning text where a template renders it
	// separately (Qwen3 <think>, gpt-oss analysis channel).
	Reasoning string
	// ToolCalls are the calls of an assistant turn.
	ToolCalls []ToolCall
	// ToolCallID links a tool message to the call it answers.
	ToolCallID string
	// Name is the tool's name on a tool message.
	Name string
	// IsError marks a tool message whose content is an error for the model.
	IsError bool
	// Raw is the exact text the model produced for an assistant turn. When
	// set, renderers re-render the turn from it rather than from the parsed
	// calls, so the transcript stays a byte-prefix of the next prompt.
	Raw string
}

// ToolCall is one call the model made.
type ToolCall struct {
	ID   string
	Name string
	// Arguments is a JSON object, with keys in the order the model wrote them.
	Arguments json.RawMessage
	// Raw is the exact span of model output that holds the call, markers
	// included.
	Raw string
	// Offset is the byte offset of Raw in the model's output for the turn.
	Offset int
	// Repairs lists, by kind, what a lenient parser fixed to read the call.
	Repairs []string
}

// ToolResult is the outcome of running one call, matched to it by CallID.
type ToolResult struct {
	CallID  string
	Name    string
	Content string
	IsError bool
}

// Message returns the tool message that carries r back to the model.
func (r ToolResult) Message() Message {
	return Message{Role: RoleTool, ToolCallID: r.CallID, Name: r.Name, Content: r.Content, IsError: r.IsError}
}

// ArgumentsMap decodes the call's arguments. Empty arguments decode to an
// empty map.
func (c ToolCall) ArgumentsMap() (map[string]any, error) {
	m := map[string]any{}
	if len(bytes.TrimSpace(c.Arguments)) == 0 {
		return m, nil
	}
	d := json.NewDecoder(bytes.NewReader(c.Arguments))
	d.UseNumber()
	if err := d.Decode(&m); err != nil {
		return nil, fmt.Errorf("chat: arguments of %q: %w", c.Name, err)
	}
	return m, nil
}

// Wire types of the OpenAI chat shape.
type (
	wireMessage struct {
		Role       Role            `json:"role"`
		Content    json.RawMessage `json:"content"`
		Reasoning  string          `json:"reasoning_content,omitempty"`
		ToolCalls  []wireToolCall  `json:"tool_calls,omitempty"`
		ToolCallID string          `json:"tool_call_id,omitempty"`
		Name       string          `json:"name,omitempty"`
		IsError    bool            `json:"is_error,omitempty"`
		Raw        string          `json:"raw,omitempty"`
	}
	wireToolCall struct {
		ID       string       `json:"id,omitempty"`
		Type     string       `json:"type"`
		Function wireFunction `json:"function"`
		Raw      string       `json:"raw,omitempty"`
		Repairs  []string     `json:"repairs,omitempty"`
	}
	wireFunction struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}
	wireContentPart struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
)

// MarshalJSON writes the OpenAI chat shape: content null for an assistant
// turn that only calls tools, arguments as a JSON string.
func (m Message) MarshalJSON() ([]byte, error) {
	w := wireMessage{
		Role: m.Role, Reasoning: m.Reasoning, ToolCallID: m.ToolCallID,
		Name: m.Name, IsError: m.IsError, Raw: m.Raw,
	}
	if m.Content == "" && len(m.ToolCalls) > 0 {
		w.Content = json.RawMessage("null")
	} else {
		c, err := marshalNoEscape(m.Content)
		if err != nil {
			return nil, err
		}
		w.Content = c
	}
	for _, c := range m.ToolCalls {
		args := c.Arguments
		if len(bytes.TrimSpace(args)) == 0 {
			args = json.RawMessage("{}")
		}
		s, err := marshalNoEscape(string(args))
		if err != nil {
			return nil, err
		}
		w.ToolCalls = append(w.ToolCalls, wireToolCall{
			ID: c.ID, Type: "function", Raw: c.Raw, Repairs: c.Repairs,
			Function: wireFunction{Name: c.Name, Arguments: s},
		})
	}
	return marshalNoEscape(w)
}

// UnmarshalJSON reads the OpenAI chat shape. Content may be a string, null
// or a list of text parts; tool-call arguments may be an object or a JSON
// string holding one. Reasoning is read from reasoning_content (Hugging
// Face's key), else reasoning (vLLM, OpenRouter), else thinking (Ollama,
// gpt-oss's template).
func (m *Message) UnmarshalJSON(data []byte) error {
	var w struct {
		wireMessage
		ReasoningAlt *string `json:"reasoning"`
		Thinking     *string `json:"thinking"`
	}
	if err := json.Unmarshal(data, &w); err != nil {
		return fmt.Errorf("chat: message: %w", err)
	}
	for _, alt := range []*string{w.ReasoningAlt, w.Thinking} {
		if w.Reasoning == "" && alt != nil {
			w.Reasoning = *alt
		}
	}
	if !w.Role.Valid() {
		return fmt.Errorf("chat: message: unknown role %q", w.Role)
	}
	content, err := decodeContent(w.Content)
	if err != nil {
		return err
	}
	*m = Message{
		Role: w.Role, Content: content, Reasoning: w.Reasoning, ToolCallID: w.ToolCallID,
		Name: w.Name, IsError: w.IsError, Raw: w.Raw,
	}
	for i, c := range w.ToolCalls {
		args, err := decodeArguments(c.Function.Arguments)
		if err != nil {
			return fmt.Errorf("chat: tool call %d (%s): %w", i, c.Function.Name, err)
		}
		if c.Function.Name == "" {
			return fmt.Errorf("chat: tool call %d: missing function name", i)
		}
		m.ToolCalls = append(m.ToolCalls, ToolCall{
			ID: c.ID, Name: c.Function.Name, Arguments: args, Raw: c.Raw, Repairs: c.Repairs,
		})
	}
	return nil
}

func decodeContent(raw json.RawMessage) (string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return "", nil
	}
	switch raw[0] {
	case '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", fmt.Errorf("chat: content: %w", err)
		}
		return s, nil
	case '[':
		var parts []wireContentPart
		if err := json.Unmarshal(raw, &parts); err != nil {
			return "", fmt.Errorf("chat: content parts: %w", err)
		}
		var b bytes.Buffer
		for _, p := range parts {
			if p.Type != "" && p.Type != "text" {
				return "", fmt.Errorf("chat: content part of type %q is not supported (text only)", p.Type)
			}
			b.WriteString(p.Text)
		}
		return b.String(), nil
	}
	return "", fmt.Errorf("chat: content must be a string, null or a list of text parts, got %.20s", raw)
}

// decodeArguments accepts an object or a JSON string that holds an object,
// and returns the object's raw text unchanged (key order kept).
func decodeArguments(raw json.RawMessage) (json.RawMessage, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return json.RawMessage("{}"), nil
	}
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, fmt.Errorf("arguments: %w", err)
		}
		raw = bytes.TrimSpace([]byte(s))
		if len(raw) == 0 {
			return json.RawMessage("{}"), nil
		}
	}
	if raw[0] != '{' || !json.Valid(raw) {
		return nil, fmt.Errorf("arguments must be a JSON object or a string holding one, got %.40s", raw)
	}
	return json.RawMessage(raw), nil
}

// Marshal encodes v as compact JSON without HTML escaping, so '<', '>' and
// '&' in prompts and tool output stay readable in every file we write.
// (encoding/json's Marshal re-escapes even the output of MarshalJSON
// methods; write through Marshal or an Encoder with SetEscapeHTML(false).)
func Marshal(v any) ([]byte, error) { return marshalNoEscape(v) }

func marshalNoEscape(v any) ([]byte, error) {
	var b bytes.Buffer
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(false)
	if err := e.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

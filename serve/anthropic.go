package serve

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/toolharness/toolharness/chat"
)

// anRequest is an Anthropic Messages request.
type anRequest struct {
	Model         string            `json:"model"`
	MaxTokens     *int              `json:"max_tokens"`
	System        json.RawMessage   `json:"system"`
	Messages      []anMessage       `json:"messages"`
	Tools         []json.RawMessage `json:"tools"`
	ToolChoice    json.RawMessage   `json:"tool_choice"`
	StopSequences []string          `json:"stop_sequences"`
	Stream        bool              `json:"stream"`
	Temperature   *float64          `json:"temperature"`
	TopP          *float64          `json:"top_p"`
	TopK          *int              `json:"top_k"`
}

type anMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

// anBlock holds the fields of every content block this server reads.
type anBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	IsError   bool            `json:"is_error"`
	Thinking  string          `json:"thinking"`
}

// decodeAnthropic reads a Messages request (count_tokens: without
// max_tokens).
func decodeAnthropic(data []byte, needMax bool) (Request, anRequest, error) {
	var in anRequest
	if err := decodeJSON(data, &in); err != nil {
		return Request{}, in, err
	}
	req := Request{API: apiAnthropic, Model: in.Model, Temperature: in.Temperature, TopP: in.TopP, TopK: in.TopK, IDPrefix: "toolu_", Stop: in.StopSequences}
	switch {
	case in.Model == "":
		return req, in, badField("model", "is required")
	case needMax && in.MaxTokens == nil:
		return req, in, badField("max_tokens", "is required")
	case in.MaxTokens != nil && *in.MaxTokens < 1 && needMax:
		return req, in, badField("max_tokens", "must be at least 1")
	case len(in.Messages) == 0:
		return req, in, badField("messages", "at least one message is required")
	}
	if in.MaxTokens != nil {
		req.MaxTokens = *in.MaxTokens
	}
	for i, s := range in.StopSequences {
		if s == "" {
			return req, in, badField(fmt.Sprintf("stop_sequences[%d]", i), "an empty stop sequence")
		}
	}
	system, err := anText(in.System, "system")
	if err != nil {
		return req, in, err
	}
	if system != "" {
		req.Messages = append(req.Messages, chat.Message{Role: chat.RoleSystem, Content: system})
		req.Origins = append(req.Origins, "system")
	}
	for i, m := range in.Messages {
		field := fmt.Sprintf("messages[%d]", i)
		msgs, err := anMessages(m, field)
		if err != nil {
			return req, in, err
		}
		req.Messages = append(req.Messages, msgs...)
		for range msgs {
			req.Origins = append(req.Origins, field)
		}
	}
	for i, raw := range in.Tools {
		t, err := anTool(raw, fmt.Sprintf("tools[%d]", i))
		if err != nil {
			return req, in, err
		}
		req.Tools = append(req.Tools, t)
	}
	if req.Choice, err = anthropicChoice(in.ToolChoice); err != nil {
		return req, in, err
	}
	return req, in, nil
}

// anText reads a string or a list of text blocks.
func anText(raw json.RawMessage, field string) (string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return "", nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, nil
	}
	var blocks []anBlock
	if err := json.Unmarshal(raw, &blocks); err != nil {
		return "", badField(field, "must be a string or a list of text blocks")
	}
	var b strings.Builder
	for j, bl := range blocks {
		if bl.Type != "text" {
			return "", badField(fmt.Sprintf("%s[%d]", field, j), "a %q block: only text is served here", bl.Type)
		}
		if j > 0 {
			b.WriteString("\n\n")
		}
		b.WriteString(bl.Text)
	}
	return b.String(), nil
}

// anMessages turns one Anthropic message into the harness's: a user
// message's tool results become tool messages (first, as they answer the
// previous turn), its text a user message; an assistant message's text,
// thinking and tool uses one assistant turn.
func anMessages(m anMessage, field string) ([]chat.Message, error) {
	var blocks []anBlock
	raw := bytes.TrimSpace(m.Content)
	var s string
	if json.Unmarshal(raw, &s) == nil {
		blocks = []anBlock{{Type: "text", Text: s}}
	} else if err := json.Unmarshal(raw, &blocks); err != nil {
		return nil, badField(field+".content", "must be a string or a list of content blocks")
	}
	switch m.Role {
	case "user":
		var out []chat.Message
		var text []string
		for j, b := range blocks {
			f := fmt.Sprintf("%s.content[%d]", field, j)
			switch b.Type {
			case "text":
				text = append(text, b.Text)
			case "tool_result":
				content, err := anText(b.Content, f+".content")
				if err != nil {
					return nil, err
				}
				out = append(out, chat.Message{Role: chat.RoleTool, ToolCallID: b.ToolUseID, Content: content, IsError: b.IsError})
			default:
				return nil, badField(f, "a %q block is not served (text and tool_result only)", b.Type)
			}
		}
		if len(text) > 0 {
			out = append(out, chat.Message{Role: chat.RoleUser, Content: strings.Join(text, "\n\n")})
		}
		return out, nil
	case "assistant":
		msg := chat.Message{Role: chat.RoleAssistant}
		for j, b := range blocks {
			f := fmt.Sprintf("%s.content[%d]", field, j)
			switch b.Type {
			case "text":
				msg.Content += b.Text
			case "thinking":
				msg.Reasoning += b.Thinking
			case "redacted_thinking":
			case "tool_use":
				args := b.Input
				if len(bytes.TrimSpace(args)) == 0 {
					args = json.RawMessage("{}")
				}
				if args[0] != '{' {
					return nil, badField(f+".input", "must be an object")
				}
				if b.Name == "" {
					return nil, badField(f+".name", "is required")
				}
				msg.ToolCalls = append(msg.ToolCalls, chat.ToolCall{ID: b.ID, Name: b.Name, Arguments: args})
			default:
				return nil, badField(f, "a %q block is not served (text, thinking and tool_use only)", b.Type)
			}
		}
		return []chat.Message{msg}, nil
	case "system":
		// Claude Code sends notes to the model as system messages between
		// the turns; the model reads them as the user's reminders, the
		// form its own prompts use.
		text, err := anText(m.Content, field+".content")
		if err != nil {
			return nil, err
		}
		return []chat.Message{{Role: chat.RoleUser, Content: "<system-reminder>\n" + text + "\n</system-reminder>"}}, nil
	}
	return nil, badField(field+".role", "%q: want user, assistant or system", m.Role)
}

// anTool reads a custom tool; server tools (web search, …) cannot be run
// by this server.
func anTool(raw json.RawMessage, field string) (chat.Tool, error) {
	var w struct {
		Type        string          `json:"type"`
		Name        string          `json:"name"`
		Description string          `json:"description"`
		InputSchema json.RawMessage `json:"input_schema"`
	}
	if err := json.Unmarshal(raw, &w); err != nil {
		return chat.Tool{}, badField(field, "must be a tool object")
	}
	if w.Type != "" && w.Type != "custom" {
		return chat.Tool{}, badField(field+".type", "%q: server tools are not served (custom tools only)", w.Type)
	}
	if len(bytes.TrimSpace(w.InputSchema)) == 0 {
		return chat.Tool{}, badField(field+".input_schema", "is required")
	}
	return chat.Tool{Name: w.Name, Description: w.Description, Parameters: w.InputSchema}, nil
}

// anthropicChoice reads tool_choice: auto, any, tool (with name), none.
func anthropicChoice(raw json.RawMessage) (Choice, error) {
	if len(raw) == 0 || isNullOrEmpty(raw) {
		return Choice{Mode: ChoiceAuto}, nil
	}
	var c struct {
		Type string `json:"type"`
		Name string `json:"name"`
	}
	if err := json.Unmarshal(raw, &c); err != nil {
		return Choice{}, badField("tool_choice", "must be an object with a type")
	}
	switch c.Type {
	case "auto":
		return Choice{Mode: ChoiceAuto}, nil
	case "any":
		return Choice{Mode: ChoiceRequired}, nil
	case "none":
		return Choice{Mode: ChoiceNone}, nil
	case "tool":
		if c.Name == "" {
			return Choice{}, badField("tool_choice.name", "is required with type tool")
		}
		return Choice{Mode: ChoiceTool, Name: c.Name}, nil
	}
	return Choice{}, badField("tool_choice.type", "%q: want auto, any, tool or none", c.Type)
}

// anthropicMessages serves POST /v1/messages.
func (s *Server) anthropicMessages(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	data, rerr := readBody(r)
	if rerr != nil {
		s.finish(apiAnthropic, "", start, Result{}, rerr)
		writeTurnError(w, apiAnthropic, rerr)
		return
	}
	req, in, err := decodeAnthropic(data, true)
	if err != nil {
		s.finish(apiAnthropic, in.Model, start, Result{}, err)
		writeTurnError(w, apiAnthropic, err)
		return
	}
	id := "msg_" + randomID()
	var st *anStream
	var out Stream
	if in.Stream {
		st = &anStream{w: w, id: id, model: in.Model, open: -1}
		out = st
	}
	res, err := s.cfg.Engine.Turn(r.Context(), req, out)
	s.finish(apiAnthropic, res.Model, start, res, err)
	if st != nil {
		st.end(res, err)
		return
	}
	if err != nil {
		writeTurnError(w, apiAnthropic, err)
		return
	}
	if res.Invalid != "" {
		w.Header().Set(invalidHeader, res.Invalid)
	}
	var content []any
	if res.Reasoning != "" {
		content = append(content, map[string]any{"type": "thinking", "thinking": res.Reasoning, "signature": ""})
	}
	if res.Text != "" {
		content = append(content, map[string]any{"type": "text", "text": res.Text})
	}
	for _, c := range res.Calls {
		content = append(content, anToolUse(c))
	}
	if content == nil {
		content = []any{}
	}
	reason, seq := anStop(res)
	writeJSON(w, map[string]any{"id": id, "type": "message", "role": "assistant", "model": in.Model, "content": content,
		"stop_reason": reason, "stop_sequence": seq, "usage": anUsage(res.Usage)})
}

func anToolUse(c chat.ToolCall) map[string]any {
	return map[string]any{"type": "tool_use", "id": c.ID, "name": c.Name, "input": json.RawMessage(compactArgs(c.Arguments))}
}

// anStop is the reply's stop_reason and stop_sequence.
func anStop(res Result) (string, any) {
	switch {
	case res.Finish == FinishToolCalls:
		return "tool_use", nil
	case res.Finish == FinishLength:
		return "max_tokens", nil
	case res.StopSequence != "":
		return "stop_sequence", res.StopSequence
	}
	return "end_turn", nil
}

// anUsage: input_tokens are the prompt tokens evaluated anew, the cached
// prefix is cache_read_input_tokens.
func anUsage(u Usage) map[string]any {
	return map[string]any{"input_tokens": u.PromptTokens - u.CachedTokens, "output_tokens": u.CompletionTokens,
		"cache_read_input_tokens": u.CachedTokens, "cache_creation_input_tokens": 0}
}

// anthropicCountTokens serves POST /v1/messages/count_tokens.
func (s *Server) anthropicCountTokens(w http.ResponseWriter, r *http.Request) {
	data, rerr := readBody(r)
	if rerr != nil {
		writeTurnError(w, apiAnthropic, rerr)
		return
	}
	req, _, err := decodeAnthropic(data, false)
	if err != nil {
		writeTurnError(w, apiAnthropic, err)
		return
	}
	n, err := s.cfg.Engine.CountTokens(r.Context(), req)
	if err != nil {
		writeTurnError(w, apiAnthropic, err)
		return
	}
	writeJSON(w, map[string]any{"input_tokens": n})
}

// anStream writes a turn as Anthropic's event stream: message_start,
// ping, one content block per run of thinking or text, a tool_use block
// per call, message_delta and message_stop.
type anStream struct {
	w       http.ResponseWriter
	id      string
	model   string
	started bool
	index   int    // the next block's index
	open    int    // the open block's index, -1 when none
	kind    string // the open block's type
}

func (a *anStream) event(name string, v any) {
	data, _ := chat.Marshal(v)
	writeSSE(a.w, name, data)
}

func (a *anStream) start() {
	if a.started {
		return
	}
	a.started = true
	h := a.w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("Trailer", invalidHeader)
	a.w.WriteHeader(http.StatusOK)
	a.event("message_start", map[string]any{"type": "message_start", "message": map[string]any{"id": a.id, "type": "message", "role": "assistant",
		"model": a.model, "content": []any{}, "stop_reason": nil, "stop_sequence": nil, "usage": map[string]any{"input_tokens": 0, "output_tokens": 0}}})
	a.event("ping", map[string]any{"type": "ping"})
}

// block opens a block of kind unless it is the open one.
func (a *anStream) block(kind string, start map[string]any) {
	a.start()
	if a.open >= 0 && a.kind == kind && kind != "tool_use" {
		return
	}
	a.closeBlock()
	a.open, a.kind = a.index, kind
	a.index++
	a.event("content_block_start", map[string]any{"type": "content_block_start", "index": a.open, "content_block": start})
}

func (a *anStream) closeBlock() {
	if a.open < 0 {
		return
	}
	if a.kind == "thinking" {
		a.delta(map[string]any{"type": "signature_delta", "signature": ""})
	}
	a.event("content_block_stop", map[string]any{"type": "content_block_stop", "index": a.open})
	a.open = -1
}

func (a *anStream) delta(d map[string]any) {
	a.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": a.open, "delta": d})
}

func (a *anStream) Text(s string) {
	a.block("text", map[string]any{"type": "text", "text": ""})
	a.delta(map[string]any{"type": "text_delta", "text": s})
}

func (a *anStream) Reasoning(s string) {
	a.block("thinking", map[string]any{"type": "thinking", "thinking": "", "signature": ""})
	a.delta(map[string]any{"type": "thinking_delta", "thinking": s})
}

func (a *anStream) end(res Result, err error) {
	if err != nil && !a.started {
		writeTurnError(a.w, apiAnthropic, err)
		return
	}
	a.start()
	if err != nil {
		_, kind := failure(err)
		t := map[errKind]string{errInvalid: "invalid_request_error", errUpstream: "api_error"}[kind]
		a.event("error", map[string]any{"type": "error", "error": map[string]any{"type": t, "message": err.Error()}})
		return
	}
	for _, c := range res.Calls {
		a.block("tool_use", map[string]any{"type": "tool_use", "id": c.ID, "name": c.Name, "input": map[string]any{}})
		a.delta(map[string]any{"type": "input_json_delta", "partial_json": string(compactArgs(c.Arguments))})
	}
	a.closeBlock()
	reason, seq := anStop(res)
	a.event("message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": reason, "stop_sequence": seq},
		"usage": anUsage(res.Usage)})
	a.event("message_stop", map[string]any{"type": "message_stop"})
	if res.Invalid != "" {
		a.w.Header().Set(invalidHeader, res.Invalid)
	}
}

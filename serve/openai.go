package serve

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/toolharness/toolharness/chat"
	"github.com/toolharness/toolharness/internal/jsonerr"
)

// oaRequest is an OpenAI chat completions request. Fields the server
// cannot honour are read so that they can be refused by name.
type oaRequest struct {
	Model               string            `json:"model"`
	Messages            []json.RawMessage `json:"messages"`
	Tools               []json.RawMessage `json:"tools"`
	ToolChoice          json.RawMessage   `json:"tool_choice"`
	ParallelToolCalls   *bool             `json:"parallel_tool_calls"`
	MaxTokens           *int              `json:"max_tokens"`
	MaxCompletionTokens *int              `json:"max_completion_tokens"`
	Temperature         *float64          `json:"temperature"`
	TopP                *float64          `json:"top_p"`
	Stop                json.RawMessage   `json:"stop"`
	Seed                *int              `json:"seed"`
	Stream              bool              `json:"stream"`
	StreamOptions       *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	N                *int            `json:"n"`
	Logprobs         *bool           `json:"logprobs"`
	TopLogprobs      *int            `json:"top_logprobs"`
	ResponseFormat   json.RawMessage `json:"response_format"`
	FrequencyPenalty *float64        `json:"frequency_penalty"`
	PresencePenalty  *float64        `json:"presence_penalty"`
	LogitBias        json.RawMessage `json:"logit_bias"`
	Functions        json.RawMessage `json:"functions"`
	Audio            json.RawMessage `json:"audio"`
}

// decodeOpenAI reads a chat completions request.
func decodeOpenAI(data []byte) (Request, oaRequest, error) {
	var in oaRequest
	if err := decodeJSON(data, &in); err != nil {
		return Request{}, in, err
	}
	if err := in.unsupported(); err != nil {
		return Request{}, in, err
	}
	req := Request{API: apiOpenAI, Model: in.Model, Temperature: in.Temperature, TopP: in.TopP, Seed: in.Seed, IDPrefix: "call_"}
	if in.Model == "" {
		return req, in, badField("model", "is required")
	}
	if len(in.Messages) == 0 {
		return req, in, badField("messages", "at least one message is required")
	}
	for i, raw := range in.Messages {
		var m chat.Message
		if err := json.Unmarshal(raw, &m); err != nil {
			return req, in, badField(fmt.Sprintf("messages[%d]", i), "%s", trimChat(err))
		}
		req.Messages = append(req.Messages, m)
	}
	for i, raw := range in.Tools {
		var w struct {
			Type     string          `json:"type"`
			Function json.RawMessage `json:"function"`
		}
		if err := json.Unmarshal(raw, &w); err != nil || w.Type != "function" || len(w.Function) == 0 {
			return req, in, badField(fmt.Sprintf("tools[%d]", i), `want {"type":"function","function":{"name",…}}`)
		}
		var t chat.Tool
		if err := json.Unmarshal(raw, &t); err != nil {
			return req, in, badField(fmt.Sprintf("tools[%d]", i), "%s", trimChat(err))
		}
		req.Tools = append(req.Tools, t)
	}
	var err error
	if req.Choice, err = openAIChoice(in.ToolChoice); err != nil {
		return req, in, err
	}
	if req.Stop, err = stopList(in.Stop, "stop"); err != nil {
		return req, in, err
	}
	switch {
	case in.MaxCompletionTokens != nil:
		req.MaxTokens = *in.MaxCompletionTokens
	case in.MaxTokens != nil:
		req.MaxTokens = *in.MaxTokens
	}
	if req.MaxTokens < 0 {
		return req, in, badField("max_tokens", "must not be negative")
	}
	return req, in, nil
}

// unsupported refuses, by name, fields whose meaning the server cannot
// honour; absent or default values pass (SDKs send some by default).
func (in *oaRequest) unsupported() error {
	switch {
	case in.N != nil && *in.N > 1:
		return badField("n", "only one choice per request is served (n=1)")
	case in.Logprobs != nil && *in.Logprobs:
		return badField("logprobs", "log probabilities are not served")
	case in.TopLogprobs != nil && *in.TopLogprobs > 0:
		return badField("top_logprobs", "log probabilities are not served")
	case in.FrequencyPenalty != nil && *in.FrequencyPenalty != 0:
		return badField("frequency_penalty", "not served: the backends' options have no penalties")
	case in.PresencePenalty != nil && *in.PresencePenalty != 0:
		return badField("presence_penalty", "not served: the backends' options have no penalties")
	case len(in.LogitBias) > 0 && !isNullOrEmpty(in.LogitBias):
		return badField("logit_bias", "not served")
	case len(in.Functions) > 0 && !isNullOrEmpty(in.Functions):
		return badField("functions", "the deprecated functions field is not served: send tools")
	case len(in.Audio) > 0 && !isNullOrEmpty(in.Audio):
		return badField("audio", "not served")
	}
	if len(in.ResponseFormat) > 0 && !isNullOrEmpty(in.ResponseFormat) {
		var rf struct {
			Type string `json:"type"`
		}
		if json.Unmarshal(in.ResponseFormat, &rf) != nil || rf.Type != "text" {
			return badField("response_format", "only text is served")
		}
	}
	return nil
}

func isNullOrEmpty(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return bytes.Equal(raw, []byte("null")) || bytes.Equal(raw, []byte("{}")) || bytes.Equal(raw, []byte("[]"))
}

// decodeJSON reads a request body into v, naming the field a wrong type
// is in.
func decodeJSON(data []byte, v any) error {
	if len(bytes.TrimSpace(data)) == 0 {
		return badField("body", "empty: a JSON object is required")
	}
	if err := json.Unmarshal(data, v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return badField(te.Field, "%s", jsonerr.Describe(err))
		}
		return badField("body", "not valid JSON: %s", jsonerr.Describe(err))
	}
	return nil
}

// trimChat is a package chat decode error without its prefix, for a
// message that already names the field.
func trimChat(err error) string {
	msg := err.Error()
	for _, p := range []string{"chat: message: ", "chat: tool: ", "chat: "} {
		if m, ok := strings.CutPrefix(msg, p); ok {
			return m
		}
	}
	return msg
}

// openAIChoice reads tool_choice: "none", "auto", "required" or
// {"type":"function","function":{"name":…}}.
func openAIChoice(raw json.RawMessage) (Choice, error) {
	if isNullOrEmpty(raw) || len(raw) == 0 {
		return Choice{Mode: ChoiceAuto}, nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		switch s {
		case "auto", "none", "required":
			return Choice{Mode: ChoiceMode(s)}, nil
		}
		return Choice{}, badField("tool_choice", "%q: want none, auto, required or a named function", s)
	}
	var named struct {
		Type     string `json:"type"`
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	}
	if json.Unmarshal(raw, &named) != nil || named.Type != "function" || named.Function.Name == "" {
		return Choice{}, badField("tool_choice", `want none, auto, required or {"type":"function","function":{"name":…}}`)
	}
	return Choice{Mode: ChoiceTool, Name: named.Function.Name}, nil
}

// stopList reads a stop field: a string or a list of strings.
func stopList(raw json.RawMessage, field string) ([]string, error) {
	if len(raw) == 0 || isNullOrEmpty(raw) {
		return nil, nil
	}
	var one string
	if json.Unmarshal(raw, &one) == nil {
		if one == "" {
			return nil, nil
		}
		return []string{one}, nil
	}
	var many []string
	if err := json.Unmarshal(raw, &many); err != nil {
		return nil, badField(field, "must be a string or a list of strings")
	}
	for i, s := range many {
		if s == "" {
			return nil, badField(fmt.Sprintf("%s[%d]", field, i), "an empty stop sequence")
		}
	}
	return many, nil
}

// openaiChat serves POST /v1/chat/completions.
func (s *Server) openaiChat(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	data, rerr := readBody(r)
	if rerr != nil {
		s.finish(apiOpenAI, "", start, Result{}, rerr)
		writeTurnError(w, apiOpenAI, rerr)
		return
	}
	req, in, err := decodeOpenAI(data)
	if err != nil {
		s.finish(apiOpenAI, in.Model, start, Result{}, err)
		writeTurnError(w, apiOpenAI, err)
		return
	}
	id := "chatcmpl-" + randomID()
	created := time.Now().Unix()
	var st *oaStream
	var out Stream
	if in.Stream {
		st = &oaStream{w: w, id: id, model: in.Model, created: created, usage: in.StreamOptions != nil && in.StreamOptions.IncludeUsage}
		out = st
	}
	res, err := s.cfg.Engine.Turn(r.Context(), req, out)
	s.finish(apiOpenAI, res.Model, start, res, err)
	if st != nil {
		st.end(res, err)
		return
	}
	if err != nil {
		writeTurnError(w, apiOpenAI, err)
		return
	}
	if res.Invalid != "" {
		w.Header().Set(invalidHeader, res.Invalid)
	}
	writeJSON(w, oaCompletion(id, in.Model, created, res))
}

func oaCompletion(id, model string, created int64, res Result) map[string]any {
	msg := map[string]any{"role": "assistant", "content": res.Text}
	if res.Reasoning != "" {
		msg["reasoning_content"] = res.Reasoning
	}
	if len(res.Calls) > 0 {
		var calls []map[string]any
		for _, c := range res.Calls {
			calls = append(calls, map[string]any{"id": c.ID, "type": "function",
				"function": map[string]any{"name": c.Name, "arguments": string(compactArgs(c.Arguments))}})
		}
		msg["tool_calls"] = calls
		if res.Text == "" {
			msg["content"] = nil
		}
	}
	return map[string]any{"id": id, "object": "chat.completion", "created": created, "model": model,
		"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": string(res.Finish), "logprobs": nil}},
		"usage":   oaUsage(res.Usage)}
}

func oaUsage(u Usage) map[string]any {
	return map[string]any{"prompt_tokens": u.PromptTokens, "completion_tokens": u.CompletionTokens,
		"total_tokens":          u.PromptTokens + u.CompletionTokens,
		"prompt_tokens_details": map[string]any{"cached_tokens": u.CachedTokens}}
}

// compactArgs is a call's arguments as one line of JSON.
func compactArgs(args json.RawMessage) []byte {
	var b bytes.Buffer
	if len(args) == 0 || json.Compact(&b, args) != nil {
		return []byte("{}")
	}
	return b.Bytes()
}

// oaStream writes a turn as OpenAI chat completion chunks. The headers
// go out with the first chunk, so a request that fails before any text
// is still answered with a status and an error body.
type oaStream struct {
	w       http.ResponseWriter
	id      string
	model   string
	created int64
	usage   bool
	started bool
}

func (o *oaStream) start() {
	if o.started {
		return
	}
	o.started = true
	h := o.w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("Trailer", invalidHeader)
	o.w.WriteHeader(http.StatusOK)
	o.chunk(map[string]any{"role": "assistant", "content": ""}, nil)
}

func (o *oaStream) chunk(delta map[string]any, finish any) {
	o.send(map[string]any{"id": o.id, "object": "chat.completion.chunk", "created": o.created, "model": o.model,
		"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": nil}}})
}

func (o *oaStream) send(v any) {
	data, _ := chat.Marshal(v)
	writeSSE(o.w, "", data)
}

func (o *oaStream) Text(s string) {
	o.start()
	o.chunk(map[string]any{"content": s}, nil)
}

func (o *oaStream) Reasoning(s string) {
	o.start()
	o.chunk(map[string]any{"reasoning_content": s}, nil)
}

// end writes the calls (each id and name first, then its arguments), the
// finish reason, the usage and [DONE]; or the error.
func (o *oaStream) end(res Result, err error) {
	if err != nil && !o.started {
		writeTurnError(o.w, apiOpenAI, err)
		return
	}
	o.start()
	if err != nil {
		status, kind := failure(err)
		_ = status
		t := map[errKind]string{errInvalid: "invalid_request_error", errUpstream: "upstream_error"}[kind]
		o.send(map[string]any{"error": map[string]any{"message": err.Error(), "type": t, "param": nil, "code": nil}})
		writeSSE(o.w, "", []byte("[DONE]"))
		return
	}
	for i, c := range res.Calls {
		o.chunk(map[string]any{"tool_calls": []any{map[string]any{"index": i, "id": c.ID, "type": "function",
			"function": map[string]any{"name": c.Name, "arguments": ""}}}}, nil)
		o.chunk(map[string]any{"tool_calls": []any{map[string]any{"index": i,
			"function": map[string]any{"arguments": string(compactArgs(c.Arguments))}}}}, nil)
	}
	o.chunk(map[string]any{}, string(res.Finish))
	if o.usage {
		o.send(map[string]any{"id": o.id, "object": "chat.completion.chunk", "created": o.created, "model": o.model,
			"choices": []any{}, "usage": oaUsage(res.Usage)})
	}
	writeSSE(o.w, "", []byte("[DONE]"))
	if res.Invalid != "" {
		o.w.Header().Set(invalidHeader, res.Invalid)
	}
}

// openaiModels serves GET /v1/models.
func (s *Server) openaiModels(w http.ResponseWriter, _ *http.Request) {
	var data []any
	for _, name := range s.cfg.Engine.Models() {
		data = append(data, map[string]any{"id": name, "object": "model", "created": 0, "owned_by": "toolharness"})
	}
	writeJSON(w, map[string]any{"object": "list", "data": data})
}

func writeJSON(w http.ResponseWriter, v any) {
	data, err := chat.Marshal(v)
	if err != nil {
		writeError(w, apiOpenAI, http.StatusInternalServerError, errUpstream, "", "serve: "+err.Error())
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(append(data, '\n'))
}

// writeSSE writes one server-sent event and flushes it.
func writeSSE(w http.ResponseWriter, event string, data []byte) {
	var b bytes.Buffer
	if event != "" {
		b.WriteString("event: " + event + "\n")
	}
	b.WriteString("data: ")
	b.Write(data)
	b.WriteString("\n\n")
	_, _ = w.Write(b.Bytes())
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}

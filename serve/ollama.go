package serve

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/toolharness/toolharness/chat"
)

// olRequest is an Ollama /api/chat request. It is written here rather than
// taken from github.com/ollama/ollama/api, whose tool type keeps only a
// schema's type, $defs, items, required and properties, dropping keywords
// that validation needs (additionalProperties, anyOf, …): tools and call
// arguments stay raw JSON, as the client sent them.
type olRequest struct {
	Model    string            `json:"model"`
	Messages []olMessage       `json:"messages"`
	Tools    []json.RawMessage `json:"tools"`
	Stream   *bool             `json:"stream"`
	Format   json.RawMessage   `json:"format"`
	// Logprobs and TopLogprobs (newer Ollama clients send them) ask for what the server
	// cannot give: they are refused, not dropped.
	Logprobs    *bool `json:"logprobs"`
	TopLogprobs *int  `json:"top_logprobs"`
	Options     struct {
		Temperature *float64        `json:"temperature"`
		TopP        *float64        `json:"top_p"`
		TopK        *int            `json:"top_k"`
		Seed        *int            `json:"seed"`
		NumPredict  *int            `json:"num_predict"`
		Stop        json.RawMessage `json:"stop"`
	} `json:"options"`
}

type olMessage struct {
	Role       string       `json:"role"`
	Content    string       `json:"content"`
	Thinking   string       `json:"thinking,omitempty"`
	Images     []string     `json:"images,omitempty"`
	ToolCalls  []olToolCall `json:"tool_calls,omitempty"`
	ToolName   string       `json:"tool_name,omitempty"`
	ToolCallID string       `json:"tool_call_id,omitempty"`
}

type olToolCall struct {
	ID       string `json:"id,omitempty"`
	Function struct {
		Index     int             `json:"index"`
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	} `json:"function"`
}

// decodeOllama reads an /api/chat request. Ollama's calls may come
// without ids and its tool messages name the tool rather than the call:
// such a result answers the earliest unanswered call of that name (or of
// any name) of the assistant turn before it.
func decodeOllama(data []byte) (Request, olRequest, error) {
	var in olRequest
	if err := decodeJSON(data, &in); err != nil {
		return Request{}, in, err
	}
	o := in.Options
	req := Request{API: apiOllama, Model: in.Model, Temperature: o.Temperature, TopP: o.TopP, TopK: o.TopK, Seed: o.Seed, IDPrefix: "call_"}
	if in.Model == "" {
		return req, in, badField("model", "is required")
	}
	if len(in.Format) > 0 && !isNullOrEmpty(in.Format) && string(bytes.TrimSpace(in.Format)) != `""` {
		return req, in, badField("format", "structured output is not served with tools")
	}
	if in.Logprobs != nil && *in.Logprobs {
		return req, in, badField("logprobs", "log probabilities are not served")
	}
	if in.TopLogprobs != nil && *in.TopLogprobs > 0 {
		return req, in, badField("top_logprobs", "log probabilities are not served")
	}
	if o.NumPredict != nil && *o.NumPredict > 0 {
		req.MaxTokens = *o.NumPredict
	}
	var err error
	if req.Stop, err = stopList(o.Stop, "options.stop"); err != nil {
		return req, in, err
	}
	var pending []chat.ToolCall // the last assistant turn's calls not yet answered
	for i, m := range in.Messages {
		field := fmt.Sprintf("messages[%d]", i)
		if len(m.Images) > 0 {
			return req, in, badField(field+".images", "images are not served")
		}
		msg := chat.Message{Role: chat.Role(m.Role), Content: m.Content, Reasoning: m.Thinking, ToolCallID: m.ToolCallID, Name: m.ToolName}
		switch msg.Role {
		case chat.RoleAssistant:
			pending = nil
			for j, c := range m.ToolCalls {
				args := c.Function.Arguments
				if len(bytes.TrimSpace(args)) == 0 || isNullOrEmpty(args) {
					args = json.RawMessage("{}")
				}
				id := c.ID
				if id == "" {
					id = fmt.Sprintf("call_%d_%d", i, j)
				}
				tc := chat.ToolCall{ID: id, Name: c.Function.Name, Arguments: args}
				msg.ToolCalls = append(msg.ToolCalls, tc)
				pending = append(pending, tc)
			}
		case chat.RoleTool:
			if msg.ToolCallID == "" {
				k := slices.IndexFunc(pending, func(c chat.ToolCall) bool { return m.ToolName == "" || c.Name == m.ToolName })
				if k < 0 {
					return req, in, badField(field, "a tool result (tool_name %q) that answers no call of the assistant turn before it", m.ToolName)
				}
				msg.ToolCallID = pending[k].ID
				pending = slices.Delete(pending, k, k+1)
			}
		}
		req.Messages = append(req.Messages, msg)
	}
	for i, raw := range in.Tools {
		var t chat.Tool
		if err := json.Unmarshal(raw, &t); err != nil {
			return req, in, badField(fmt.Sprintf("tools[%d]", i), "%s", trimChat(err))
		}
		req.Tools = append(req.Tools, t)
	}
	req.Choice = Choice{Mode: ChoiceAuto}
	return req, in, nil
}

// ollamaChat serves POST /api/chat (streaming unless "stream": false).
func (s *Server) ollamaChat(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	data, rerr := readBody(r)
	if rerr != nil {
		s.finish(apiOllama, "", start, Result{}, rerr)
		writeTurnError(w, apiOllama, rerr)
		return
	}
	req, in, err := decodeOllama(data)
	if err != nil {
		s.finish(apiOllama, in.Model, start, Result{}, err)
		writeTurnError(w, apiOllama, err)
		return
	}
	var st *olStream
	var out Stream
	if in.Stream == nil || *in.Stream {
		st = &olStream{w: w, model: in.Model}
		out = st
	}
	res, err := s.cfg.Engine.Turn(r.Context(), req, out)
	s.finish(apiOllama, res.Model, start, res, err)
	if st != nil {
		st.end(res, err, start)
		return
	}
	if err != nil {
		writeTurnError(w, apiOllama, err)
		return
	}
	if res.Invalid != "" {
		w.Header().Set(invalidHeader, res.Invalid)
	}
	writeJSON(w, olFinal(in.Model, res, start, true))
}

// olFinal is the last object of a reply: the whole message when not
// streamed, the calls alone when streamed.
func olFinal(model string, res Result, start time.Time, whole bool) map[string]any {
	msg := map[string]any{"role": "assistant", "content": ""}
	if whole {
		msg["content"] = res.Text
		if res.Reasoning != "" {
			msg["thinking"] = res.Reasoning
		}
	}
	if len(res.Calls) > 0 {
		var calls []any
		for i, c := range res.Calls {
			calls = append(calls, map[string]any{"id": c.ID, "function": map[string]any{"index": i, "name": c.Name, "arguments": json.RawMessage(compactArgs(c.Arguments))}})
		}
		msg["tool_calls"] = calls
	}
	reason := "stop"
	if res.Finish == FinishLength {
		reason = "length"
	}
	return map[string]any{"model": model, "created_at": time.Now().UTC().Format(time.RFC3339Nano), "message": msg, "done": true,
		"done_reason": reason, "total_duration": time.Since(start).Nanoseconds(), "prompt_eval_count": res.Usage.PromptTokens - res.Usage.CachedTokens,
		"eval_count": res.Usage.CompletionTokens}
}

// olStream writes a reply as Ollama's NDJSON: one object per piece of
// text, then a final one with the calls and the counts.
type olStream struct {
	w       http.ResponseWriter
	model   string
	started bool
}

func (o *olStream) line(v any) {
	if !o.started {
		o.started = true
		o.w.Header().Set("Content-Type", "application/x-ndjson")
		o.w.Header().Set("Trailer", invalidHeader)
		o.w.WriteHeader(http.StatusOK)
	}
	data, _ := chat.Marshal(v)
	_, _ = o.w.Write(append(data, '\n'))
	if f, ok := o.w.(http.Flusher); ok {
		f.Flush()
	}
}

func (o *olStream) piece(field, s string) {
	o.line(map[string]any{"model": o.model, "created_at": time.Now().UTC().Format(time.RFC3339Nano),
		"message": map[string]any{"role": "assistant", "content": "", field: s}, "done": false})
}

func (o *olStream) Text(s string)      { o.piece("content", s) }
func (o *olStream) Reasoning(s string) { o.piece("thinking", s) }

func (o *olStream) end(res Result, err error, start time.Time) {
	if err != nil && !o.started {
		writeTurnError(o.w, apiOllama, err)
		return
	}
	if err != nil {
		o.line(map[string]any{"error": err.Error()})
		return
	}
	o.line(olFinal(o.model, res, start, false))
	if res.Invalid != "" {
		o.w.Header().Set(invalidHeader, res.Invalid)
	}
}

// ollamaPassthrough serves /api/tags, /api/show and /api/version from the
// Ollama server behind this one; /api/show reports the tools capability,
// which this server gives every model. Without an Ollama server, tags
// lists the served models and version says this server's.
func (s *Server) ollamaPassthrough(w http.ResponseWriter, r *http.Request) {
	if s.cfg.Ollama == "" {
		switch r.URL.Path {
		case "/api/tags":
			var models []any
			for _, n := range s.cfg.Engine.Models() {
				models = append(models, map[string]any{"name": n, "model": n})
			}
			writeJSON(w, map[string]any{"models": models})
		case "/api/version":
			writeJSON(w, map[string]any{"version": "0.0.0-toolharness"})
		default:
			writeError(w, apiOllama, http.StatusNotFound, errNotFound, "", "no Ollama server behind this one (serve --backend ollama)")
		}
		return
	}
	up, err := http.NewRequestWithContext(r.Context(), r.Method, strings.TrimRight(s.cfg.Ollama, "/")+r.URL.Path, r.Body)
	if err != nil {
		writeError(w, apiOllama, http.StatusBadGateway, errUpstream, "", err.Error())
		return
	}
	up.Header.Set("Content-Type", r.Header.Get("Content-Type"))
	resp, err := http.DefaultClient.Do(up)
	if err != nil {
		writeError(w, apiOllama, http.StatusBadGateway, errUpstream, "", "the Ollama server did not answer: "+err.Error())
		return
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		writeError(w, apiOllama, http.StatusBadGateway, errUpstream, "", "the Ollama server's answer was cut: "+err.Error())
		return
	}
	if r.URL.Path == "/api/show" && resp.StatusCode == http.StatusOK {
		body = withToolsCapability(body)
	}
	w.Header().Set("Content-Type", resp.Header.Get("Content-Type"))
	w.WriteHeader(resp.StatusCode)
	_, _ = w.Write(body)
}

// withToolsCapability adds "tools" to an /api/show answer's capabilities.
func withToolsCapability(body []byte) []byte {
	var show map[string]json.RawMessage
	if json.Unmarshal(body, &show) != nil {
		return body
	}
	var caps []string
	_ = json.Unmarshal(show["capabilities"], &caps)
	if slices.Contains(caps, "tools") {
		return body
	}
	data, err := json.Marshal(append(caps, "tools"))
	if err != nil {
		return body
	}
	show["capabilities"] = data
	out, err := json.Marshal(show)
	if err != nil {
		return body
	}
	return out
}

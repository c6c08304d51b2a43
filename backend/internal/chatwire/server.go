package chatwire

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"

	"github.com/toolharness/toolharness/backend"
	"github.com/toolharness/toolharness/chat"
)

// ToolMessage is one message of server mode: an assistant turn carries its
// content and its calls as structures, for the server's template to render.
type ToolMessage struct {
	Role       string
	Content    string
	Name       string
	ToolCallID string
	ToolCalls  []chat.ToolCall
}

// ConvertServer converts msgs for server mode on backend backendName. An
// assistant turn travels as its content (never its raw text: the calls in
// it travel as structures, and the raw text would repeat them) and its
// calls. Its errors are *backend.Error of KindUnsupported.
func ConvertServer(backendName string, msgs []chat.Message) ([]ToolMessage, []string, error) {
	if len(msgs) == 0 {
		return nil, nil, &backend.Error{Kind: backend.KindUnsupported, Backend: backendName, Message: "server mode needs messages"}
	}
	out := make([]ToolMessage, 0, len(msgs))
	developers := 0
	for i, m := range msgs {
		role := string(m.Role)
		if m.Role == chat.RoleDeveloper {
			role = string(chat.RoleSystem)
			developers++
		}
		for _, c := range m.ToolCalls {
			if c.Arguments != nil && !json.Valid(c.Arguments) {
				return nil, nil, &backend.Error{Kind: backend.KindUnsupported, Backend: backendName,
					Message: fmt.Sprintf("message %d: call %q has arguments that are not JSON", i, c.Name)}
			}
		}
		out = append(out, ToolMessage{Role: role, Content: m.Content, Name: m.Name, ToolCallID: m.ToolCallID, ToolCalls: m.ToolCalls})
	}
	var notes []string
	if developers > 0 {
		notes = append(notes, fmt.Sprintf("sent %d developer message(s) with role system: local servers' chat templates know system only", developers))
	}
	return out, notes, nil
}

// OAIMessage is a message of the OpenAI chat API as llama-server's and
// other OpenAI-compatible servers' /chat/completions take it in server
// mode. Content is null for an assistant turn that only calls tools.
type OAIMessage struct {
	Role       string        `json:"role"`
	Content    *string       `json:"content"`
	Name       string        `json:"name,omitempty"`
	ToolCallID string        `json:"tool_call_id,omitempty"`
	ToolCalls  []OAIToolCall `json:"tool_calls,omitempty"`
}

// OAIToolCall is a call in the OpenAI shape: arguments as a JSON string.
type OAIToolCall struct {
	ID       string      `json:"id,omitempty"`
	Type     string      `json:"type"`
	Function OAIFunction `json:"function"`
}

// OAIFunction is the function of an OAIToolCall.
type OAIFunction struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// OpenAIMessages converts msgs for server mode in the OpenAI shape.
func OpenAIMessages(backendName string, msgs []chat.Message) ([]OAIMessage, []string, error) {
	tms, notes, err := ConvertServer(backendName, msgs)
	if err != nil {
		return nil, nil, err
	}
	out := make([]OAIMessage, len(tms))
	for i, m := range tms {
		w := OAIMessage{Role: m.Role, Name: m.Name, ToolCallID: m.ToolCallID}
		if m.Content != "" || len(m.ToolCalls) == 0 {
			c := m.Content
			w.Content = &c
		}
		for _, c := range m.ToolCalls {
			args := string(bytes.TrimSpace(c.Arguments))
			if args == "" {
				args = "{}"
			}
			w.ToolCalls = append(w.ToolCalls, OAIToolCall{ID: c.ID, Type: "function", Function: OAIFunction{Name: c.Name, Arguments: args}})
		}
		out[i] = w
	}
	return out, notes, nil
}

// Completion is the whole (non-streamed) answer of an OpenAI-style
// /chat/completions, with llama-server's timings extension.
type Completion struct {
	Choices []struct {
		Message struct {
			Content   *string       `json:"content"`
			ToolCalls []OAIToolCall `json:"tool_calls"`
		} `json:"message"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
	Usage   *Usage   `json:"usage"`
	Timings *Timings `json:"timings"` // llama-server's
}

// Timings is llama-server's: cache_n the reused prompt prefix, prompt_n
// the prompt tokens evaluated anew.
type Timings struct {
	CacheN      *int    `json:"cache_n"`
	PromptN     *int    `json:"prompt_n"`
	PromptMS    float64 `json:"prompt_ms"`
	PredictedMS float64 `json:"predicted_ms"`
}

// Response reads a non-streamed completion into a backend.Response: the
// first choice's content and calls, its finish reason ("tool_calls" is
// reported as "stop": the model ended its turn), and the usage figures
// (cached_tokens, else llama-server's timings.cache_n).
func (c *Completion) Response(backendName string) (backend.Response, error) {
	var r backend.Response
	if len(c.Choices) == 0 {
		return r, &backend.Error{Kind: backend.KindBadResponse, Backend: backendName, Message: "the answer has no choices"}
	}
	ch := c.Choices[0]
	if ch.Message.Content != nil {
		r.Text = *ch.Message.Content
	}
	r.StopReason = ch.FinishReason
	if r.StopReason == "tool_calls" {
		r.StopReason = "stop"
	}
	for _, tc := range ch.Message.ToolCalls {
		r.ToolCalls = append(r.ToolCalls, ReadCall(tc.ID, tc.Function.Name, json.RawMessage(tc.Function.Arguments)))
	}
	cacheN, promptN := applyTimings(&r.Usage, c.Timings)
	ApplyUsage(&r.Usage, c.Usage, cacheN, promptN)
	return r, nil
}

// applyTimings copies the durations of llama-server's timings (nil: not
// sent) into dst and returns its cache_n and prompt_n, for ApplyUsage.
func applyTimings(dst *backend.Usage, t *Timings) (cacheN, promptN *int) {
	if t == nil {
		return nil, nil
	}
	dst.PromptDuration = msDuration(t.PromptMS)
	dst.GenerateDuration = msDuration(t.PredictedMS)
	return t.CacheN, t.PromptN
}

// Usage is the usage object of an OpenAI-style answer or stream chunk.
type Usage struct {
	PromptTokens        int `json:"prompt_tokens"`
	CompletionTokens    int `json:"completion_tokens"`
	PromptTokensDetails *struct {
		CachedTokens *int `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
}

// ApplyUsage copies an answer's usage (nil: none) and llama-server's
// timings.cache_n and prompt_n (nil: not sent) into dst. The reused
// prefix is cached_tokens, else cache_n where that is all the server
// sends (builds before llama.cpp PR #19361); never a count of what the
// server holds.
func ApplyUsage(dst *backend.Usage, u *Usage, cacheN, promptN *int) {
	detailed := false
	if u != nil {
		dst.PromptTokens, dst.GeneratedTokens = u.PromptTokens, u.CompletionTokens
		if d := u.PromptTokensDetails; d != nil && d.CachedTokens != nil {
			dst.CachedTokens, dst.CachedKnown, detailed = *d.CachedTokens, true, true
		}
	}
	if cacheN != nil && !detailed {
		dst.CachedTokens, dst.CachedKnown = *cacheN, true
		if dst.PromptTokens == 0 && promptN != nil {
			dst.PromptTokens = *cacheN + *promptN
		}
	}
}

// ReadCall is a call as a server returned it. args is a JSON object, or a
// JSON string holding one (OpenAI's shape); anything else leaves
// Arguments nil and keeps the text in Raw, for the harness to report as
// malformed rather than lose.
func ReadCall(id, name string, args json.RawMessage) chat.ToolCall {
	call := chat.ToolCall{ID: id, Name: name}
	raw := bytes.TrimSpace(args)
	text := string(raw)
	if len(raw) > 0 && raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			text = s
			raw = bytes.TrimSpace([]byte(s))
		}
	}
	switch {
	case len(raw) == 0:
		call.Arguments = json.RawMessage("{}")
	case raw[0] == '{' && json.Valid(raw):
		call.Arguments = json.RawMessage(raw)
	default:
		call.Raw = text
	}
	return call
}

func msDuration(ms float64) time.Duration { return time.Duration(ms * float64(time.Millisecond)) }

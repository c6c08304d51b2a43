package replay

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/toolharness/toolharness/backend"
	"github.com/toolharness/toolharness/chat"
)

// Version of the file format, written in the header line. Version 2 added
// the request's grammar and the response's stop_sequence and notes;
// version 3 the token-exact fields (request token_spans and
// return_tokens, response tokens, usage slot_tokens, capability
// token_prompt), written only when set; version 4 server mode (request
// tools, tool_choice and parallel_tool_calls, response tool_calls,
// capability server_tools), written only when set. Older recordings are
// still read.
const Version = 4

// minVersion is the oldest version NewReplayer reads.
const minVersion = 1

// The entry types of a recording.
const (
	typeHeader      = "header"
	typeGenerate    = "generate"
	typeContextSize = "context_size"
	typeCountTokens = "count_tokens"
)

// entry is one line of a recording. Fields are written in this order.
type entry struct {
	Type string `json:"type"`
	Seq  int    `json:"seq,omitempty"`
	// header
	Version int `json:"version,omitempty"`
	// Capabilities: in the header, what the backend said at the start; on
	// a generate entry, what it says after the call when that changed.
	Capabilities *wireCapabilities `json:"capabilities,omitempty"`
	// generate
	Request  *wireRequest  `json:"request,omitempty"`
	Chunks   []string      `json:"chunks,omitempty"`
	Response *wireResponse `json:"response,omitempty"`
	// context_size, count_tokens
	Model  string `json:"model,omitempty"`
	Text   string `json:"text,omitempty"`
	Result int    `json:"result,omitempty"`

	Error *wireError `json:"error,omitempty"`
}

type wireCapabilities struct {
	Raw       bool `json:"raw"`
	Chat      bool `json:"chat"`
	Constrain bool `json:"constrain"`
	AddsBOS   bool `json:"adds_bos"`
	// TokenPrompt is written only when true (version 3).
	TokenPrompt bool `json:"token_prompt,omitempty"`
	// ServerTools is written only when true (version 4).
	ServerTools bool `json:"server_tools,omitempty"`
}

// wireRequest is backend.Request in full. It keeps its own message shape
// rather than chat's OpenAI shape so that every field a request carries
// (a call's offset and repairs too) is recorded and compared.
type wireRequest struct {
	Model    string          `json:"model"`
	Mode     backend.Mode    `json:"mode"`
	Prompt   string          `json:"prompt"`
	Messages []wireMessage   `json:"messages"`
	Stop     []string        `json:"stop"`
	Format   json.RawMessage `json:"format"`
	Grammar  string          `json:"grammar"`
	Options  wireOptions     `json:"options"`
	// Version 3, written only when set.
	TokenSpans   []backend.TokenSpan `json:"token_spans,omitempty"`
	ReturnTokens bool                `json:"return_tokens,omitempty"`
	// Version 4 (server mode), written only when set.
	Tools             []chat.Tool `json:"tools,omitempty"`
	ToolChoice        string      `json:"tool_choice,omitempty"`
	ParallelToolCalls *bool       `json:"parallel_tool_calls,omitempty"`
}

type wireMessage struct {
	Role       chat.Role      `json:"role"`
	Content    string         `json:"content"`
	Reasoning  string         `json:"reasoning"`
	ToolCalls  []wireToolCall `json:"tool_calls"`
	ToolCallID string         `json:"tool_call_id"`
	Name       string         `json:"name"`
	IsError    bool           `json:"is_error"`
	Raw        string         `json:"raw"`
}

type wireToolCall struct {
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
	Raw       string          `json:"raw"`
	Offset    int             `json:"offset"`
	Repairs   []string        `json:"repairs"`
}

type wireOptions struct {
	Temperature *float64 `json:"temperature"`
	TopP        *float64 `json:"top_p"`
	TopK        *int     `json:"top_k"`
	Seed        *int     `json:"seed"`
	MaxTokens   int      `json:"max_tokens"`
	NumCtx      int      `json:"num_ctx"`
}

// wireResponse is backend.Response in full. Notes are written as they
// came, null or a list, so that a replay returns them exactly.
type wireResponse struct {
	Text         string    `json:"text"`
	StopReason   string    `json:"stop_reason"`
	StopSequence string    `json:"stop_sequence"`
	Usage        wireUsage `json:"usage"`
	Notes        []string  `json:"notes"`
	// Tokens (version 3) is written only when set; so is TokenText.
	Tokens    []int `json:"tokens,omitempty"`
	TokenText int   `json:"token_text,omitempty"`
	// ToolCalls (version 4) is written only when set.
	ToolCalls []wireToolCall `json:"tool_calls,omitempty"`
}

// wireUsage keeps durations in nanoseconds so they round-trip exactly.
type wireUsage struct {
	PromptTokens       int   `json:"prompt_tokens"`
	GeneratedTokens    int   `json:"generated_tokens"`
	CachedTokens       int   `json:"cached_tokens"`
	CachedKnown        bool  `json:"cached_known"`
	TimeToFirstChunkNS int64 `json:"time_to_first_chunk_ns"`
	PromptNS           int64 `json:"prompt_ns"`
	GenerateNS         int64 `json:"generate_ns"`
	TotalNS            int64 `json:"total_ns"`
	// SlotTokens (version 3) is written only when set.
	SlotTokens int `json:"slot_tokens,omitempty"`
}

// wireError keeps an error's exact text and, when it is (or wraps) a
// *backend.Error, the fields callers branch on.
type wireError struct {
	Text string `json:"text"`
	// Callback is set when the error was the caller's own, returned by the
	// chunk callback; AfterChunk is how many chunks it had received then.
	Callback   bool              `json:"callback,omitempty"`
	AfterChunk int               `json:"after_chunk,omitempty"`
	Backend    *wireBackendError `json:"backend,omitempty"`
}

type wireBackendError struct {
	Kind     backend.Kind `json:"kind"`
	Backend  string       `json:"backend"`
	Status   int          `json:"status,omitempty"`
	Message  string       `json:"message,omitempty"`
	Consumed bool         `json:"consumed,omitempty"`
	// Text is the *backend.Error's own text, Cause the text of what it wraps.
	Text  string `json:"text"`
	Cause string `json:"cause,omitempty"`
	// CauseIs names the context error the cause is or wraps.
	CauseIs string `json:"cause_is,omitempty"`
}

func toWireCapabilities(c backend.Capabilities) *wireCapabilities {
	return &wireCapabilities{Raw: c.Raw, Chat: c.Chat, Constrain: c.Constrain, AddsBOS: c.AddsBOS, TokenPrompt: c.TokenPrompt, ServerTools: c.ServerTools}
}

func (c *wireCapabilities) capabilities() backend.Capabilities {
	if c == nil {
		return backend.Capabilities{}
	}
	return backend.Capabilities{Raw: c.Raw, Chat: c.Chat, Constrain: c.Constrain, AddsBOS: c.AddsBOS, TokenPrompt: c.TokenPrompt, ServerTools: c.ServerTools}
}

// toWireRequest copies r; empty lists and raw JSON become null, so a nil
// and an empty slice record (and compare) the same.
func toWireRequest(r backend.Request) *wireRequest {
	w := &wireRequest{Model: r.Model, Mode: r.Mode, Prompt: r.Prompt, Stop: nilIfEmpty(r.Stop), Format: rawOrNil(r.Format),
		Grammar: r.Grammar, TokenSpans: r.TokenSpans, ReturnTokens: r.ReturnTokens, Options: wireOptions{Temperature: r.Options.Temperature, TopP: r.Options.TopP, TopK: r.Options.TopK,
			Seed: r.Options.Seed, MaxTokens: r.Options.MaxTokens, NumCtx: r.Options.NumCtx},
		Tools: r.Tools, ToolChoice: r.ToolChoice, ParallelToolCalls: r.ParallelToolCalls}
	if len(w.Tools) == 0 {
		w.Tools = nil
	}
	for _, m := range r.Messages {
		wm := wireMessage{Role: m.Role, Content: m.Content, Reasoning: m.Reasoning, ToolCallID: m.ToolCallID,
			Name: m.Name, IsError: m.IsError, Raw: m.Raw, ToolCalls: toWireCalls(m.ToolCalls)}
		w.Messages = append(w.Messages, wm)
	}
	return w
}

func toWireCalls(calls []chat.ToolCall) []wireToolCall {
	var out []wireToolCall
	for _, c := range calls {
		out = append(out, wireToolCall{ID: c.ID, Name: c.Name, Arguments: rawOrNil(c.Arguments),
			Raw: c.Raw, Offset: c.Offset, Repairs: nilIfEmpty(c.Repairs)})
	}
	return out
}

func fromWireCalls(calls []wireToolCall) []chat.ToolCall {
	var out []chat.ToolCall
	for _, c := range calls {
		out = append(out, chat.ToolCall{ID: c.ID, Name: c.Name, Arguments: c.Arguments, Raw: c.Raw, Offset: c.Offset, Repairs: c.Repairs})
	}
	return out
}

func nilIfEmpty(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	return s
}

func rawOrNil(b json.RawMessage) json.RawMessage {
	if len(bytes.TrimSpace(b)) == 0 {
		return nil
	}
	return b
}

func toWireResponse(r backend.Response) *wireResponse {
	u := r.Usage
	return &wireResponse{Text: r.Text, StopReason: r.StopReason, StopSequence: r.StopSequence, Notes: r.Notes, Tokens: r.Tokens, TokenText: r.TokenText,
		ToolCalls: toWireCalls(r.ToolCalls), Usage: wireUsage{
			PromptTokens: u.PromptTokens, GeneratedTokens: u.GeneratedTokens, CachedTokens: u.CachedTokens,
			CachedKnown: u.CachedKnown, TimeToFirstChunkNS: int64(u.TimeToFirstChunk), PromptNS: int64(u.PromptDuration),
			GenerateNS: int64(u.GenerateDuration), TotalNS: int64(u.Total), SlotTokens: u.SlotTokens}}
}

func (w *wireResponse) response() backend.Response {
	if w == nil {
		return backend.Response{}
	}
	u := w.Usage
	return backend.Response{Text: w.Text, StopReason: w.StopReason, StopSequence: w.StopSequence, Notes: w.Notes, Tokens: w.Tokens, TokenText: w.TokenText,
		ToolCalls: fromWireCalls(w.ToolCalls), Usage: backend.Usage{
			PromptTokens: u.PromptTokens, GeneratedTokens: u.GeneratedTokens, CachedTokens: u.CachedTokens,
			CachedKnown: u.CachedKnown, TimeToFirstChunk: time.Duration(u.TimeToFirstChunkNS),
			PromptDuration: time.Duration(u.PromptNS), GenerateDuration: time.Duration(u.GenerateNS), Total: time.Duration(u.TotalNS),
			SlotTokens: u.SlotTokens}}
}

// v2Fields names a field of version 2 that e carries, "" when none: a
// version-1 recording cannot have them.
func (e *entry) v2Fields() string {
	switch {
	case e.Request != nil && e.Request.Grammar != "":
		return "request.grammar"
	case e.Response != nil && e.Response.StopSequence != "":
		return "response.stop_sequence"
	case e.Response != nil && e.Response.Notes != nil:
		return "response.notes"
	}
	return ""
}

// v3Fields names a field of version 3 that e carries, "" when none.
func (e *entry) v3Fields() string {
	switch {
	case e.Request != nil && (e.Request.TokenSpans != nil || e.Request.ReturnTokens):
		return "request.token_spans"
	case e.Response != nil && (e.Response.Tokens != nil || e.Response.Usage.SlotTokens != 0):
		return "response.tokens"
	case e.Capabilities != nil && e.Capabilities.TokenPrompt:
		return "capabilities.token_prompt"
	}
	return ""
}

// v4Fields names a field of version 4 that e carries, "" when none.
func (e *entry) v4Fields() string {
	switch {
	case e.Request != nil && (e.Request.Tools != nil || e.Request.ToolChoice != "" || e.Request.ParallelToolCalls != nil):
		return "request.tools"
	case e.Response != nil && e.Response.ToolCalls != nil:
		return "response.tool_calls"
	case e.Capabilities != nil && e.Capabilities.ServerTools:
		return "capabilities.server_tools"
	}
	return ""
}

func toWireError(err error) *wireError {
	if err == nil {
		return nil
	}
	w := &wireError{Text: err.Error()}
	var be *backend.Error
	if errors.As(err, &be) {
		w.Backend = &wireBackendError{Kind: be.Kind, Backend: be.Backend, Status: be.Status, Message: be.Message,
			Consumed: be.Consumed, Text: be.Error()}
		if be.Err != nil {
			w.Backend.Cause = be.Err.Error()
			switch {
			case errors.Is(be.Err, context.Canceled):
				w.Backend.CauseIs = "canceled"
			case errors.Is(be.Err, context.DeadlineExceeded):
				w.Backend.CauseIs = "deadline_exceeded"
			}
		}
	}
	return w
}

// replayedError has the recorded text exactly and unwraps to the rebuilt
// *backend.Error, so both err.Error() and errors.As/Is behave as recorded.
type replayedError struct {
	text  string
	inner error
}

func (e *replayedError) Error() string { return e.text }
func (e *replayedError) Unwrap() error { return e.inner }

// err rebuilds the recorded error. A cause that was (or wrapped) a
// context error unwraps to the context package's own value, so
// errors.Is(err, context.Canceled) holds after replay as it did live.
func (w *wireError) err() error {
	if w == nil {
		return nil
	}
	if w.Backend == nil {
		return errors.New(w.Text)
	}
	b := w.Backend
	be := &backend.Error{Kind: b.Kind, Backend: b.Backend, Status: b.Status, Message: b.Message, Consumed: b.Consumed}
	if b.Cause != "" {
		var inner error
		switch b.CauseIs {
		case "canceled":
			inner = context.Canceled
		case "deadline_exceeded":
			inner = context.DeadlineExceeded
		}
		if inner != nil && inner.Error() == b.Cause {
			be.Err = inner
		} else {
			be.Err = &replayedError{text: b.Cause, inner: inner}
		}
	}
	if w.Text == be.Error() {
		return be
	}
	return &replayedError{text: w.Text, inner: be}
}

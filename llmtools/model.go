package llmtools

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/tmc/langchaingo/llms"

	"github.com/toolharness/toolharness/agent"
	"github.com/toolharness/toolharness/backend"
	"github.com/toolharness/toolharness/backend/langchain"
	"github.com/toolharness/toolharness/chat"
	"github.com/toolharness/toolharness/templates"
)

// Options configure a Model.
type Options struct {
	// Model is the server's model name (llms.WithModel overrides it).
	Model string
	// Mode is raw (default when the backend can) or chat.
	Mode backend.Mode
	// Template and Format choose the prompt family (required unless
	// Family or Renderer is set) and tool-call format ("" = the family's
	// default).
	Template, Format string
	// Family is a loaded chat template's family; it overrides Template.
	Family *templates.Family
	// Renderer overrides Template and Format.
	Renderer agent.Renderer
	// Constrain sends the JSON Schema of the calls with every request that
	// has tools.
	Constrain bool
	// ConstrainMaxString bounds unbounded strings under the constraint.
	ConstrainMaxString int
	// System is a system text used when the messages carry none.
	System string
	// NumCtx is the context window to request (Ollama num_ctx).
	NumCtx int
}

// Model is an llms.Model with prompted tool calling.
type Model struct {
	b    backend.Backend
	r    agent.Renderer
	opts Options

	mu    sync.Mutex
	raw   map[string]string // call ID → the exact assistant text that made it
	order []string          // call IDs, oldest first, to bound raw
}

// maxRemembered bounds the raw texts kept for re-rendering; an older turn
// sent back is rendered from its calls instead (correct, though the
// server may not reuse its cache for it).
const maxRemembered = 4096

var _ llms.Model = (*Model)(nil)

// New returns a Model generating through b.
func New(b backend.Backend, opts Options) (*Model, error) {
	if b == nil {
		return nil, errors.New("llmtools: nil backend")
	}
	caps := b.Capabilities()
	if opts.Mode == "" {
		opts.Mode = backend.ModeRaw
		if !caps.Raw {
			opts.Mode = backend.ModeChat
		}
	}
	if (opts.Mode == backend.ModeRaw && !caps.Raw) || (opts.Mode == backend.ModeChat && !caps.Chat) {
		return nil, fmt.Errorf("llmtools: the backend cannot complete in %s mode", opts.Mode)
	}
	r := opts.Renderer
	if r == nil {
		var err error
		if r, err = agent.NewRenderer(agent.RendererOptions{Template: opts.Template, Family: opts.Family, Format: opts.Format,
			Chat: opts.Mode == backend.ModeChat}); err != nil {
			return nil, fmt.Errorf("llmtools: %w", err)
		}
	}
	return &Model{b: b, r: r, opts: opts, raw: map[string]string{}}, nil
}

// Call implements the deprecated single-prompt interface.
func (m *Model) Call(ctx context.Context, prompt string, options ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, m, prompt, options...)
}

// GenerateContent renders the messages and the tools of llms.WithTools,
// generates, and returns the content and the parsed tool calls.
func (m *Model) GenerateContent(ctx context.Context, messages []llms.MessageContent, options ...llms.CallOption) (*llms.ContentResponse, error) {
	var co llms.CallOptions
	for _, o := range options {
		o(&co)
	}
	if co.CandidateCount > 1 || co.N > 1 {
		return nil, errors.New("llmtools: only one candidate per request")
	}
	tools, err := toolsOf(co)
	if err != nil {
		return nil, err
	}
	tools, required := choose(co.ToolChoice, tools)
	sys, hist, err := m.convert(messages)
	if err != nil {
		return nil, err
	}
	sys.Tools = tools
	req, parser, err := m.request(co, sys, hist, required)
	if err != nil {
		return nil, err
	}

	r := &reply{ctx: ctx, stream: co.StreamingFunc, parser: parser}
	resp, err := m.b.Generate(ctx, req, r.chunk)
	if err != nil {
		return nil, fmt.Errorf("llmtools: %w", err)
	}
	r.handle(parser.Close())
	if r.streamErr != nil {
		return nil, fmt.Errorf("llmtools: streaming func: %w", r.streamErr)
	}
	return &llms.ContentResponse{Choices: []*llms.ContentChoice{m.choice(req.Model, resp, r)}}, nil
}

// choose applies llms.WithToolChoice: the tools the model is offered, and
// whether it must call one.
func choose(choice any, tools []chat.Tool) (offered []chat.Tool, required bool) {
	switch tc := choice.(type) {
	case string:
		switch tc {
		case "none":
			tools = nil
		case "required", "any":
			required = true
		}
	case llms.ToolChoice:
		if tc.Type == "none" {
			tools = nil
		} else if tc.Function != nil {
			required = true
			tools = only(tools, tc.Function.Name)
		}
	}
	return tools, required
}

// request renders the conversation into the backend's request, with the
// parser that reads the reply it asks for.
func (m *Model) request(co llms.CallOptions, sys agent.System, hist []agent.Msg, required bool) (backend.Request, agent.StreamParser, error) {
	req := backend.Request{Model: m.opts.Model, Mode: m.opts.Mode, Stop: append(m.r.Stop(), co.StopWords...)}
	if co.Model != "" {
		req.Model = co.Model
	}
	req.Options = sampling(co, m.opts.NumCtx)
	parser, err := m.parser(&req, sys.Tools, required)
	if err != nil {
		return req, nil, err
	}
	if m.opts.Mode == backend.ModeChat {
		req.Messages, err = m.r.Messages(sys, hist)
	} else {
		req.Prompt, err = m.r.Prompt(sys, hist)
	}
	if err != nil {
		return req, nil, fmt.Errorf("llmtools: render: %w", err)
	}
	return req, parser, nil
}

// sampling is the request's options. CallOptions cannot tell a zero
// temperature from none, and the temperature is sent as given; the other
// samplers only when set, since their zero means no setting.
func sampling(co llms.CallOptions, numCtx int) backend.Options {
	o := backend.Options{MaxTokens: co.MaxTokens, NumCtx: numCtx}
	temp := co.Temperature
	o.Temperature = &temp
	if co.TopP > 0 {
		p := co.TopP
		o.TopP = &p
	}
	if co.TopK > 0 {
		k := co.TopK
		o.TopK = &k
	}
	if co.Seed != 0 {
		s := co.Seed
		o.Seed = &s
	}
	return o
}

// parser is the reply's parser. When the backend can, calls are
// constrained to the tools' schema where asked or where a call is required,
// and req carries the schema.
func (m *Model) parser(req *backend.Request, tools []chat.Tool, required bool) (agent.StreamParser, error) {
	if len(tools) > 0 && (m.opts.Constrain || required) && m.b.Capabilities().Constrain {
		var err error
		if req.Format, err = agent.CallSchema(tools, agent.SchemaOptions{AllowAnswer: !required, MaxString: m.opts.ConstrainMaxString}); err != nil {
			return nil, fmt.Errorf("llmtools: %w", err)
		}
		return agent.NewConstrainedParser(), nil
	}
	parser, err := m.r.NewParser(tools)
	if err != nil {
		return nil, fmt.Errorf("llmtools: %w", err)
	}
	return parser, nil
}

// reply collects a generation's content, calls and the problems the
// parser reported, passing text on to the streaming func as it arrives.
type reply struct {
	ctx      context.Context
	stream   func(context.Context, []byte) error
	parser   agent.StreamParser
	content  strings.Builder
	calls    []chat.ToolCall
	problems []map[string]any
	// streamErr is the streaming func's first error; returned from the
	// backend's callback, it stops the generation.
	streamErr error
}

func (r *reply) chunk(text string) error {
	r.handle(r.parser.Feed(text))
	return r.streamErr
}

func (r *reply) handle(evs []agent.Event) {
	for _, ev := range evs {
		switch ev.Kind {
		case agent.EventText:
			r.content.WriteString(ev.Text)
			if r.stream != nil && r.streamErr == nil && ev.Text != "" {
				r.streamErr = r.stream(r.ctx, []byte(ev.Text))
			}
		case agent.EventCall:
			if ev.Err != nil {
				r.problems = append(r.problems, map[string]any{"kind": ev.Err.Kind, "offset": ev.Err.Offset, "message": ev.Err.Message, "name": ev.Call.Name, "raw": ev.Call.Raw})
				continue
			}
			r.calls = append(r.calls, *ev.Call)
		case agent.EventError:
			r.problems = append(r.problems, map[string]any{"kind": ev.Err.Kind, "offset": ev.Err.Offset, "message": ev.Err.Message})
		}
	}
}

// choice is the reply as langchaingo reports it: a reply with calls stops
// for them, unless the server gave another reason (a length limit, say).
func (m *Model) choice(model string, resp backend.Response, r *reply) *llms.ContentChoice {
	choice := &llms.ContentChoice{
		Content:    r.content.String(),
		StopReason: resp.StopReason,
		GenerationInfo: map[string]any{
			"raw":               resp.Text,
			"PromptTokens":      resp.Usage.PromptTokens,
			"CompletionTokens":  resp.Usage.GeneratedTokens,
			"TotalTokens":       resp.Usage.PromptTokens + resp.Usage.GeneratedTokens,
			"tool_call_errors":  r.problems,
			"toolharness_model": model,
		},
	}
	choice.ToolCalls = m.remember(resp.Text, r.calls)
	if len(choice.ToolCalls) > 0 {
		fc := *choice.ToolCalls[0].FunctionCall
		choice.FuncCall = &fc
		if choice.StopReason == "stop" || choice.StopReason == "" {
			choice.StopReason = "tool_calls"
		}
	}
	return choice
}

// remember gives each call an id and keeps the raw text that made it, so
// that the turn, sent back, renders exactly as the model wrote it.
func (m *Model) remember(raw string, calls []chat.ToolCall) []llms.ToolCall {
	var out []llms.ToolCall
	m.mu.Lock()
	for _, c := range calls {
		id := newID()
		m.raw[id] = raw
		m.order = append(m.order, id)
		if len(m.order) > maxRemembered {
			delete(m.raw, m.order[0])
			m.order = m.order[1:]
		}
		out = append(out, llms.ToolCall{ID: id, Type: "function",
			FunctionCall: &llms.FunctionCall{Name: c.Name, Arguments: string(c.Arguments)}})
	}
	m.mu.Unlock()
	return out
}

func newID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return "call_" + hex.EncodeToString(b[:])
}

func only(tools []chat.Tool, name string) []chat.Tool {
	for _, t := range tools {
		if t.Name == name {
			return []chat.Tool{t}
		}
	}
	return tools
}

// toolsOf reads the tools of llms.WithTools and the deprecated
// llms.WithFunctions.
func toolsOf(co llms.CallOptions) ([]chat.Tool, error) {
	defs := append([]llms.FunctionDefinition(nil), co.Functions...)
	for _, t := range co.Tools {
		if t.Type != "" && t.Type != "function" {
			return nil, fmt.Errorf("llmtools: tool type %q is not supported (function only)", t.Type)
		}
		if t.Function == nil {
			return nil, errors.New("llmtools: a tool without a function definition")
		}
		defs = append(defs, *t.Function)
	}
	var out []chat.Tool
	for _, d := range defs {
		params := json.RawMessage(`{"type":"object","properties":{}}`)
		switch p := d.Parameters.(type) {
		case nil:
		case json.RawMessage:
			params = p
		case []byte:
			params = p
		case string:
			params = json.RawMessage(p)
		default:
			b, err := chat.Marshal(p)
			if err != nil {
				return nil, fmt.Errorf("llmtools: parameters of %q: %w", d.Name, err)
			}
			params = b
		}
		if !json.Valid(params) {
			return nil, fmt.Errorf("llmtools: parameters of %q are not JSON", d.Name)
		}
		out = append(out, chat.Tool{Name: d.Name, Description: d.Description, Parameters: params})
	}
	return out, nil
}

// convert turns langchaingo messages into the system text and history.
func (m *Model) convert(msgs []llms.MessageContent) (agent.System, []agent.Msg, error) {
	sys := agent.System{Text: m.opts.System}
	var hist []agent.Msg
	for i, mc := range msgs {
		var text strings.Builder
		var calls []chat.ToolCall
		var results []chat.ToolResult
		for _, p := range mc.Parts {
			switch p := p.(type) {
			case llms.TextContent:
				text.WriteString(p.Text)
			case llms.ToolCall:
				if p.FunctionCall == nil {
					return sys, nil, fmt.Errorf("llmtools: message %d: tool call %q without a function", i, p.ID)
				}
				args := json.RawMessage(p.FunctionCall.Arguments)
				if strings.TrimSpace(p.FunctionCall.Arguments) == "" {
					args = json.RawMessage("{}")
				}
				calls = append(calls, chat.ToolCall{ID: p.ID, Name: p.FunctionCall.Name, Arguments: args})
			case llms.ToolCallResponse:
				results = append(results, chat.ToolResult{CallID: p.ToolCallID, Name: p.Name, Content: p.Content})
			default:
				return sys, nil, fmt.Errorf("llmtools: message %d: content part %T is not supported (text and tool parts only)", i, p)
			}
		}
		switch mc.Role {
		case llms.ChatMessageTypeSystem:
			if i == 0 {
				sys.Text = text.String()
				continue
			}
			hist = append(hist, agent.Msg{Message: chat.Message{Role: chat.RoleSystem, Content: text.String()}})
		case llms.ChatMessageTypeHuman, llms.ChatMessageTypeGeneric:
			hist = append(hist, agent.Msg{Message: chat.Message{Role: chat.RoleUser, Content: text.String()}})
		case llms.ChatMessageTypeAI:
			msg := chat.Message{Role: chat.RoleAssistant, Content: text.String(), ToolCalls: calls}
			if len(calls) > 0 {
				m.mu.Lock()
				msg.Raw = m.raw[calls[0].ID]
				m.mu.Unlock()
			}
			hist = append(hist, agent.Msg{Message: msg})
		case llms.ChatMessageTypeTool, llms.ChatMessageTypeFunction:
			for _, r := range results {
				hist = append(hist, agent.Msg{Message: r.Message()})
			}
		default:
			return sys, nil, fmt.Errorf("llmtools: message %d: role %q is not supported", i, mc.Role)
		}
	}
	return sys, hist, nil
}

// Wrap gives another llms.Model (langchaingo's Ollama provider, say)
// prompted tool calling: it generates through backend/langchain in chat
// mode, since langchaingo has no raw completion.
func Wrap(m llms.Model, opts Options) (*Model, error) {
	b, err := langchain.New(m, langchain.Config{})
	if err != nil {
		return nil, fmt.Errorf("llmtools: %w", err)
	}
	if opts.Mode == "" {
		opts.Mode = backend.ModeChat
	}
	return New(b, opts)
}

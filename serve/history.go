package serve

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/toolharness/toolharness/agent"
	"github.com/toolharness/toolharness/backend"
	"github.com/toolharness/toolharness/chat"
)

// history is the request's conversation as the model wrote it: every
// assistant turn the server produced and still remembers is replaced by
// the messages it really was (the model's exact text, and the attempts a
// retry hid from the caller), so the prompt extends the previous request's
// byte for byte; ids has, by index in msgs, the token ids those messages
// were generated as, where known, so that on llama.cpp it extends it
// token for token. A tool result must answer a call of an earlier
// assistant turn. replayed counts the turns replaced.
func (e *Engine) history(m *Model, req Request) (msgs []chat.Message, ids map[int]agent.TurnIDs, replayed int, err error) {
	calls := map[string]bool{}
	for i, msg := range req.Messages {
		field := fmt.Sprintf("messages[%d]", i)
		if i < len(req.Origins) {
			field = req.Origins[i]
		}
		if !msg.Role.Valid() {
			return nil, nil, 0, badField(field+".role", "unknown role %q", msg.Role)
		}
		switch msg.Role {
		case chat.RoleAssistant:
			for _, c := range msg.ToolCalls {
				if c.ID == "" {
					return nil, nil, 0, badField(field+".tool_calls", "a call to %q has no id", c.Name)
				}
				calls[c.ID] = true
			}
			if turn, ok := e.memory.Get(turnKey(m.Name, msg)); ok {
				for j, t := range turn.IDs {
					if len(t.IDs) > 0 {
						if ids == nil {
							ids = map[int]agent.TurnIDs{}
						}
						ids[len(msgs)+j] = t
					}
				}
				msgs = append(msgs, turn.Msgs...)
				replayed++
				continue
			}
		case chat.RoleTool:
			if !calls[msg.ToolCallID] {
				idField := ".tool_call_id"
				if req.API == apiAnthropic {
					idField = ".content.tool_use_id"
				}
				return nil, nil, 0, badField(field+idField, "%q answers no call of an earlier assistant turn", msg.ToolCallID)
			}
		}
		msgs = append(msgs, msg)
	}
	return msgs, ids, replayed, nil
}

// remember keeps the turn the model wrote under the key of what the
// caller got, so that its return renders it from the exact text.
func (e *Engine) remember(m *Model, res agent.CaseResult, r Result) {
	last := res.Attempts[len(res.Attempts)-1]
	turn := Turn{Msgs: make([]chat.Message, 0, len(res.Retried)+1)}
	attempt := 0 // the failed attempts are Retried's assistant messages, in order
	for _, h := range res.Retried {
		if h.Role == chat.RoleAssistant {
			turn.keepIDs(len(turn.Msgs), res.Attempts[attempt])
			attempt++
		}
		turn.Msgs = append(turn.Msgs, detached(h.Message))
	}
	turn.keepIDs(len(turn.Msgs), last)
	turn.Msgs = append(turn.Msgs, detached(chat.Message{Role: chat.RoleAssistant, Content: last.Content, ToolCalls: r.Calls, Raw: last.Raw}))
	shown := chat.Message{Role: chat.RoleAssistant, Content: r.Text, ToolCalls: r.Calls}
	keys := []string{turnKey(m.Name, shown)}
	if len(r.Calls) == 0 && len(res.Attempts) > 1 {
		// A caller may keep only the last attempt's text.
		keys = append(keys, turnKey(m.Name, chat.Message{Role: chat.RoleAssistant, Content: agent.Answer(last.Events)}))
	}
	e.memory.Put(keys, turn)
}

// keepIDs keeps, for message i of the turn, the ids attempt a was
// generated as, if the backend returned them.
func (t *Turn) keepIDs(i int, a agent.Attempt) {
	if len(a.Tokens) == 0 {
		return
	}
	if t.IDs == nil {
		t.IDs = make([]agent.TurnIDs, cap(t.Msgs))
	}
	t.IDs[i] = agent.TurnIDs{IDs: slices.Clone(a.Tokens), Len: a.TokenText}
}

// detached is m with its text and calls copied: the parser hands out a
// call's name, raw text and arguments inside its arena's 16 KB blocks, and
// a remembered turn that kept one would keep the whole block (measured:
// about 17 KB a turn, 70 MB at the default 4,096 turns).
func detached(m chat.Message) chat.Message {
	m.Content, m.Reasoning, m.Raw = strings.Clone(m.Content), strings.Clone(m.Reasoning), strings.Clone(m.Raw)
	if len(m.ToolCalls) == 0 {
		return m
	}
	calls := make([]chat.ToolCall, len(m.ToolCalls))
	for i, c := range m.ToolCalls {
		c.Name, c.Raw = strings.Clone(c.Name), strings.Clone(c.Raw)
		c.Arguments = bytes.Clone(c.Arguments)
		c.Repairs = slices.Clone(c.Repairs)
		calls[i] = c
	}
	m.ToolCalls = calls
	return m
}

// checkWindow refuses a conversation whose prompt cannot fit the model's
// window, before any generation: a catalog of 10,000 tools is the
// caller's mistake, not the model's. Tokens are counted by the backend
// where it can, else estimated at four bytes a token (an underestimate
// for JSON, so nothing that fits is refused).
func (e *Engine) checkWindow(ctx context.Context, m *Model, msgs []chat.Message, tools []chat.Tool) (int, error) {
	if m.Window <= 0 {
		return 0, nil
	}
	tokens, err := e.countTokens(ctx, m, msgs, tools, m.Window/2)
	if err != nil {
		return 0, err
	}
	if tokens >= m.Window {
		field := "messages"
		if len(tools) > 0 {
			field = "tools"
		}
		return 0, badField(field, "the prompt needs about %d tokens with %d tools, more than the model's context window of %d", tokens, len(tools), m.Window)
	}
	return tokens, nil
}

// CountTokens is the size of the prompt a request renders to: counted by
// the backend where it can, else estimated.
func (e *Engine) CountTokens(ctx context.Context, req Request) (int, error) {
	m, err := e.Model(req.Model)
	if err != nil {
		return 0, err
	}
	if err := checkTools(req.Tools, req.Choice); err != nil {
		return 0, err
	}
	msgs, _, _, err := e.history(m, req)
	if err != nil {
		return 0, err
	}
	return e.countTokens(ctx, m, msgs, req.Tools, 0)
}

// countTokens renders the prompt and counts it: four bytes a token, or
// the backend's count once the estimate passes exactAbove (a request to
// the server).
func (e *Engine) countTokens(ctx context.Context, m *Model, msgs []chat.Message, tools []chat.Tool, exactAbove int) (int, error) {
	sys := agent.System{Tools: tools, Now: e.now}
	var hist []agent.Msg
	for i, msg := range msgs {
		if i == 0 && (msg.Role == chat.RoleSystem || msg.Role == chat.RoleDeveloper) {
			sys.Text = msg.Content
			continue
		}
		hist = append(hist, agent.Msg{Message: msg})
	}
	prompt, err := agent.ReplayPrompt(m.Renderer, sys, hist)
	if err != nil {
		return 0, badField("messages", "the conversation cannot be rendered with the model's template: %v", err)
	}
	tokens := len(prompt) / 4
	if tc, ok := m.Backend.(backend.TokenCounter); ok && tokens > exactAbove {
		if n, err := tc.CountTokens(ctx, m.upstream(), prompt); err == nil {
			tokens = n
		}
	}
	return tokens, nil
}

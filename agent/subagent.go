package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/toolharness/toolharness/chat"
)

// SubagentConfig configures the task tool: a sub-agent runs one task in an
// independent conversation with its own system prompt and a subset of the
// tools, and returns only its final text.
type SubagentConfig struct {
	// Tools are the sub-agent's tools (a subset of the main agent's).
	Tools Toolbox
	// SystemText replaces the sub-agent's default system text.
	SystemText string
	// MaxTurns bounds the sub-agent's generations (default 8).
	MaxTurns int
}

// taskTool builds the task tool of a session. Sub-agents cannot start
// sub-agents of their own.
func (s *Session) taskTool(sc SubagentConfig) LocalTool {
	return LocalTool{
		Tool: chat.Tool{
			Name:        "task",
			Description: "Hand a self-contained task to a sub-agent that works in its own conversation with read-only tools and returns only its final report.",
			Parameters:  json.RawMessage(`{"type":"object","properties":{"description":{"type":"string","description":"a short name for the task"},"prompt":{"type":"string","description":"everything the sub-agent needs to know to do the task"}},"required":["prompt"]}`),
		},
		Run: func(ctx context.Context, args map[string]any) (string, error) {
			prompt, _ := args["prompt"].(string)
			if strings.TrimSpace(prompt) == "" {
				return "", errors.New("the prompt is empty")
			}
			return s.runSubagent(ctx, sc, prompt)
		},
	}
}

func (s *Session) runSubagent(ctx context.Context, sc SubagentConfig, prompt string) (string, error) {
	text := sc.SystemText
	if text == "" {
		env := s.cfg.Env
		if env == (Env{}) {
			env = CaptureEnv(ctx, s.cfg.Model, s.cfg.Workspace, s.now(), noVCS)
		}
		var err error
		if text, err = SubagentText(env); err != nil {
			return "", err
		}
	}
	maxTurns := sc.MaxTurns
	if maxTurns <= 0 {
		maxTurns = 8
	}
	cfg := Config{
		Backend: s.cfg.Backend, Model: s.cfg.Model, Mode: s.cfg.Mode, Renderer: s.cfg.Renderer,
		Tools: sc.Tools, SystemText: text, Constrained: s.cfg.Constrained, RequireCall: false, ConstrainMaxString: s.cfg.ConstrainMaxString,
		MaxTurns: maxTurns, MaxRetries: s.cfg.MaxRetries, FaultRetries: s.cfg.FaultRetries,
		Options: s.cfg.Options, Clock: s.cfg.Clock,
		Hooks: Hooks{OnNotice: s.cfg.Hooks.OnNotice},
	}
	if s.trace != nil {
		cfg.Trace = s.trace
	}
	if s.cfg.Constrained && (sc.Tools == nil || len(sc.Tools.Core()) == 0) {
		cfg.Constrained = false
	}
	sub, err := New(ctx, cfg)
	if err != nil {
		return "", err
	}
	sub.depth = s.depth + 1
	sub.ids = s.ids
	ex, err := sub.Send(ctx, prompt)
	if err != nil {
		if errors.Is(err, ErrLimit) {
			return "", fmt.Errorf("the sub-agent stopped without an answer: %w", err)
		}
		return "", fmt.Errorf("the sub-agent failed: %w", err)
	}
	if ex.Answer == "" {
		return "(the sub-agent gave an empty answer)", nil
	}
	return ex.Answer, nil
}

func noVCS(context.Context, string, string, ...string) (string, error) {
	return "", errors.New("no version control for sub-agents")
}

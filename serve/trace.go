package serve

import (
	"sync"
	"time"

	"github.com/toolharness/toolharness/agent"
	"github.com/toolharness/toolharness/chat"
)

// traceLog writes one JSON line per request (serve --trace FILE).
type traceLog struct {
	mu sync.Mutex
	w  interface{ Write([]byte) (int, error) }
}

type traceAttempt struct {
	Raw        string          `json:"raw"`
	Calls      []chat.ToolCall `json:"calls,omitempty"`
	Invalid    []agent.Mistake `json:"invalid,omitempty"`
	Problem    string          `json:"problem,omitempty"`
	StopReason string          `json:"stop_reason,omitempty"`
	Prompt     int             `json:"prompt_tokens"`
	Cached     *int            `json:"cached_tokens,omitempty"`
	Generated  int             `json:"generated_tokens"`
	PromptLen  int             `json:"prompt_bytes"`
}

type traceRecord struct {
	Type     string          `json:"type"`
	Time     time.Time       `json:"time"`
	API      string          `json:"api"`
	Model    string          `json:"model"`
	Tools    int             `json:"tools"`
	Messages int             `json:"messages"`
	Replayed int             `json:"replayed_turns"`
	Attempts []traceAttempt  `json:"attempts"`
	Calls    []chat.ToolCall `json:"calls,omitempty"`
	Finish   Finish          `json:"finish"`
	Invalid  string          `json:"invalid,omitempty"`
}

func (e *Engine) traceTurn(req Request, r Result, res agent.CaseResult) {
	e.metrics.replayedTurns(req.API, r.Model, r.Replayed)
	if e.trace == nil {
		return
	}
	rec := traceRecord{Type: "request", Time: time.Now().UTC(), API: req.API, Model: r.Model, Tools: len(req.Tools), Messages: len(req.Messages),
		Replayed: r.Replayed, Calls: r.Calls, Finish: r.Finish, Invalid: r.Invalid}
	for _, a := range res.Attempts {
		ta := traceAttempt{Raw: a.Raw, Calls: a.Calls, Invalid: a.Invalid, Problem: a.Problem, StopReason: a.StopReason,
			Prompt: a.Usage.PromptTokens, Generated: a.Usage.GeneratedTokens, PromptLen: len(a.Prompt)}
		if a.Usage.CachedKnown {
			c := a.Usage.CachedTokens
			ta.Cached = &c
		}
		rec.Attempts = append(rec.Attempts, ta)
	}
	data, err := chat.Marshal(rec)
	if err != nil {
		e.log.Warn("serve: trace", "err", err)
		return
	}
	e.trace.mu.Lock()
	defer e.trace.mu.Unlock()
	if _, err := e.trace.w.Write(append(data, '\n')); err != nil {
		e.log.Warn("serve: trace", "err", err)
	}
}

// Package agent is the tool-use loop: one session's fixed system block and
// growing history, generation with the family's stop tokens, streaming
// parsing, validation and execution of calls, retries, reminders, skills,
// sub-agents, the KV-cache prefix check and the trace.
//
// It talks to model servers only through package backend, renders through
// package render (and templates), parses through package parse and
// validates and runs tools through package registry. The small interfaces
// it consumes (Renderer, Transcript, StreamParser, Toolbox) are defined
// here, where they are used; NewRenderer and RegistryTools adapt the real
// packages to them.
//
// # A session
//
//	r, _ := agent.NewRenderer(agent.RendererOptions{Template: "qwen2.5"}) // format: the family's
//	s, err := agent.New(ctx, agent.Config{
//		Backend: b, Model: "qwen2.5:7b", Mode: backend.ModeRaw, Renderer: r,
//		Tools:    agent.RegistryTools(reg),
//		MaxTurns: 10, MaxRetries: 3,
//		Skills:   skills, Subagent: &agent.SubagentConfig{Tools: readOnly},
//		Trace:    traceFile, Hooks: agent.Hooks{OnText: …, OnCall: …, OnResult: …},
//	})
//	ex, err := s.Send(ctx, "summarise README.md")
//	// ex.Answer, ex.Stop (answered | max_turns | retries | context | length | error), ex.Steps
//
// The system block is assembled once, in New: identity and rules (embedded
// prompt files rendered with text/template and the injected clock), the
// environment (OS, shell, model, workspace), a version-control snapshot
// (branch, status, recent commits) and the core tool catalog. Everything
// that changes later (project instructions, the skills list, deferred tool
// names) travels in <system-reminder> blocks at the start of the user
// message it first applies to, and stays there. In raw mode prompts come
// from render.Session, so every prompt extends the previous prompt plus the
// model's raw output byte for byte; the loop checks that on every
// generation and reports a divergence with its byte offset
// (Step.Divergence, Hooks.OnNotice, the trace), and reports a server that
// counts fewer prompt tokens than before although the prompt grew
// (Step.Shrunk: the server truncated it).
//
// On a backend that takes token ids in prompts (Capabilities().TokenPrompt,
// llama.cpp) each assistant turn's generated ids are kept with the turn
// (Msg.Tokens) and later prompts carry them as Request.TokenSpans, so the
// server's cache matches token for token even where the model's ids would
// not re-tokenise to themselves (tokens.go); Config.TextHistory turns this
// off. Step.Reuse reports the server's reused and new prompt tokens.
//
// Send runs one user message to completion: generate, parse while
// streaming, validate and execute each call as soon as it closes, append
// the results, repeat until the model answers without a call or a limit is
// hit. A limit is a *LimitError (errors.Is(err, ErrLimit)); the session
// stays usable after it. A parse or validation error goes back to the model
// as the call's result (the model-facing text) and counts against the
// retry policy (registry.RetryPolicy). A call runs at most once, whatever
// is retried: call IDs are unique across a session and its sub-agents, and
// a generation is retried after a fault only when nothing of it arrived.
//
// # One benchmark case
//
// The benchmark drives single cases without executing tools:
//
//	res, err := agent.RunCase(ctx, b, agent.Case{
//		Model: "m", Messages: msgs, Tools: tools,
//		Template: "qwen2.5", Format: "hermes", Mode: backend.ModeRaw,
//		Constrained: false, RequireCall: false, Strict: false, MaxRetries: 2, Options: backend.Options{…},
//	})
//	for _, a := range res.Attempts {
//		a.Raw, a.Content, a.Calls, a.ParseErrors, a.Invalid, a.Usage, a.TTFT, a.Duration, a.OK()
//	}
//	res.Retries, res.OK
//
// Each attempt is one generation; an attempt with parse errors or invalid
// calls is followed (while the budget lasts) by another one that sees the
// model-facing errors as results of the failed calls. RunCase stops at the
// first attempt without errors (a valid call or a plain answer); judging
// the calls against expectations is the benchmark's job. A constrained
// case's schema keeps the answer alternative (restraint cases) unless
// Case.RequireCall is set: the benchmark sets it for cases that expect
// calls, so their every attempt is a call.
//
// # Constrained calls
//
// With Config.Constrained (CLI --constrained) and a backend whose
// Capabilities().Constrain is true, every generation carries a JSON Schema
// (CallSchema): either one tool call {"name": <const>, "arguments": <that
// tool's schema>} or a final {"answer": "…"}. With RequireCall the first
// generation after a user message may only be a call. The raw JSON the
// model wrote is the assistant turn, so the prefix stays stable.
//
// # Trace
//
// Config.Trace receives JSON lines: "user" (the message as sent, with its
// reminders), one "step" per generation (prompt hash and length, raw
// output, content, answer and reasoning, events, calls, results, the IDs
// that ran, mistakes, attempts, fault, divergence, reuse, usage, timings)
// and "exchange" (how the message ended). Sub-agents write to the same
// trace with "agent":"sub1".
//
// # The answer
//
// Text events carry the parse.Part of the reply they are. Exchange.Answer
// (and Step.Answer, Answer of the events) is the content alone, without a
// leading <think> block or harmony's analysis channel and markup;
// Exchange.Reasoning holds the reasoning. Hooks.OnText streams the answer,
// Hooks.OnReasoning the reasoning. Only what is shown changes: the history
// keeps the model's exact output (Message.Raw, and Content with every part),
// so the next prompt still extends this one byte for byte.
package agent

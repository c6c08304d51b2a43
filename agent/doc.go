// Package agent is the tool-use loop: one session's fixed system block and
// growing history, generation with the format's stop sequences, streaming
// parsing, validation and execution of calls, retries, reminders, skills,
// sub-agents, the KV-cache prefix check and the trace.
//
// It talks to model servers only through package backend, renders through
// package render, parses through package parse and validates and runs
// tools through package registry. The small interfaces it consumes
// (Renderer, StreamParser, Toolbox) are defined here, where they are used.
//
// # A session
//
//	s, err := agent.New(ctx, agent.Config{
//		Backend: b, Model: "qwen2.5:7b", Mode: backend.ModeRaw,
//		Renderer: r,  // agent.NewRenderer(template, format, verbatim)
//		Tools:    tb, // a Toolbox, e.g. agent.RegistryTools(reg)
//		MaxTurns: 10, MaxRetries: 3,
//		Trace:    traceFile, Hooks: agent.Hooks{OnText: …, OnCall: …},
//	})
//	ex, err := s.Send(ctx, "summarise README.md")
//	// ex.Answer, ex.Stop (answered | max_turns | retries | …), ex.Steps
//
// The system block is assembled once, in New: identity and rules (embedded
// prompt files rendered with text/template and an injected clock), the
// environment (OS, shell, model, workspace), a version-control snapshot
// (branch, status, recent commits) and the core tool catalog. Everything
// that changes later (project instructions, the skills list, deferred tool
// names, per-turn notes) travels in <system-reminder> blocks inside the
// newest user message, so every prompt of a session extends the previous
// prompt plus the model's raw output byte for byte. The loop checks that
// every step and reports a divergence with its byte offset (Step.Divergence,
// Hooks.OnNotice, the trace).
//
// Send runs one user message to completion: generate, parse while
// streaming, validate and execute each call as soon as it closes, append
// the results, repeat until the model answers without a call or a limit is
// hit. A limit is an *LimitError (errors.Is(err, ErrLimit)); the session
// stays usable after it. A parse or validation error goes back to the model
// as the call's result (the model-facing text) and counts against the retry
// budget. A call runs at most once, whatever is retried.
//
// # One benchmark case
//
// The benchmark drives single cases without executing tools:
//
//	res, err := agent.RunCase(ctx, b, agent.Case{
//		Model: "m", Messages: msgs, Tools: tools,
//		Template: "qwen2.5", Format: "hermes", Mode: backend.ModeRaw,
//		Constrained: false, MaxRetries: 2, Options: backend.Options{…},
//	})
//	for _, a := range res.Attempts {
//		a.Raw, a.Content, a.Calls, a.ParseErrors, a.Invalid, a.Usage, a.TTFT, a.Duration
//	}
//	res.Retries, res.OK
//
// Each attempt is one generation; an attempt with parse errors or invalid
// calls is followed (while the budget lasts) by another one that sees the
// model-facing errors as results of the failed calls. RunCase stops at the
// first attempt without errors (a valid call or a plain answer); judging
// the calls against expectations is the benchmark's job.
//
// # Constrained calls
//
// With Config.Constrained (CLI --constrained) and a backend whose
// Capabilities().Constrain is true, every generation carries a JSON Schema
// (see CallSchema): either one tool call {"name": <enum>, "arguments":
// <that tool's schema>} or a final {"answer": "…"}. With RequireCall the
// first generation after a user message may only be a call. The raw JSON the
// model wrote is the assistant turn, so the prefix stays stable.
//
// # Trace
//
// Config.Trace receives one JSON line per step (see TraceRecord): prompt
// hash and length, raw output, events, calls, results, errors, retries,
// usage, timings and any prefix divergence.
package agent

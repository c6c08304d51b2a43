// Package agent is the tool-use loop: one session's fixed system block and
// growing history, generation with the format's stop sequences, streaming
// parsing, validation and execution of calls, retries, reminders, skills,
// sub-agents, the KV-cache prefix check and the trace.
//
// It talks to model servers only through package backend.
package agent

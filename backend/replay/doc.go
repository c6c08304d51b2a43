// Package replay records every exchange a session has with a backend to a
// JSONL file while passing it through, and replays such a file as a
// backend, deterministically and byte for byte, for tests, demos and the
// benchmark's offline mode.
//
// A recording holds, per exchange: the request (its grammar and token
// spans included), each streamed chunk as the callback received it (the
// boundaries kept), the response with its usage figures, generated token
// ids, stop sequence and notes, and the
// error with everything callers branch on (its backend.Error kind,
// status, message, consumed flag, and its exact text).
// ContextSize and CountTokens calls are recorded too. The header line
// carries the format version (Version, now 4; recordings of versions 1
// to 3, made before grammars, stop sequences and notes, before the
// token-exact fields, and before server mode's tools and calls, are
// still read).
//
// Replay matches calls to the recording in order and checks each request
// for equality; a request that differs is a *MismatchError naming the first
// differing field (and the byte offset, for text). Concurrent calls are
// matched in the order they reach the replayer, so replay a session whose
// calls happen in a deterministic order.
package replay

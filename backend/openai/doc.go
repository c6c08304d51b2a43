// Package openai is the backend for OpenAI-compatible servers (vLLM,
// SGLang, LM Studio, llama.cpp's server, Ollama's /v1): raw mode streams
// /v1/completions, chat mode /v1/chat/completions, both as server-sent
// events with stream_options.include_usage; server mode sends the tools
// in /v1/chat/completions' tools field, streamed to a caller with a
// callback, and returns the calls the server's parser found (server.go).
//
// It sends stop, max_tokens, temperature, top_p, top_k (an extension most
// local servers take), seed, an optional API key, and a JSON-Schema
// constraint as response_format {"type":"json_schema"}. Usage comes from
// the final usage event. The reused prompt prefix (Usage.CachedTokens) is
// prompt_tokens_details.cached_tokens where the server reports it (vLLM
// with prefix caching and --enable-prompt-tokens-details; llama-server
// since PR #19361, where it equals timings.cache_n), else llama-server's
// timings.cache_n; Ollama's /v1 reports neither, so reuse stays unknown
// (CachedKnown false). prompt_tokens is the whole prompt, cached part
// included, on all of them.
// The API has no standard way to ask a model's context window, so this
// backend is not a backend.ContextSizer.
//
// Servers differ in ways the wire does not show; Quirks says how
// (OllamaQuirks for Ollama: /v1/completions applies the chat template, so
// no raw mode, and ignores response_format). A Format the endpoint would
// ignore is refused as KindUnsupported instead of running unconstrained,
// and so is a GBNF grammar (Request.Grammar): the API has no field for it.
// Response.StopSequence is read from vLLM's stop_reason where a server
// sends it; Response.Notes says that developer messages went as system.
//
// Faults are *backend.Error: unreachable, a 4xx/5xx with the server's own
// message, a stream that ends without finish_reason or [DONE] (cut), no
// data within Config.StallTimeout (stalled), cancellation; retries with
// backoff only while nothing was delivered (the watchdog and the retry
// loop are backend/internal/transport's, shared with the other backends).
package openai

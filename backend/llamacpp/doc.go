// Package llamacpp is the backend for the llama.cpp HTTP server
// (llama-server) speaking its native API: /completion for generation,
// /tokenize for exact token counts, /detokenize to check generated ids,
// /props for the model's template, BOS/EOS and context window,
// /apply-template for chat mode and templates verify, /slots and /health,
// and /v1/chat/completions with tools for server mode (server.go).
//
// It owns what is particular to that server: the SSE stream of
// /completion (no [DONE]; complete at the event with stop=true), cache_prompt,
// stop_type/stopping_word/truncated (stopping_word fills
// Response.StopSequence), grammar (Request.Grammar) and json_schema
// (Request.Format) constraints, the server's error shape
// {"error":{"code","message","type"}} (also as a mid-stream event, data:
// or the older error: line), and BOS handling. The stall watchdog, retries
// and error-body reading come from backend/internal/transport, shared with
// the other HTTP backends.
//
// Cache figures, as the server's source defines them: tokens_evaluated is
// the whole prompt (Usage.PromptTokens), timings.cache_n the prefix reused
// from the slot's cache (Usage.CachedTokens) and timings.prompt_n the
// tokens evaluated anew. tokens_cached is every token the slot holds after
// the request, prompt and generated: not reuse, kept as Usage.SlotTokens.
//
// Token-exact prompts: Request.TokenSpans go as a mixed array of strings
// and ids (one prompt; ids verbatim, a BOS only before a leading string),
// and with Request.ReturnTokens the generated ids come back in
// Response.Tokens once /detokenize confirms they stand for exactly the
// text (prompt.go).
//
// BOS: the server inserts a BOS token in front of a string prompt when the
// model's tokenizer.ggml.add_bos_token is true. A prompt rendered from an
// official chat template usually starts with the BOS text already
// ("<|begin_of_text|>", "<s>"), which the server parses as the special
// token, so the model would see two. The client learns the server's BOS
// once (POST /tokenize of "" with add_special and with_pieces) and strips
// one leading BOS text from the prompt when the server adds its own,
// saying so in Response.Notes.
//
// Before each request the prompt as it will be sent is counted with
// /tokenize and compared with n_ctx from /props; a prompt that would not
// fit (with MaxTokens room when set) is refused with
// backend.KindContextOverflow instead of being refused or shifted by the
// server. The tests run against a real llama-server
// (internal/llamacpptest); package llamacpptest is a fake one kept for the
// faults a real server cannot be made to produce and for unit tests that
// must run without one (its doc says which).
package llamacpp

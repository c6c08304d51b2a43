// Package llamacpp is the backend for the llama.cpp HTTP server
// (llama-server) speaking its native API: /completion for generation,
// /tokenize for exact token counts, /props for the context window,
// /apply-template for chat mode and /health.
//
// It owns what is particular to that server: the SSE stream of
// /completion, cache_prompt and the cached-prefix figures
// (timings.cache_n, tokens_cached), stop_type/stopping_word/truncated
// (stopping_word fills Response.StopSequence), grammar (Request.Grammar)
// and json_schema (Request.Format) constraints, the server's error shape
// {"error":{"code","message","type"}}, and BOS handling. The stall
// watchdog, retries and error-body reading come from
// backend/internal/transport, shared with the other HTTP backends.
//
// BOS: the server inserts a BOS token in front of a string prompt when the
// model's tokenizer.ggml.add_bos_token is true. A prompt rendered from an
// official chat template usually starts with the BOS text already
// ("<|begin_of_text|>", "<s>"), which the server parses as the special
// token, so the model would see two. The client learns the server's BOS
// once (POST /tokenize of "" with add_special and with_pieces) and strips
// one leading BOS text from the prompt when the server adds its own,
// saying so in Response.Notes. The prompt stays a string, so cache_prompt
// keeps matching across turns.
//
// Before each request the prompt is counted with /tokenize and compared
// with n_ctx from /props; a prompt that would not fit (with MaxTokens
// room when set) is refused with backend.KindContextOverflow instead of
// being shifted out of the context by the server.
package llamacpp

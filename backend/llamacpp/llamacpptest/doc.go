// Package llamacpptest is a fake llama-server for the faults a real one
// cannot be made to produce on demand (a cut stream, a stall, a 500 or an
// error event in the middle of a stream, an older server's shapes) and
// for fast unit tests. Everything a real server can do is tested against
// one: internal/llamacpptest starts llama-server (`make llamacpp`) on a
// model with a real tokenizer.
//
// It serves /completion
// with string, token-id and mixed prompts, streamed or not, return_tokens,
// /tokenize (with pieces), /detokenize, /apply-template, /props and
// /health, over a deterministic toy tokenizer and one cache slot.
//
// It is not llama.cpp. It keeps the parts of the server's behaviour the
// harness depends on, as llamacpp-responses.md describes them from the
// server's source: a string prompt gets a BOS, ids never do, a mixed
// array gets one only when it starts with a string; timings.cache_n is
// honestly the longest common token prefix of the new prompt and what the
// slot holds (the previous prompt and all generated tokens but the last),
// at most the prompt length minus one; tokens_cached is what the slot
// holds afterwards.
//
// The "model" answers from a script of token-id replies, so a test can
// make it generate ids that re-tokenise differently from their text
// (Bytes spells text one byte per token, where the tokenizer would merge),
// which is what real BPE models do at times and what loses KV-cache reuse
// when history is sent back as text.
package llamacpptest

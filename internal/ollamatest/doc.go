// Package ollamatest runs a real Ollama server (v0.6.5, built by
// `make ollama`) serving a tiny random-weight model, for end-to-end tests.
// Tests that talk to a model talk to this server, never to a mock.
//
// # Using it
//
// One server shared by the tests of a package (started on first use, so
// unit-test runs that skip TestE2E never start it):
//
//	var tiny ollamatest.Lazy
//
//	func TestMain(m *testing.M) {
//		code := m.Run()
//		tiny.Close()
//		os.Exit(code)
//	}
//
//	func TestE2ESomething(t *testing.T) {
//		srv := tiny.Get(t)   // *ollamatest.Server, fails t if it cannot start
//		// srv.URL   "http://127.0.0.1:PORT" (Ollama API, and OpenAI API under /v1)
//		// srv.Model "toolharness-tiny:xxxxxxxx"
//		// srv.Client() *api.Client
//	}
//
// A server of the test's own (fresh KV cache, readable log, can be killed;
// closed when the test ends; about 0.5 s to start):
//
//	srv := ollamatest.Start(t, ollamatest.WithOwnProcess())
//	mark := srv.Mark()
//	… requests …
//	slots := srv.WaitCacheSlots(t, mark, 2) // one CacheSlot per request: Used, Remaining, Prompt
//	srv.Kill()    // SIGKILL server and runner, as a crash would
//	srv.Restart() // same URL and model again
//
// srv.BrokenModel(t) registers a copy of the model whose template fails at
// execution: /api/chat and /v1 requests on it get a real HTTP 500 with the
// server's message.
//
// Several servers can run at once (each Start/New is independent); the
// benchmark's two-endpoint tests start two. New(opts...) is the variant
// for TestMain and non-test code; its caller must Close the server.
//
// # Prerequisites and environment
//
//   - TOOLHARNESS_OLLAMA_BIN: the ollama binary (the Makefile sets it);
//     else ~/.cache/toolharness/ollama/bin/ollama (CacheDir); else ollama on PATH.
//     Missing: the test fails with "run `make ollama`" — never skips.
//   - TOOLHARNESS_OLLAMA_HOST: use that running server instead of starting
//     one; the tiny model is still created there through the API. Such a
//     server has no log and cannot be killed: tests that need either pass
//     WithOwnProcess() and always get a server of their own.
//
// A started server listens on a free loopback port, keeps its models and
// home in a private temp dir (removed by Close), runs with OLLAMA_DEBUG=1,
// OLLAMA_NUM_PARALLEL=1 and OLLAMA_KEEP_ALIVE=24h (WithEnv overrides), and
// its stdout/stderr (the runner's log included) is captured: Log,
// LogSince(mark), and the log tail is printed when a test using Start
// fails. Before New returns, the model is loaded (WithoutWarmup skips it).
//
// # The tiny model
//
// WithSpec(VocabSpec(path)) serves instead a model with a real tokenizer
// (VocabFile("qwen2"): llama.cpp's vocabulary files, unpacked by `make
// llamacpp`), so that KV-cache reuse is measured on real BPE: merges
// across what the harness wrote and what the model wrote, special tokens.
// Its free output is printable ASCII too. The byte model below stays for
// tests that need one token per byte.
//
// WriteModel writes a llama-architecture GGUF (DefaultSpec: 2 layers,
// 64-dim embeddings, about 430 KB of F32 random weights) with Ollama's own
// GGUF writer (github.com/ollama/ollama/fs/ggml). Its vocabulary is GPT-2
// byte-level BPE with no merges — 256 byte tokens (id = byte value) — plus
// the control tokens <|endoftext|> (256, BOS), <|im_start|> (257) and
// <|im_end|> (258, EOS). So:
//
//   - every byte of a prompt is one token and every control token one
//     token: prompt_eval_count is exactly countable with TokenCount, and
//     generated text re-tokenizes to the same ids, so KV-cache
//     prefix reuse is exact across turns;
//   - a constant residual dimension drives the logit of every token but
//     printable ASCII and newline far down: output is always ASCII, and the
//     model never emits a control token or EOS by itself. Bound every
//     request with num_predict / max tokens or a stop sequence. With a JSON
//     Schema in `format`, the grammar forces a schema-valid object, then
//     EOS (done_reason "stop");
//   - it is registered with the ChatML TEMPLATE (ChatMLTemplate) and the
//     stop parameter <|im_end|>, so /api/chat and /v1/chat/completions work;
//   - it runs with num_thread 1: two llama.cpp threads spin at a barrier
//     after every op, and on a machine busy with other tests that made the
//     e2e suites of this package and the backends take 6 min instead of
//     24 s (measured at load average ~15 on 2 cores);
//   - it declares context_length 8192 (ModelSpec.ContextLength) and is
//     registered with num_ctx NumCtx(spec) = 8192, the value backend/ollama
//     uses for it whatever the prompt (every other num_ctx makes Ollama
//     reload the model). ModelSpec.AddBOS makes the
//     tokenizer prepend <|endoftext|> to every raw prompt by itself;
//   - WithParameters(map[string]any{"num_ctx": 32768}) registers it with
//     other parameters (over these defaults) and under a name of its own.
//     That is how a /v1 test gets a larger context: /v1 takes no num_ctx
//     per request, and Ollama v0.6.5 ignores OLLAMA_CONTEXT_LENGTH.
//
// Ollama's prompt_eval_count counts the whole prompt, cached or not; the
// only view of KV-cache reuse is the runner's debug line, parsed by
// CacheSlots:
//
//	msg="loading cache slot" id=0 cache=52 prompt=15 used=13 remaining=2
//
// After a request with prompt P that generated G tokens, the slot holds
// P+G-1 tokens (the last sampled token is never decoded).
//
// The TestE2E tests of this package are the project's foundation checks:
// raw streaming through github.com/ollama/ollama/api, a schema-constrained
// tool call, prefix-cache reuse read from the log, two servers with a kill
// and restart.
package ollamatest

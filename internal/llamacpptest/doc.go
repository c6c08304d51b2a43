// Package llamacpptest runs a real llama.cpp server (llama-server, built by
// `make llamacpp`) serving a tiny random-weight model with a real
// tokenizer, for end-to-end tests, and scripts what that model writes
// with grammars.
//
//	srv := llamacpptest.Start(t)                    // qwen2 vocabulary, closed when t ends
//	srv := llamacpptest.Start(t, llamacpptest.WithVocab("llama-bpe"),
//		llamacpptest.WithChatTemplate(tmpl), llamacpptest.WithArgs("--chat-template-file", f))
//	// srv.URL "http://127.0.0.1:PORT", srv.Log() the server's output
//
// The model is ollamatest.VocabSpec over llama.cpp's own vocabulary file
// (models/ggml-vocab-NAME.gguf in the source tree `make llamacpp`
// unpacks): tokens, merges, pre-tokenizer and special tokens are the real
// model's, the weights random. Left alone it writes printable ASCII and
// never stops by itself; Exactly makes it write a given text, token by
// token as the model chooses, and then stop:
//
//	req.Grammar = llamacpptest.Exactly(`<tool_call>{"name": "f"}</tool_call>`)
//	b := llamacpptest.Scripted(client, out1, out2, …) // one grammar per request, in order
//
// The server listens on a free loopback port with one slot (-np 1), one
// thread, an 8192-token window (WithContext) and no host-memory prompt
// cache (--cache-ram 0), so timings.cache_n is what the slot itself
// reused. The binary is $TOOLHARNESS_LLAMACPP_DIR/bin/llama-server, else
// the one under ollamatest.CacheDir(); a missing binary or vocabulary
// fails the test with "run `make llamacpp`", never skips it.
package llamacpptest

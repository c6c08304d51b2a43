// Package llmtools gives any model prompted tool calling behind
// langchaingo's llms.Model interface.
//
// langchaingo's own Ollama provider ignores llms.WithTools. A *Model from
// this package accepts it: the tools are rendered as a text catalog into
// the prompt (package render, through agent.Renderer), the model's raw text
// is parsed while it streams (package parse), and the calls come back as
// ToolCalls of the ContentResponse, exactly as a provider with native tool
// calling returns them. Streaming funcs receive only the content text, never
// the call markup.
//
//	m, _ := llmtools.New(ollamaBackend, llmtools.Options{Model: "qwen2.5:7b", Template: "qwen2.5"})
//	resp, err := m.GenerateContent(ctx, msgs,
//		llms.WithTools(tools),
//		llms.WithStreamingFunc(func(ctx context.Context, b []byte) error { … }))
//	for _, tc := range resp.Choices[0].ToolCalls { … tc.FunctionCall.Name, .Arguments … }
//
// Any backend.Backend generates (Ollama, llama.cpp, OpenAI-compatible); to
// add tool calling to another llms.Model (langchaingo's own Ollama
// provider, say), use Wrap, which generates through backend/langchain. The layers stay clean: backends know nothing of templates or
// parsers; this package sits above backend, render and parse.
//
// The exact raw text of each answer is remembered by call ID, so when the
// caller sends the AI message back with its ToolCalls, the turn is
// re-rendered byte for byte and the server can reuse its KV cache.
// Malformed calls are never silently dropped: GenerationInfo["tool_call_errors"]
// lists them and GenerationInfo["raw"] holds the text as the model wrote it.
//
// llms.WithToolChoice("required") (or a specific function) constrains the
// output to a JSON Schema of the calls (agent.CallSchema) where the backend
// can constrain, so calls cannot be malformed; Options.Constrain does so
// for every request with tools (calls or a final answer); "none" leaves the
// tools out. Temperature is passed as given (langchaingo's zero value
// means greedy sampling, as with its own providers).
package llmtools

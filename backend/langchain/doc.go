// Package langchain adapts any langchaingo model (llms.Model from
// github.com/tmc/langchaingo) into a backend.Backend, so every provider
// langchaingo has can serve the harness.
//
// Chat mode sends the messages through GenerateContent with
// llms.WithStreamingFunc; an assistant turn carries the exact text the
// model produced (chat.Message.Raw) and tool calls travel only inside that
// text, never as langchaingo tool structures. Raw mode sends the prompt as
// one human message through the same GenerateContent call — exactly what
// llms.GenerateFromSinglePrompt does, but keeping the stream and the
// response's GenerationInfo (usage). langchaingo has no raw-completion
// call, so a chat provider (Ollama's /api/chat, OpenAI chat) still wraps
// that message in its own template, so Capabilities reports Raw only when
// Config.RawCompletion says the provider completes prompts verbatim; use a
// backend that speaks the server's raw API where the harness must control
// every token.
//
// Only this direction lives here. The other one, toolharness exposing an
// llms.Model with prompted tool calling, sits above render and parse.
package langchain

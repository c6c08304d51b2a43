// Package serve puts the agent core behind the APIs agents already speak:
// OpenAI's /v1/chat/completions, Anthropic's /v1/messages and Ollama's
// /api/chat, each streaming and not.
//
// One request is one model turn (Engine.Turn): the front door decodes the
// caller's conversation, tools and options into a Request; the engine runs
// it as one agent.Case in raw mode (the model's own template renders the
// catalog, the format's parser reads the streamed text, package registry
// validates the calls against the request's schemas, and an invalid call
// is retried inside the request with the model-facing error, bounded by
// Model.Retries); the front door writes the Result in the caller's shape.
// The server never runs a tool. Calls that stay invalid reach no client:
// the reply is then the model's text, finish reason stop, and the reason
// in the X-Toolharness-Invalid-Call header (a trailer when streamed), the
// log and the metrics.
//
// Text streams as the parser makes it certain; calls are sent once the
// generation that wrote them is validated, each with an id the server
// minted. Memory keeps, for every assistant turn produced, the messages
// the model really wrote (its exact raw text, and any attempt a retry hid)
// and, on llama.cpp, the token ids it wrote them in, under the key of what
// the caller got back (the call ids, or the answer text), so a returning
// history is rendered byte for byte as before (agent.ReplayPrompt), sent
// token for token where ids are known, and the model server reuses its
// cache.
//
// Server adds what an exposed endpoint needs: an API key checked in
// constant time, a body cap, a deadline per request, a bound on concurrent
// requests (429 and Retry-After past it), /healthz and Prometheus /metrics.
package serve

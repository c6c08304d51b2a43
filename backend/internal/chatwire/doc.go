// Package chatwire turns a conversation into the text-only messages that
// the backends speaking a server's chat endpoint send (backend/ollama
// /api/chat, backend/openai /chat/completions), so that both send the
// same thing for the same conversation:
//
//   - an assistant turn travels as the exact text the model wrote
//     (chat.Message.Raw), its tool calls inside that text; one with tool
//     calls but no text cannot be sent and is refused;
//   - tools never go in a server's tools field: the catalog is already
//     text in the messages;
//   - the developer role becomes system, which local servers' chat
//     templates know, and a note says so (backend.Response.Notes).
//
// Server mode (backend.ModeServer) is the other way round, and
// ConvertServer, OpenAIMessages and Completion serve it: the tools go in
// the API's tools field, an assistant turn travels as its content and
// structured calls, and the server's own parser returns the calls.
package chatwire

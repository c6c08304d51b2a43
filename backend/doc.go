// Package backend is the small interface between toolharness and model
// servers, with one sub-package per kind of server (ollama, llamacpp,
// openai, langchain, replay).
//
// A backend streams a completion of a raw prompt (raw mode) or of a message
// list (chat mode), honours stop sequences, sampling options, an optional
// JSON-Schema constraint and cancellation, and reports usage figures
// (Usage.CachedTokens is always the reused prompt prefix, in each server's
// own figure, or unknown). A backend with Capabilities().TokenPrompt also
// takes known token ids for parts of a raw prompt (Request.TokenSpans) and
// returns the generated ids (Response.Tokens). It
// knows nothing of templates or tool-call formats: in chat mode the tool
// catalog already travels as text inside the messages.
//
// Failures are *Error values whose Kind callers branch on with errors.Is
// against the sentinel errors of this package.
package backend

// Package ollamatmpl renders an Ollama model's own Go template (the
// TEMPLATE of its Modelfile) in-process with Ollama's template package,
// exactly as the server renders it for /api/chat. toolharness uses it when
// a model's Hugging Face chat template is not available: Ollama's
// /api/show drops tokenizer.chat_template from model_info, and a remote
// server's GGUF cannot be read. FamilyOf makes a templates.Family of it.
//
// It is apart from package templates so that templates stays free of
// Ollama's client types.
package ollamatmpl

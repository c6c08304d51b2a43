// Package source loads a model's own chat template from where users have
// it, with the special tokens it is rendered with:
//
//   - a .jinja file (or standard input);
//   - a Hugging Face tokenizer_config.json: chat_template as a string or a
//     named list (tool_use when tools are offered, else default),
//     bos_token / eos_token as strings or {"content": …} objects;
//   - a Hugging Face model folder: chat_template.jinja beside
//     tokenizer_config.json (transformers' newer layout, which wins), else
//     the config's chat_template, else chat_template.json;
//   - a .gguf file: tokenizer.chat_template (or tokenizer.chat_template.NAME
//     for a named template), the BOS and EOS texts from
//     tokenizer.ggml.bos_token_id / eos_token_id and tokenizer.ggml.tokens;
//   - an Ollama model: its GGUF blob, found through the local manifest
//     ($OLLAMA_MODELS, default ~/.ollama/models).
//
// The GGUF reader is its own: it reads only the metadata, and checks every
// length against the bytes left in the file, so a truncated or corrupt
// file is a one-line error (Ollama's fs/ggml decoder allocates whatever
// length a corrupt header claims, and reads the tensor index too).
//
// A Template compiles to a templates.Jinja, and becomes a templates.Family
// with Family, so every command renders a loaded template the same way.
package source

// Package ollama is the backend for Ollama servers, through the official
// client github.com/ollama/ollama/api (never hand-rolled HTTP).
//
// Raw mode sends the rendered prompt to /api/generate with raw=true; chat
// mode sends the messages to /api/chat, where the model's own template
// wraps them (tools are never sent in the tools field: the catalog is
// already text); server mode sends the tools in /api/chat's tools field
// and returns the calls Ollama's parser found (server.go). Stop sequences, sampling options and a JSON-Schema
// constraint (`format`) map onto Ollama's request fields.
//
// What the package owns beyond the wire:
//   - num_ctx is always set explicitly (Ollama's small default truncates
//     the prompt from the front without a word) and never changes within a
//     session (each change reloads the model and drops its cache): the
//     caller's Options.NumCtx, else the model's window capped at
//     Config.MaxNumCtx (DefaultMaxNumCtx, 16384). A prompt that would not
//     fit is refused with a KindContextOverflow error before sending; see
//     budget.go for how tokens are bounded without a tokenizer.
//   - the model's context window (/api/show, <arch>.context_length).
//   - BOS: Ollama v0.6.5 tokenizes raw prompts with add_special and
//     parse_special, so a model whose tokenizer adds BOS gets it twice when
//     the rendered prompt carries one too; Generate strips the rendered BOS
//     for such models and says so in Response.Notes (as it says that a
//     developer message went as system).
//   - Request.Grammar: Ollama takes no GBNF grammar, so a request with one
//     is refused with KindUnsupported (Format constrains instead).
//   - usage: prompt_eval_count, eval_count and durations. In v0.6.5
//     prompt_eval_count is the whole prompt, its cached prefix included
//     (TestE2EPromptTokensAreWholePrompt checks it against the runner's
//     "loading cache slot" log line: used + remaining), and no figure says
//     how much was reused, so Usage.CachedKnown stays false rather than
//     being guessed.
//   - faults as *backend.Error: unreachable, server errors with Ollama's
//     message, a stream cut (Ollama's client ignores a read error at the
//     end of the body, so a stream without its done message is a cut), a
//     stall past Config.StallTimeout, cancellation; retries with backoff
//     only while nothing was delivered (the watchdog and the retry loop are
//     backend/internal/transport's, shared with the other backends).
package ollama

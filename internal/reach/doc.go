// Package reach turns "the server is not there" into one line a user can
// act on: "cannot reach Ollama at http://127.0.0.1:9: connection refused".
//
// The backends classify such failures as backend.KindUnreachable and keep
// the dial error inside; the commands (run, chat, bench run, compare) need
// the same short sentence from it, and a way to check a server before the
// first real request, so both live here rather than in each command.
package reach

// Package render writes what the model reads about tools: catalogs, call
// results, model-facing errors and system reminders in every tool format,
// and the prompt prefix of a session, with a check that each turn's prompt
// extends the previous one byte for byte. It also keeps untrusted text
// (user input, tool output) from forging structure.
//
// It uses package templates for the per-family chat wrapping and knows
// nothing of servers.
package render

// Package internal holds what has no public use: test helpers that
// provision a real Ollama server (internal/ollamatest) and other plumbing.
package internal

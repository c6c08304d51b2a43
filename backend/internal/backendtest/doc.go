// Package backendtest holds the end-to-end checks that every streaming
// backend must pass against a real server in the same way (backend/ollama
// and backend/openai run them against the test Ollama): stop sequences,
// cancellation mid-stream, a callback's own error, and a server killed
// mid-stream then restarted. Each check takes the backend and a request
// prepared by the caller, so the checks know nothing of any one server.
package backendtest

// Package stallproxy is a test helper of the backend packages: an HTTP/1.1
// proxy in front of a real server (the test Ollama) that passes only the
// first bytes of the answers to chosen paths and then holds the connection
// open without sending more, so a backend's stall timeout can be tested
// against real server output. It counts the requests it forwards and keeps
// their Authorization headers.
package stallproxy

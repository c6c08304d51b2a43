package main

import (
	"fmt"
	"net/url"
	"time"

	"github.com/toolharness/toolharness/backend"
	"github.com/toolharness/toolharness/backend/llamacpp"
	"github.com/toolharness/toolharness/backend/ollama"
	"github.com/toolharness/toolharness/backend/openai"
)

// backendFlags configure newBackend.
type backendFlags struct {
	kind, host, apiKey, quirks string
	stall                      time.Duration
}

// newBackend builds a backend of kind for host (the benchmark's commands
// use it too).
func newBackend(kind, host string, stall time.Duration) (backend.Backend, error) {
	return newBackendWith(backendFlags{kind: kind, host: host, stall: stall})
}

// newBackendWith builds the backend of --backend and its options.
func newBackendWith(f backendFlags) (backend.Backend, error) {
	switch f.kind {
	case "ollama", "":
		return ollama.New(ollama.Config{Host: f.host, StallTimeout: f.stall})
	case "llamacpp":
		return llamacpp.New(llamacpp.Config{BaseURL: f.host, StallTimeout: f.stall, APIKey: f.apiKey})
	case "openai":
		cfg := openai.Config{BaseURL: f.host, StallTimeout: f.stall, APIKey: f.apiKey}
		switch f.quirks {
		case "":
		case "ollama":
			cfg.Quirks = openai.OllamaQuirks()
		default:
			return nil, fmt.Errorf("--quirks %q: want ollama or nothing", f.quirks)
		}
		return openai.New(cfg)
	}
	return nil, fmt.Errorf("--backend %q: want ollama, llamacpp or openai", f.kind)
}

func parseURL(s string) (*url.URL, error) { return url.Parse(s) }

package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/ollama/ollama/api"

	"github.com/toolharness/toolharness/internal/reach"
	"github.com/toolharness/toolharness/templates"

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

// detectTemplate finds the family of an Ollama model from its template;
// anything else (or a template nobody recognises) gets chatml, with a
// notice, since the family decides the prompt's exact bytes. A server
// that cannot be reached is an error, not a reason to guess.
func detectTemplate(ctx context.Context, kind, host, model string, errw io.Writer) (string, error) {
	const fallback = "chatml"
	if kind != "ollama" && kind != "" {
		fmt.Fprintf(errw, "toolharness: no --template given; using %s (pass --template to match the model)\n", fallback)
		return fallback, nil
	}
	u, err := parseURL(host)
	if err != nil {
		return "", fmt.Errorf("--host %s: %w", host, err)
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	show, err := api.NewClient(u, &http.Client{}).Show(ctx, &api.ShowRequest{Model: model})
	if re := reach.FromError(err, kind, host); re != nil {
		return "", re
	}
	if err != nil {
		fmt.Fprintf(errw, "toolharness: cannot read the template of %s (%v); using %s\n", model, err, fallback)
		return fallback, nil
	}
	fam, ok := familyOfTemplate(show.Template)
	if !ok {
		fmt.Fprintf(errw, "toolharness: the template of %s is not one toolharness recognises; using %s (pass --template)\n", model, fallback)
		return fallback, nil
	}
	return fam, nil
}

func familyOfTemplate(text string) (string, bool) {
	d, err := templates.Detect(text)
	if err != nil || d.Family == "" {
		return "", false
	}
	return d.Family, true
}

func parseURL(s string) (*url.URL, error) { return url.Parse(s) }

package source

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
)

// Ollama stores a model's weights, template and parameters as layers of
// a manifest; the weights layer is the GGUF file.
const (
	mediaTypeModel    = "application/vnd.ollama.image.model"
	defaultRegistry   = "registry.ollama.ai"
	defaultNamespace  = "library"
	defaultTag        = "latest"
	envOllamaModels   = "OLLAMA_MODELS"
	ollamaModelsInDir = ".ollama/models"
)

// ErrNotLocal is returned by OllamaGGUF for a server on another machine:
// its manifests are not readable here.
var ErrNotLocal = errors.New("source: the Ollama server is not on this machine")

// OllamaModelsDir is where a local Ollama keeps its models:
// $OLLAMA_MODELS, else ~/.ollama/models.
func OllamaModelsDir() (string, error) {
	if d := os.Getenv(envOllamaModels); d != "" {
		return d, nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("source: %s is unset and there is no home directory: %w", envOllamaModels, err)
	}
	return filepath.Join(home, ollamaModelsInDir), nil
}

// IsLocalHost reports whether an Ollama host URL is this machine.
func IsLocalHost(host string) bool {
	if !strings.Contains(host, "://") {
		host = "http://" + host
	}
	u, err := url.Parse(host)
	if err != nil {
		return false
	}
	h := u.Hostname()
	if h == "localhost" || h == "" {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && (ip.IsLoopback() || ip.IsUnspecified())
}

// OllamaGGUF returns the path of the GGUF blob of an Ollama model
// ([registry/][namespace/]model[:tag]) from the manifest in modelsDir.
func OllamaGGUF(modelsDir, model string) (string, error) {
	parts := manifestPath(model)
	for _, p := range parts {
		if p == "" || p == "." || p == ".." || strings.ContainsAny(p, `\`) {
			return "", fmt.Errorf("source: %q is not an Ollama model name", model)
		}
	}
	manifest := filepath.Join(append([]string{modelsDir, "manifests"}, parts...)...)
	data, err := os.ReadFile(manifest)
	if err != nil {
		return "", fmt.Errorf("source: Ollama model %s: no manifest at %s (is %s the server's models dir? set %s): %w",
			model, manifest, modelsDir, envOllamaModels, err)
	}
	var m struct {
		Layers []struct {
			MediaType string `json:"mediaType"`
			Digest    string `json:"digest"`
		} `json:"layers"`
	}
	if err := json.Unmarshal(data, &m); err != nil {
		return "", fmt.Errorf("source: Ollama manifest %s: %w", manifest, err)
	}
	for _, l := range m.Layers {
		if l.MediaType != mediaTypeModel {
			continue
		}
		digest := strings.Replace(l.Digest, ":", "-", 1)
		if strings.ContainsAny(digest, `/\`) || !strings.HasPrefix(digest, "sha256-") {
			return "", fmt.Errorf("source: Ollama manifest %s: bad digest %q", manifest, l.Digest)
		}
		blob := filepath.Join(modelsDir, "blobs", digest)
		if _, err := os.Stat(blob); err != nil {
			return "", fmt.Errorf("source: Ollama model %s: %w", model, err)
		}
		return blob, nil
	}
	return "", fmt.Errorf("source: Ollama manifest %s has no %s layer", manifest, mediaTypeModel)
}

// manifestPath splits a model name into the manifest's path parts:
// registry, namespace, model, tag.
func manifestPath(model string) []string {
	name, tag := model, defaultTag
	if i := strings.LastIndex(model, ":"); i > strings.LastIndex(model, "/") {
		name, tag = model[:i], model[i+1:]
	}
	parts := strings.Split(name, "/")
	switch len(parts) {
	case 1:
		parts = []string{defaultRegistry, defaultNamespace, parts[0]}
	case 2:
		parts = []string{defaultRegistry, parts[0], parts[1]}
	}
	return append(parts, tag)
}

// FromOllama loads the chat template of an Ollama model from its GGUF
// blob. host is the server's URL: only a local server's files are read.
func FromOllama(host, model string, o Options) (Template, error) {
	if !IsLocalHost(host) {
		return Template{}, fmt.Errorf("%w (%s): pass --chat-template FILE (the model's .gguf, tokenizer_config.json or HF folder)", ErrNotLocal, host)
	}
	dir, err := OllamaModelsDir()
	if err != nil {
		return Template{}, err
	}
	blob, err := OllamaGGUF(dir, model)
	if err != nil {
		return Template{}, err
	}
	t, err := FromGGUF(blob, o)
	if err != nil {
		return Template{}, err
	}
	t.Name = model
	t.Origin += " of Ollama model " + model
	return t, nil
}

package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"path"
	"slices"
	"strings"
	"time"
)

// ServerInfo is what a model server says about itself and its models,
// for the manifest: Ollama's /api/version and the digests of /api/tags
// (/api/show carries none), llama.cpp's /props (build_info, model_path).
// An OpenAI-compatible server reports neither.
type ServerInfo struct {
	URL     string `json:"url"`
	Backend string `json:"backend"`
	Version string `json:"version,omitempty"`
	// Models maps a model to its digest (Ollama) or file (llama.cpp).
	Models map[string]string `json:"models,omitempty"`
	// Error says why the server could not be asked.
	Error string `json:"error,omitempty"`
}

// Software is the server's kind and version.
func (s ServerInfo) Software() string { return s.Backend + " " + s.Version }

// Describe is the server in a few words for a report header.
func (s ServerInfo) Describe() string {
	if s.Error != "" {
		return fmt.Sprintf("%s at %s: not asked (%s)", s.Backend, s.URL, s.Error)
	}
	if s.Version == "" {
		return fmt.Sprintf("%s at %s (reports no version)", s.Backend, s.URL)
	}
	out := s.Software()
	var models []string
	for _, m := range slices.Sorted(maps.Keys(s.Models)) {
		v := s.Models[m]
		if strings.Contains(v, "/") {
			// llama-server's model file: its name, not a cut-off path.
			v = path.Base(v)
		} else {
			v = shortHash(strings.TrimPrefix(v, "sha256:"))
		}
		models = append(models, m+" "+v)
	}
	if len(models) > 0 {
		out += " (" + strings.Join(models, ", ") + ")"
	}
	return out
}

// DescribeServer asks the server at url about itself and models. A
// server that does not answer is described by its error, never a failure:
// the run reports unreachable servers itself.
func DescribeServer(ctx context.Context, client *http.Client, kind, url string, models []string) ServerInfo {
	info := ServerInfo{URL: url, Backend: kind}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	var err error
	switch kind {
	case "ollama":
		err = describeOllama(ctx, client, &info, models)
	case "llamacpp":
		err = describeLlamacpp(ctx, client, &info)
	}
	if err != nil {
		info.Error = err.Error()
	}
	return info
}

func describeOllama(ctx context.Context, client *http.Client, info *ServerInfo, models []string) error {
	var version struct {
		Version string `json:"version"`
	}
	if err := getJSON(ctx, client, info.URL+"/api/version", &version); err != nil {
		return err
	}
	info.Version = version.Version
	var tags struct {
		Models []struct {
			Name   string `json:"name"`
			Model  string `json:"model"`
			Digest string `json:"digest"`
		} `json:"models"`
	}
	if err := getJSON(ctx, client, info.URL+"/api/tags", &tags); err != nil {
		return err
	}
	for _, want := range models {
		for _, m := range tags.Models {
			if m.Digest != "" && (m.Name == want || m.Model == want || m.Name == want+":latest") {
				if info.Models == nil {
					info.Models = map[string]string{}
				}
				info.Models[want] = m.Digest
				break
			}
		}
	}
	return nil
}

func describeLlamacpp(ctx context.Context, client *http.Client, info *ServerInfo) error {
	var props struct {
		BuildInfo string `json:"build_info"`
		ModelPath string `json:"model_path"`
	}
	if err := getJSON(ctx, client, strings.TrimSuffix(info.URL, "/v1")+"/props", &props); err != nil {
		return err
	}
	info.Version = props.BuildInfo
	if props.ModelPath != "" {
		// One server, one model: whatever name a request gives.
		info.Models = map[string]string{"(loaded)": props.ModelPath}
	}
	return nil
}

func getJSON(ctx context.Context, client *http.Client, url string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: HTTP %d", url, resp.StatusCode)
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		return fmt.Errorf("GET %s: %w", url, err)
	}
	return nil
}

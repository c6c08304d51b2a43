package main

import (
	"net"
	"net/url"
	"strings"

	"github.com/urfave/cli/v2"
)

const defaultHost = "http://127.0.0.1:11434"

func globalFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{
			Name:    "host",
			Usage:   "model server URL (Ollama, llama.cpp or OpenAI-compatible)",
			EnvVars: []string{"OLLAMA_HOST"},
			Value:   defaultHost,
		},
	}
}

// normalizeHost turns what Ollama users put in OLLAMA_HOST ("0.0.0.0",
// ":11434", "example.com:8080", "https://h") into a URL.
func normalizeHost(h string) string {
	h = strings.TrimSpace(h)
	if h == "" {
		return defaultHost
	}
	scheme := "http"
	if s, rest, ok := strings.Cut(h, "://"); ok {
		scheme, h = s, rest
	}
	hostport, path, _ := strings.Cut(h, "/")
	host, port, err := net.SplitHostPort(hostport)
	if err != nil {
		host, port = hostport, ""
	}
	if port == "" {
		switch scheme {
		case "https":
			port = "443"
		default:
			port = "11434"
		}
	}
	if host == "" || host == "0.0.0.0" {
		host = "127.0.0.1"
	}
	u := url.URL{Scheme: scheme, Host: net.JoinHostPort(host, port)}
	if path != "" {
		u.Path = "/" + path
	}
	return strings.TrimSuffix(u.String(), "/")
}

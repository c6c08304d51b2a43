package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/toolharness/toolharness/internal/llamacpptest"
)

// scriptingProxy is a proxy in front of a real llama-server that adds
// llamacpptest.Exactly(reply()) as the grammar of every /completion, so the
// model writes that reply whatever the CLI asked: the CLI itself has no
// way to constrain a raw reply to given text.
func scriptingProxy(t *testing.T, srv *llamacpptest.Server, reply func() string) string {
	t.Helper()
	target, err := url.Parse(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(target)
	var mu sync.Mutex
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/completion" {
			var body map[string]any
			if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			mu.Lock()
			body["grammar"] = llamacpptest.Exactly(reply())
			mu.Unlock()
			b, _ := json.Marshal(body)
			r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(b)), int64(len(b))
			r.Header.Del("Content-Length")
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(proxy.Close)
	return proxy.URL
}

// TestE2ERunPrintsTheAnswer: run prints the reply's content as the answer,
// shows a thinking model's reasoning apart on stderr (or not at all with
// --hide-reasoning) and never the markup around it; --json has the answer
// and the reasoning apart. A real llama-server writes each reply.
func TestE2ERunPrintsTheAnswer(t *testing.T) {
	srv := llamacpptest.Start(t)
	var reply string
	host := scriptingProxy(t, srv, func() string { return reply })
	for _, c := range []struct {
		name, template, reply string
	}{
		{"harmony", "gpt-oss", "<|channel|>analysis<|message|>Adding 1 and 2.<|end|><|start|>assistant<|channel|>final<|message|>It is 3.<|return|>"},
		{"think", "qwen2.5", "<think>\nAdding 1 and 2.\n</think>\n\nIt is 3."},
	} {
		for _, mode := range []string{"text", "json", "hide"} {
			t.Run(c.name+"/"+mode, func(t *testing.T) {
				reply = c.reply
				args := []string{"run", "--backend", "llamacpp", "--host", host, "--model", "m", "--mode", "raw",
					"--template", c.template, "--workspace", t.TempDir(), "--max-turns", "1"}
				switch mode {
				case "json":
					args = append(args, "--json")
				case "hide":
					args = append(args, "--hide-reasoning")
				}
				stdout, stderr, code := runCLI(t, "", append(args, "what is 1+2?")...)
				if code != 0 {
					t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
				}
				for _, m := range []string{"<|", "think>"} {
					if strings.Contains(stdout+stderr, m) {
						t.Errorf("markup %q shown:\nstdout: %s\nstderr: %s", m, stdout, stderr)
					}
				}
				switch mode {
				case "json":
					var rec chatRecord
					if err := json.Unmarshal([]byte(stdout), &rec); err != nil {
						t.Fatalf("%v: %s", err, stdout)
					}
					if rec.Answer != "It is 3." || rec.Reasoning != "Adding 1 and 2." {
						t.Errorf("record %+v", rec)
					}
				default:
					if stdout != "It is 3.\n" {
						t.Errorf("stdout %q, want the answer", stdout)
					}
				}
				wantErr := "Thinking...\nAdding 1 and 2.\n...done thinking.\n\nIt is 3.\n"
				if mode == "hide" {
					wantErr = "It is 3.\n"
					if strings.Contains(stderr, "\n\nIt is 3.") {
						t.Errorf("stderr %q: the newlines after the hidden reasoning are shown", stderr)
					}
				}
				if !strings.HasSuffix(stderr, wantErr) {
					t.Errorf("stderr %q, want it to hold %q", stderr, wantErr)
				}
			})
		}
	}
}

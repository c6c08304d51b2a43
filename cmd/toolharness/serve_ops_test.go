package main

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// serveUpstream is a scripted Ollama whose generations can be held for a
// while, and which says when each starts and ends.
type serveUpstream struct {
	*scriptedOllama
	started, ended chan struct{}
}

func startServeUpstream(t *testing.T, delay time.Duration, replies ...string) *serveUpstream {
	up := &serveUpstream{scriptedOllama: withChannels(&scriptedOllama{replies: replies}),
		started: make(chan struct{}, 8), ended: make(chan struct{}, 8)}
	up.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gen := r.URL.Path == "/api/generate"
		if gen {
			up.started <- struct{}{}
			time.Sleep(delay)
		}
		up.serve(w, r)
		if gen {
			up.ended <- struct{}{}
		}
	}))
	t.Cleanup(up.Close)
	return up
}

var servingOn = regexp.MustCompile(`serving on (http://\S+)`)

// startServe runs the built binary's serve command and returns its base
// URL once it listens.
func startServe(t *testing.T, args ...string) (*child, string) {
	t.Helper()
	ch := startChild(t, append([]string{"serve", "--listen", "127.0.0.1:0"}, args...)...)
	waitFor(t, ch.stderr, "serving on http://")
	return ch, servingOn.FindStringSubmatch(ch.stderr.String())[1]
}

func wait(t *testing.T, c <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-c:
	case <-time.After(20 * time.Second):
		t.Fatalf("%s: not within 20 s", what)
	}
}

type httpResult struct {
	status int
	body   string
	err    error
}

func post(url, body string) httpResult {
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		return httpResult{err: err}
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	return httpResult{status: resp.StatusCode, body: string(data), err: err}
}

const serveWeather = `{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}}`

// TestServeShutdown: on SIGTERM serve stops accepting, lets a request in
// flight finish within --shutdown-timeout and exits 0; a request that
// outlasts it is cancelled (the generation upstream ends) and serve exits
// 1 saying so.
func TestServeShutdown(t *testing.T) {
	weather := `<tool_call>{"name":"get_weather","arguments":{"city":"Paris"}}</tool_call>`
	tests := []struct {
		name     string
		delay    time.Duration
		reply    string
		grace    string
		code     int
		wantBody string // in the client's reply
		wantErr  string // in serve's stderr
	}{
		{"finishes", 2 * time.Second, weather, "30s", 0, `"name":"get_weather"`, "serve: shutting down"},
		{"cancelled", 0, stallReply, "500ms", 1, "Working", "1 requests still running after --shutdown-timeout 500ms were cancelled"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			up := startServeUpstream(t, tt.delay, tt.reply)
			ch, base := startServe(t, "--host", up.URL, "--model", "m", "--template", "qwen2.5", "--shutdown-timeout", tt.grace)
			got := make(chan httpResult, 1)
			go func() {
				got <- post(base+"/v1/chat/completions", `{"model":"m","stream":true,"tools":[`+serveWeather+`],"messages":[{"role":"user","content":"Weather?"}]}`)
			}()
			wait(t, up.started, "the generation")
			if err := ch.cmd.Process.Signal(syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
			// Stops accepting at once, the request in flight notwithstanding.
			waitFor(t, ch.stderr, "serve: shutting down")
			if _, err := http.Get(base + "/healthz"); err == nil {
				t.Error("a new request was accepted after SIGTERM")
			}
			wait(t, up.ended, "the generation's end")
			if code := ch.exit(t); code != tt.code {
				t.Errorf("exit %d, want %d\nstderr: %s", code, tt.code, ch.stderr)
			}
			if !strings.Contains(ch.stderr.String(), tt.wantErr) {
				t.Errorf("stderr %s\nwant %q", ch.stderr, tt.wantErr)
			}
			r := <-got
			done := strings.Contains(r.body, "data: [DONE]")
			if !strings.Contains(r.body, tt.wantBody) || done != (tt.code == 0) {
				t.Errorf("client got %d %q (%v): want %q, [DONE] only when the request finished", r.status, r.body, r.err, tt.wantBody)
			}
		})
	}
}

// TestServeConfig: serve.yaml serves several models, each under its name
// with its own backend name and fixed num_ctx; an unknown name is a 400
// listing them; --trace gets one JSON line per request.
func TestServeConfig(t *testing.T) {
	answer := "It is sunny."
	up := startServeUpstream(t, 0, answer, answer)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "serve.yaml")
	trace := filepath.Join(dir, "trace.jsonl")
	yaml := "backend: ollama\nhost: " + up.URL + "\nmodels:\n" +
		"  - name: small\n    model: m1\n    template: qwen2.5\n" +
		"  - name: big\n    model: m2\n    template: qwen2.5\n    num_ctx: 4096\n"
	if err := os.WriteFile(cfg, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	ch, base := startServe(t, "--config", cfg, "--trace", trace)

	resp, err := http.Get(base + "/v1/models")
	if err != nil {
		t.Fatal(err)
	}
	var models struct{ Data []struct{ ID string } }
	err = json.NewDecoder(resp.Body).Decode(&models)
	resp.Body.Close()
	if err != nil || len(models.Data) != 2 || models.Data[0].ID != "small" || models.Data[1].ID != "big" {
		t.Fatalf("/v1/models: %+v (%v), want small and big", models, err)
	}
	for _, name := range []string{"big", "small"} {
		r := post(base+"/v1/chat/completions", `{"model":"`+name+`","messages":[{"role":"user","content":"Weather?"}]}`)
		if r.status != http.StatusOK || !strings.Contains(r.body, answer) {
			t.Fatalf("%s: %d %s", name, r.status, r.body)
		}
	}
	r := post(base+"/v1/chat/completions", `{"model":"medium","messages":[{"role":"user","content":"hi"}]}`)
	if r.status != http.StatusBadRequest || !strings.Contains(r.body, `"param":"model"`) || !strings.Contains(r.body, "served: small, big") {
		t.Errorf("unknown model: %d %s, want a 400 on model listing small, big", r.status, r.body)
	}
	bodies := up.requests()
	if len(bodies) != 2 {
		t.Fatalf("%d generations upstream, want 2", len(bodies))
	}
	for i, want := range []struct {
		model  string
		numCtx int
	}{{"m2", 4096}, {"m1", 8192}} {
		var g struct {
			Model   string
			Options struct {
				NumCtx int `json:"num_ctx"`
			}
		}
		if err := json.Unmarshal(bodies[i], &g); err != nil || g.Model != want.model || g.Options.NumCtx != want.numCtx {
			t.Errorf("generation %d: model %q num_ctx %d (%v), want %q %d", i+1, g.Model, g.Options.NumCtx, err, want.model, want.numCtx)
		}
	}
	if err := ch.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := ch.exit(t); code != 0 {
		t.Fatalf("exit %d\nstderr: %s", code, ch.stderr)
	}
	f, err := os.Open(trace)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var traced []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var l struct {
			Type, Model string
			Attempts    []struct{ Raw string }
		}
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil || l.Type != "request" || len(l.Attempts) != 1 || l.Attempts[0].Raw != answer {
			t.Errorf("trace line %s (%v)", sc.Text(), err)
		}
		traced = append(traced, l.Model)
	}
	if strings.Join(traced, ",") != "big,small" {
		t.Errorf("trace lines for %v, want big, small", traced)
	}
}

// TestServeConfigErrors: a serve.yaml that cannot be served is one line
// naming the file or the key, before anything listens.
func TestServeConfigErrors(t *testing.T) {
	up := startServeUpstream(t, 0)
	tests := []struct{ name, yaml, want string }{
		{"no models", "models: []\n", "no models"},
		{"not yaml", "models: [\n", "--config"},
		{"no model name", "models:\n  - name: a\n", "models[0]: model is required"},
		{"both templates", "models:\n  - model: m\n    template: qwen2.5\n    chat_template: x.json\n", "template and chat_template exclude each other"},
		{"bad backend", "models:\n  - model: m\n    backend: vllm\n", `backend "vllm"`},
		{"no template", "host: " + up.URL + "\nmodels:\n  - model: m\n", "serve.yaml: set template or chat_template"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := filepath.Join(t.TempDir(), "serve.yaml")
			if err := os.WriteFile(cfg, []byte(tt.yaml), 0o644); err != nil {
				t.Fatal(err)
			}
			ch := startChild(t, "serve", "--listen", "127.0.0.1:0", "--config", cfg)
			code := ch.exit(t)
			lines := strings.Split(strings.TrimSpace(ch.stderr.String()), "\n")
			if code == 0 || len(lines) != 1 || !strings.Contains(lines[0], tt.want) {
				t.Errorf("exit %d, stderr %q: want one line with %q", code, ch.stderr, tt.want)
			}
		})
	}
}

package llamacpp

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/toolharness/toolharness/backend"
	goldenfile "github.com/toolharness/toolharness/internal/golden"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// reply is one recorded answer the fixture server gives.
type reply struct {
	status int
	file   string // testdata file sent as the body
	body   string // literal body, when file is empty
	// stallAfter > 0 sends that many SSE events of file, then goes silent
	// until the client hangs up; stallBefore is silent before any header.
	stallAfter  int
	stallBefore bool
	// hangup sends the headers and the first hangupAfter bytes of the body,
	// then closes the connection without ending the chunked body.
	hangup      bool
	hangupAfter int
}

type seen struct {
	Method, Path, Body string
}

// fixtureServer answers each path with its list of replies in turn (the
// last one repeats) and records every request.
type fixtureServer struct {
	t      *testing.T
	srv    *httptest.Server
	mu     sync.Mutex
	routes map[string][]reply
	reqs   []seen
}

func newFixtureServer(t *testing.T, routes map[string][]reply) *fixtureServer {
	t.Helper()
	fs := &fixtureServer{t: t, routes: routes}
	fs.srv = httptest.NewServer(http.HandlerFunc(fs.serve))
	t.Cleanup(fs.srv.Close)
	return fs
}

// key tells the BOS probe (/tokenize with_pieces) from a count.
func key(r *http.Request, body []byte) string {
	if r.URL.Path == "/tokenize" && bytes.Contains(body, []byte(`"with_pieces":true`)) {
		return "/tokenize#bos"
	}
	return r.URL.Path
}

func (fs *fixtureServer) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	k := key(r, body)
	fs.mu.Lock()
	fs.reqs = append(fs.reqs, seen{r.Method, k, string(body)})
	list := fs.routes[k]
	if len(list) == 0 {
		fs.mu.Unlock()
		http.Error(w, "no fixture for "+k, http.StatusNotFound)
		return
	}
	rep := list[0]
	if len(list) > 1 {
		fs.routes[k] = list[1:]
	}
	fs.mu.Unlock()

	data := []byte(rep.body)
	if rep.file != "" {
		data = readFixture(fs.t, rep.file)
	}
	if rep.stallBefore {
		<-r.Context().Done()
		return
	}
	if rep.hangup {
		hj, ok := w.(http.Hijacker)
		if !ok {
			fs.t.Error("fixture server: cannot hijack")
			return
		}
		conn, buf, err := hj.Hijack()
		if err != nil {
			fs.t.Error(err)
			return
		}
		defer conn.Close()
		part := data[:min(rep.hangupAfter, len(data))]
		buf.WriteString("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n")
		if len(part) > 0 {
			fmt.Fprintf(buf, "%x\r\n", len(part))
			buf.Write(part)
			buf.WriteString("\r\n")
		}
		buf.Flush()
		return
	}
	if strings.HasSuffix(rep.file, ".sse") {
		w.Header().Set("Content-Type", "text/event-stream")
	} else {
		w.Header().Set("Content-Type", "application/json")
	}
	status := rep.status
	if status == 0 {
		status = http.StatusOK
	}
	w.WriteHeader(status)
	if rep.stallAfter > 0 {
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(nil, 1<<20)
		for n := 0; n < rep.stallAfter && sc.Scan(); {
			line := sc.Bytes()
			if len(line) == 0 {
				continue
			}
			w.Write(line)
			w.Write([]byte("\n\n"))
			n++
		}
		w.(http.Flusher).Flush()
		<-r.Context().Done()
		return
	}
	w.Write(data)
}

// requests returns the recorded requests to path (all when path is "").
func (fs *fixtureServer) requests(path string) []seen {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	var out []seen
	for _, r := range fs.reqs {
		if path == "" || r.Path == path {
			out = append(out, r)
		}
	}
	return out
}

func readFixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatalf("fixture %s: %v (the fixtures live in backend/llamacpp/testdata)", name, err)
	}
	return b
}

// golden compares got with testdata/golden/name, rewriting it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	goldenfile.Check(t, *update, filepath.Join("testdata", "golden", name), string(got))
}

// standard routes of a healthy Llama 3 server whose BOS is added by the
// server, with the given /completion replies.
func llama3(completion ...reply) map[string][]reply {
	return map[string][]reply{
		"/tokenize#bos": {{file: "tokenize_bos.json"}},
		"/tokenize":     {{file: "tokenize.json"}},
		"/props":        {{file: "props.json"}},
		"/completion":   completion,
	}
}

func TestProps(t *testing.T) {
	tests := []struct {
		file string
		want Props
	}{
		{"props_source.json", Props{
			ChatTemplate: "{%- for message in messages %}{{- '<|im_start|>' + message.role + '\n' + message.content + '<|im_end|>' + '\n' }}{%- endfor %}{%- if add_generation_prompt %}{{- '<|im_start|>assistant\n' }}{%- endif %}",
			EOSToken:     "<|im_end|>", ContextSize: 4096, TotalSlots: 1,
			ModelPath: "models/qwen2.5-0.5b-instruct-q8_0.gguf", ModelAlias: "qwen2.5-0.5b-instruct", BuildInfo: "b7000-abcdef1"}},
		// The README's older example: default_generation_settings is a
		// whole slot object, no bos/eos texts.
		{"props.json", Props{ChatTemplate: "...", ContextSize: 1024, TotalSlots: 1,
			ModelPath: "../models/Meta-Llama-3.1-8B-Instruct-Q4_K_M.gguf", BuildInfo: "b(build number)-(build commit hash)"}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			fs := newFixtureServer(t, map[string][]reply{"/props": {{file: tt.file}}})
			c := newClient(t, fs, Config{})
			got, err := c.Props(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("Props (-want +got):\n%s", d)
			}
			// ContextSize now answers from what Props learnt.
			if n, err := c.ContextSize(context.Background(), ""); err != nil || n != tt.want.ContextSize {
				t.Errorf("ContextSize = %d, %v; want %d", n, err, tt.want.ContextSize)
			}
			if got := len(fs.requests("/props")); got != 1 {
				t.Errorf("%d /props requests, want 1", got)
			}
		})
	}
}

func TestPropsError(t *testing.T) {
	fs := newFixtureServer(t, map[string][]reply{"/props": {{status: 503, file: "error_loading.json"}}})
	c := newClient(t, fs, Config{Retries: -1})
	_, err := c.Props(context.Background())
	var be *backend.Error
	if !errors.As(err, &be) || be.Status != 503 || be.Message != "Loading model" {
		t.Fatalf("Props error = %v, want the server's 503 Loading model", err)
	}
}

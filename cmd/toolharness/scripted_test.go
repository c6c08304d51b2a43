package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// stallReply, as a scripted reply, streams "Working" and then nothing
// until the client goes away: a generation to interrupt.
const stallReply = "\x00stall"

// lengthCut, before a scripted reply, ends it with done_reason "length":
// the server's token limit cut it.
const lengthCut = "\x00length:"

// scriptedOllama is a stand-in for Ollama's API that answers generations
// with scripted replies, in order, and keeps every request body as it
// arrived. It speaks what backend/ollama uses: GET / (the probe),
// /api/show, /api/generate and /api/chat, streamed as NDJSON.
type scriptedOllama struct {
	*httptest.Server
	mu      sync.Mutex
	replies []string
	bodies  [][]byte // /api/generate and /api/chat bodies, in order
	// stalled gets a value each time a stallReply starts, left each
	// time the client leaves one.
	stalled, left chan struct{}
	// status answers every generation with this HTTP status and
	// message when not 0 (the model is missing, the endpoint is not
	// there).
	status  int
	message string
}

func newScriptedOllama(t *testing.T, replies ...string) *scriptedOllama {
	return startScripted(t, &scriptedOllama{replies: replies})
}

// newFailingOllama answers every generation, and /api/show, with status
// and the error message, as Ollama answers for a model it does not have.
func newFailingOllama(t *testing.T, status int, message string) *scriptedOllama {
	return startScripted(t, &scriptedOllama{status: status, message: message})
}

func startScripted(t *testing.T, s *scriptedOllama) *scriptedOllama {
	s.Server = httptest.NewServer(http.HandlerFunc(withChannels(s).serve))
	t.Cleanup(s.Close)
	return s
}

// withChannels makes s's channels, for a scriptedOllama served by
// startScripted or by a handler of its own (startServeUpstream).
func withChannels(s *scriptedOllama) *scriptedOllama {
	s.stalled, s.left = make(chan struct{}, 8), make(chan struct{}, 8)
	return s
}

// requests returns the generation request bodies received so far.
func (s *scriptedOllama) requests() [][]byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([][]byte(nil), s.bodies...)
}

func (s *scriptedOllama) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	switch r.URL.Path {
	case "/":
		io.WriteString(w, "Ollama is running")
		return
	case "/api/show":
		if s.status != 0 { // set before the server started
			w.WriteHeader(s.status)
			json.NewEncoder(w).Encode(map[string]string{"error": s.message})
			return
		}
		json.NewEncoder(w).Encode(map[string]any{"model_info": map[string]any{
			"general.architecture": "llama", "llama.context_length": 8192}})
		return
	case "/api/generate", "/api/chat":
	default:
		http.NotFound(w, r)
		return
	}
	s.mu.Lock()
	s.bodies = append(s.bodies, body)
	status, message := s.status, s.message
	reply := "(no more scripted replies)"
	if len(s.replies) > 0 {
		reply, s.replies = s.replies[0], s.replies[1:]
	}
	s.mu.Unlock()
	if status != 0 {
		w.WriteHeader(status)
		json.NewEncoder(w).Encode(map[string]string{"error": message})
		return
	}
	chatAPI := r.URL.Path == "/api/chat"
	doneReason := "stop"
	if rest, ok := strings.CutPrefix(reply, lengthCut); ok {
		reply, doneReason = rest, "length"
	}
	chunk := func(text string, done bool) {
		m := map[string]any{"model": "m", "created_at": time.Now().UTC().Format(time.RFC3339Nano), "done": done}
		if chatAPI {
			m["message"] = map[string]string{"role": "assistant", "content": text}
		} else {
			m["response"] = text
		}
		if done {
			m["done_reason"] = doneReason
			m["prompt_eval_count"], m["eval_count"] = 10, 5
		}
		json.NewEncoder(w).Encode(m)
		w.(http.Flusher).Flush()
	}
	if reply == stallReply {
		chunk("Working", false)
		s.stalled <- struct{}{}
		<-r.Context().Done()
		s.left <- struct{}{}
		return
	}
	chunk(reply, false)
	chunk("", true)
}

// buildBinary builds cmd/toolharness once per test binary, for tests
// that send it signals.
var buildBinary = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "toolharness-bin-")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "toolharness")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		return "", &buildError{out: string(out), err: err}
	}
	return bin, nil
})

type buildError struct {
	out string
	err error
}

func (e *buildError) Error() string { return e.err.Error() + ": " + e.out }

func toolharnessBinary(t *testing.T) string {
	t.Helper()
	bin, err := buildBinary()
	if err != nil {
		t.Fatalf("go build: %v", err)
	}
	return bin
}

// TestRunLengthCut: a reply the token limit cut is no answer: run exits 2
// and says the limit, and --json says stop "length", in raw and chat mode.
func TestRunLengthCut(t *testing.T) {
	for _, mode := range []string{"raw", "chat"} {
		t.Run(mode, func(t *testing.T) {
			srv := newScriptedOllama(t, lengthCut+"The files are")
			stdout, stderr, code := runCLI(t, "", "run", "--host", srv.URL, "--model", "m", "--template", "qwen3", "--mode", mode,
				"--tools", "builtin:fs", "--workspace", t.TempDir(), "--json", "list the files")
			if code != exitLimit {
				t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", code, exitLimit, stdout, stderr)
			}
			var rec struct{ Stop, Answer string }
			if err := json.Unmarshal([]byte(stdout), &rec); err != nil {
				t.Fatalf("%v: %s", err, stdout)
			}
			if rec.Stop != "length" || !strings.Contains(stderr, "token limit") {
				t.Errorf("stop %q, stderr %q: want stop length and the limit named", rec.Stop, stderr)
			}
		})
	}
}

package backendtest

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/toolharness/toolharness/backend"
	"github.com/toolharness/toolharness/backend/llamacpp"
)

// llamaServer answers like a llama.cpp server (the shape of
// backend/llamacpp's fixtures): no BOS added, and /completion streams ten
// one-word events, then the final stop event. With hold, it stops after
// three events and waits for the client to go away.
func llamaServer(t *testing.T, hold bool) *llamacpp.Client {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/tokenize":
			fmt.Fprint(w, `{"tokens":[]}`)
		case "/completion":
			w.Header().Set("Content-Type", "text/event-stream")
			for i := range 10 {
				if hold && i == 3 {
					w.(http.Flusher).Flush()
					<-r.Context().Done()
					return
				}
				fmt.Fprintf(w, "data: {\"content\":\"w%d \",\"stop\":false}\n\n", i)
			}
			fmt.Fprint(w, "data: {\"content\":\"\",\"stop\":true,\"stop_type\":\"limit\",\"tokens_predicted\":10,\"tokens_evaluated\":4}\n\n")
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	c, err := llamacpp.New(llamacpp.Config{BaseURL: srv.URL, NoContextCheck: true, Retries: -1})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

var req = backend.Request{Mode: backend.ModeRaw, Prompt: "Once"}

func TestStream(t *testing.T) {
	resp := Stream(t, llamaServer(t, false), req, 10)
	if resp.Text != "w0 w1 w2 w3 w4 w5 w6 w7 w8 w9 " || resp.StopReason != "length" {
		t.Errorf("text %q, stop %q", resp.Text, resp.StopReason)
	}
}

func TestCancelMidStream(t *testing.T) { CancelMidStream(t, llamaServer(t, true), req) }

func TestCallbackError(t *testing.T) { CallbackError(t, llamaServer(t, false), req) }

func TestAsError(t *testing.T) {
	want := &backend.Error{Kind: backend.KindServer, Backend: "x"}
	if got := AsError(t, fmt.Errorf("wrapped: %w", want)); got != want {
		t.Errorf("AsError = %v, want the wrapped *backend.Error", got)
	}
}

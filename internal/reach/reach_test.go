package reach

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/toolharness/toolharness/backend"
	"github.com/toolharness/toolharness/internal/reach/reachtest"
)

func TestProbe(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusNotFound) // any answer means reachable
	}))
	defer srv.Close()
	if err := Probe(context.Background(), "ollama", srv.URL, 5*time.Second); err != nil {
		t.Fatalf("live server: %v", err)
	}
	dead := reachtest.DeadURL(t)
	err := Probe(context.Background(), "llamacpp", dead, 5*time.Second)
	want := fmt.Sprintf("cannot reach llama.cpp at %s: connection refused", dead)
	if err == nil || err.Error() != want {
		t.Fatalf("dead server: got %v, want %q", err, want)
	}
	var re *Error
	if !errors.As(err, &re) {
		t.Fatalf("dead server: %T is not *reach.Error", err)
	}
}

func TestFromError(t *testing.T) {
	dead := reachtest.DeadURL(t)
	_, dialErr := http.Get(dead)
	if dialErr == nil {
		t.Fatal("a request to a closed port succeeded")
	}
	tests := []struct {
		name string
		err  error
		want string // "" = not an unreachable error
	}{
		{"nil", nil, ""},
		{"plain dial error", dialErr, "cannot reach Ollama at U: connection refused"},
		{"backend unreachable", &backend.Error{Kind: backend.KindUnreachable, Backend: "openai", Err: dialErr},
			"cannot reach the OpenAI-compatible server at U: connection refused"},
		{"wrapped", fmt.Errorf("agent: generation 1: %w", &backend.Error{Kind: backend.KindUnreachable, Backend: "ollama", Err: dialErr}),
			"cannot reach Ollama at U: connection refused"},
		{"server error is not unreachable", &backend.Error{Kind: backend.KindServer, Status: 500, Backend: "ollama"}, ""},
		{"stream cut is not unreachable", &backend.Error{Kind: backend.KindStreamCut, Backend: "ollama", Err: dialErr}, ""},
		{"other", errors.New("boom"), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ""
			if e := FromError(tt.err, "ollama", "U"); e != nil {
				got = e.Error()
			}
			if got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

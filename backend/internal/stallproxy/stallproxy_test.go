package stallproxy

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// body is longer than the limit of TestStalls after the headers.
var body = "data: one\n\ndata: " + strings.Repeat("x", 2000) + "\n\n"

func upstream(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func get(ctx context.Context, url, auth string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	return http.DefaultClient.Do(req)
}

// TestStalls reads an answer through the proxy: the headers and the first
// bytes arrive, then nothing until the client gives up.
func TestStalls(t *testing.T) {
	p := Start(t, upstream(t).URL, 400, "/stream")
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	resp, err := get(ctx, p.URL()+"/stream", "")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	// The limit falls inside the body: the first event arrives, not all.
	line, err := bufio.NewReader(resp.Body).ReadString('\n')
	if err != nil || line != "data: one\n" {
		t.Fatalf("first line %q, %v", line, err)
	}
	start := time.Now()
	_, err = io.ReadAll(resp.Body)
	if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) < 100*time.Millisecond {
		t.Errorf("after the limit: %v after %v; want the client's deadline, not the end of the body", err, time.Since(start))
	}
	if n := p.Requests("/stream"); n != 1 {
		t.Errorf("%d requests counted, want 1", n)
	}
}

// TestPassesOtherPaths: other paths, and everything with a negative limit,
// pass whole; the Authorization headers are kept.
func TestPassesOtherPaths(t *testing.T) {
	up := upstream(t)
	for _, tc := range []struct {
		limit int
		path  string
	}{{10, "/other"}, {-1, "/stream"}} {
		p := Start(t, up.URL, tc.limit, "/stream")
		resp, err := get(context.Background(), p.URL()+tc.path, "Bearer k")
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || string(b) != body {
			t.Errorf("limit %d %s: body %q, %v", tc.limit, tc.path, b, err)
		}
		if got := p.Auths(); len(got) != 1 || got[0] != "Bearer k" || !strings.HasPrefix(p.URL(), "http://127.0.0.1:") {
			t.Errorf("auths %q, url %s", got, p.URL())
		}
	}
}

// TestCleanupWithSilentServer: a server that never answers must not keep
// the test from ending (the proxy closes its connections at cleanup).
func TestCleanupWithSilentServer(t *testing.T) {
	release := make(chan struct{})
	silent := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer silent.Close()
	defer close(release)
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		t.Run("inner", func(t *testing.T) {
			p := Start(t, silent.URL, -1)
			ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
			defer cancel()
			if _, err := get(ctx, p.URL()+"/x", ""); err == nil {
				t.Error("a silent server answered")
			}
		})
	}()
	select {
	case <-ended:
	case <-time.After(10 * time.Second):
		t.Fatal("the proxy's cleanup hangs on a silent server")
	}
}

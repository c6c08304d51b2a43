package openai

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
)

// stallProxy forwards HTTP/1.1 connections to a server, but passes only
// the first limit bytes of each response to /v1/completions and /v1/chat/completions,
// then holds the connection open without sending more: a stalled stream.
// A negative limit passes everything (to observe requests).
type stallProxy struct {
	l      net.Listener
	target string
	limit  int

	mu    sync.Mutex
	reqs  map[string]int
	auths []string // Authorization headers seen
}

func newStallProxy(t *testing.T, targetURL string, limit int) *stallProxy {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &stallProxy{l: l, target: strings.TrimPrefix(targetURL, "http://"), limit: limit, reqs: map[string]int{}}
	done := make(chan struct{})
	var wg sync.WaitGroup
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() { defer wg.Done(); p.serve(c, done) }()
		}
	}()
	t.Cleanup(func() { close(done); l.Close(); wg.Wait() })
	return p
}

func (p *stallProxy) URL() string { return "http://" + p.l.Addr().String() }

// Requests counts the requests seen for path.
func (p *stallProxy) Requests(path string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.reqs[path]
}

// Auths are the Authorization headers of the requests seen.
func (p *stallProxy) Auths() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.auths...)
}

// serve handles one request per connection (it closes the connection
// after the response, which the client handles by dialling again).
func (p *stallProxy) serve(c net.Conn, done chan struct{}) {
	defer c.Close()
	req, err := http.ReadRequest(bufio.NewReader(c))
	if err != nil {
		return
	}
	p.mu.Lock()
	p.reqs[req.URL.Path]++
	p.auths = append(p.auths, req.Header.Get("Authorization"))
	p.mu.Unlock()
	up, err := net.Dial("tcp", p.target)
	if err != nil {
		return
	}
	defer up.Close()
	req.Close = true // one request per upstream connection
	if err := req.Write(up); err != nil {
		return
	}
	if p.limit < 0 || (req.URL.Path != "/v1/completions" && req.URL.Path != "/v1/chat/completions") {
		io.Copy(c, up)
		return
	}
	io.CopyN(c, up, int64(p.limit))
	<-done // stall until the test ends
}

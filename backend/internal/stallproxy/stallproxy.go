package stallproxy

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
)

// Proxy forwards HTTP/1.1 connections to a server, one request per
// connection (it closes the connection after the answer, which clients
// handle by dialling again).
type Proxy struct {
	l      net.Listener
	target string
	limit  int
	paths  []string

	mu    sync.Mutex
	reqs  map[string]int
	auths []string   // Authorization headers seen
	conns []net.Conn // open connections, closed when the test ends
}

// Start proxies to targetURL (http://host:port) until the test ends. The
// answers to requests for paths are cut after limit bytes and then
// stalled; a negative limit passes everything (to observe requests).
// Answers to other paths pass whole.
func Start(t testing.TB, targetURL string, limit int, paths ...string) *Proxy {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &Proxy{l: l, target: strings.TrimPrefix(targetURL, "http://"), limit: limit, paths: paths, reqs: map[string]int{}}
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
	t.Cleanup(func() {
		close(done)
		l.Close()
		// A copy blocked on a server that never answers would keep its
		// goroutine, and the test, waiting: close every connection.
		p.mu.Lock()
		for _, c := range p.conns {
			c.Close()
		}
		p.mu.Unlock()
		wg.Wait()
	})
	return p
}

func (p *Proxy) track(c net.Conn) {
	p.mu.Lock()
	p.conns = append(p.conns, c)
	p.mu.Unlock()
}

// URL is the proxy's base URL.
func (p *Proxy) URL() string { return "http://" + p.l.Addr().String() }

// Requests counts the requests seen for path.
func (p *Proxy) Requests(path string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.reqs[path]
}

// Auths are the Authorization headers of the requests seen, in order.
func (p *Proxy) Auths() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.auths...)
}

func (p *Proxy) serve(c net.Conn, done chan struct{}) {
	p.track(c)
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
	p.track(up)
	defer up.Close()
	req.Close = true // one request per upstream connection
	if err := req.Write(up); err != nil {
		return
	}
	if p.limit < 0 || !slices.Contains(p.paths, req.URL.Path) {
		io.Copy(c, up)
		return
	}
	io.CopyN(c, up, int64(p.limit))
	<-done // stall until the test ends
}

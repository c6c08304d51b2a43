package llamacpp

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"sync/atomic"
	"testing"
)

// TestIdempotentRequestSurvivesClosedIdleConnection: a server that closes
// a kept-alive connection just as the client reuses it (a race any
// keep-alive server can lose; seen with llama-server on /detokenize) must
// not fail a request that generates nothing. The server here answers
// the first request on each connection and drops the connection after
// reading the second, before answering; the backend's own retries are
// off, so only net/http's replay of an idempotent request can save it.
func TestIdempotentRequestSurvivesClosedIdleConnection(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var conns atomic.Int32
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns.Add(1)
			go dropSecondRequest(c)
		}
	}()
	c, err := New(Config{BaseURL: "http://" + ln.Addr().String(), Retries: -1})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		n, err := c.CountTokens(context.Background(), "", "abc")
		if err != nil {
			t.Fatalf("request %d: %v", i+1, err)
		}
		if n != 2 {
			t.Fatalf("request %d: %d tokens, want 2", i+1, n)
		}
	}
	if n := conns.Load(); n < 2 {
		t.Fatalf("%d connections: the server never dropped one, so the test tested nothing", n)
	}
}

// dropSecondRequest serves one /tokenize answer on c, keeps it alive,
// reads the next request whole and closes c without answering it.
func dropSecondRequest(c net.Conn) {
	defer c.Close()
	r := bufio.NewReader(c)
	for i := 0; ; i++ {
		req, err := http.ReadRequest(r)
		if err != nil {
			return
		}
		io.Copy(io.Discard, req.Body)
		req.Body.Close()
		if i == 1 {
			return
		}
		body := `{"tokens":[1,2]}`
		io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: keep-alive\r\nContent-Length: 16\r\n\r\n"+body)
	}
}

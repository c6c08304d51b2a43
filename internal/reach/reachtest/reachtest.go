// Package reachtest gives tests a server that is not there: the URL of a
// local port that was just listened on and closed, so a connection to it
// is refused at once (no timeout, no DNS).
package reachtest

import (
	"net"
	"testing"
)

// DeadURL returns http://127.0.0.1:PORT for a port nothing listens on.
func DeadURL(tb testing.TB) string {
	tb.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	defer l.Close()
	return "http://" + l.Addr().String()
}

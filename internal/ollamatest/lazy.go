package ollamatest

import (
	"os"
	"sync"
	"testing"
)

// Lazy shares one server among the tests of a test binary and starts it on
// first use, so a `go test -skip TestE2E` run never pays for it. Declare it
// in the test package and close it from TestMain with Main:
//
//	var tiny ollamatest.Lazy
//
//	func TestMain(m *testing.M) { tiny.Main(m) }
//
//	func TestE2EThing(t *testing.T) {
//		srv := tiny.Get(t)
//		…
//	}
type Lazy struct {
	// Options are passed to New on first use.
	Options []Option

	once sync.Once
	srv  *Server
	err  error
}

// Get returns the shared server, starting it on the first call. A failed
// start fails every test that asks for it, with the same message.
func (l *Lazy) Get(tb testing.TB) *Server {
	tb.Helper()
	l.once.Do(func() { l.srv, l.err = New(l.Options...) })
	if l.err != nil {
		tb.Fatal(l.err)
	}
	return l.srv
}

// Close stops the server if it was started. Safe to call when it was not.
func (l *Lazy) Close() error {
	l.once.Do(func() {}) // a Get after Close must not start a server
	if l.srv == nil {
		return nil
	}
	return l.srv.Close()
}

// Main runs the tests of m, stops the shared server and exits with the
// tests' status: the whole TestMain of a package that shares one server.
func (l *Lazy) Main(m *testing.M) {
	code := m.Run()
	l.Close()
	os.Exit(code)
}

package backend

import (
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"testing"
)

func TestIsDial(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"dial", fmt.Errorf("post: %w", &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("x")}), true},
		{"refused", fmt.Errorf("x: %w", syscall.ECONNREFUSED), true},
		{"dns", &net.DNSError{Err: "no such host", Name: "nowhere.invalid"}, true},
		{"read reset", &net.OpError{Op: "read", Err: syscall.ECONNRESET}, false},
		{"eof", io.ErrUnexpectedEOF, false},
	} {
		if got := IsDial(tc.err); got != tc.want {
			t.Errorf("%s: IsDial = %v, want %v", tc.name, got, tc.want)
		}
	}
	// A real refused connection.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	if _, err := net.Dial("tcp", addr); !IsDial(err) {
		t.Errorf("IsDial(%v) = false for a refused dial", err)
	}
}

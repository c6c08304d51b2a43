package reach

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/toolharness/toolharness/backend"
)

// Error says that the server at URL could not be reached.
type Error struct {
	// Server is the server kind in words ("Ollama", "llama.cpp").
	Server string
	URL    string
	// Cause is the short reason ("connection refused", "no such host").
	Cause string
	Err   error
}

func (e *Error) Error() string {
	return fmt.Sprintf("cannot reach %s at %s: %s", e.Server, e.URL, e.Cause)
}

func (e *Error) Unwrap() error { return e.Err }

// ServerName is the user-facing name of a --backend kind.
func ServerName(kind string) string {
	switch kind {
	case "", "ollama":
		return "Ollama"
	case "llamacpp":
		return "llama.cpp"
	case "openai":
		return "the OpenAI-compatible server"
	}
	return kind
}

// FromError returns the one-line form of err when err says the server
// could not be connected to (backend.ErrUnreachable, or a dial error of a
// plain HTTP client), and nil otherwise. kind is the --backend value, used
// when err does not name its backend.
func FromError(err error, kind, url string) *Error {
	if err == nil {
		return nil
	}
	var re *Error
	if errors.As(err, &re) {
		return re
	}
	var be *backend.Error
	if errors.As(err, &be) {
		if be.Kind != backend.KindUnreachable {
			return nil
		}
		if be.Backend != "" {
			kind = be.Backend
		}
	} else if !backend.IsDial(err) {
		return nil
	}
	return &Error{Server: ServerName(kind), URL: url, Cause: cause(err), Err: err}
}

// cause is the innermost reason, without Go's "dial tcp …: connect:"
// framing.
func cause(err error) string {
	var dns *net.DNSError
	if errors.As(err, &dns) {
		if dns.IsNotFound {
			return "no such host " + dns.Name
		}
		return dns.Err
	}
	var sys *os.SyscallError
	if errors.As(err, &sys) {
		return sys.Err.Error()
	}
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return errno.Error()
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return "no answer in time"
	}
	s := err.Error()
	if i := strings.LastIndex(s, ": "); i >= 0 {
		s = s[i+2:]
	}
	return s
}

// Probe checks that something answers HTTP at url before the first real
// request, so a command can fail with one line instead of a template
// warning and retries. Any HTTP answer counts, whatever its status: only
// a failure to connect is an error, of type *Error.
func Probe(ctx context.Context, kind, url string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return fmt.Errorf("reach: %s: %w", url, err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		if ctx.Err() != nil && !backend.IsDial(err) {
			return &Error{Server: ServerName(kind), URL: url, Cause: fmt.Sprintf("no answer within %s", timeout), Err: err}
		}
		return &Error{Server: ServerName(kind), URL: url, Cause: cause(err), Err: err}
	}
	resp.Body.Close()
	return nil
}

package replay

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	"github.com/toolharness/toolharness/backend"
)

// Replayer is a backend that answers from a recording: call i gets the
// recording's exchange i, after its request is checked against the
// recorded one. Chunks arrive with their recorded boundaries, at once.
type Replayer struct {
	mu      sync.Mutex
	entries []entry
	next    int
	caps    backend.Capabilities
}

var (
	_ backend.Backend      = (*Replayer)(nil)
	_ backend.ContextSizer = (*Replayer)(nil)
	_ backend.TokenCounter = (*Replayer)(nil)
)

// MaxLine bounds one line of a recording (one exchange).
const MaxLine = 256 << 20

// NewReplayer reads a whole recording from r.
func NewReplayer(r io.Reader) (*Replayer, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), MaxLine)
	p := &Replayer{}
	line, version := 0, 0
	for sc.Scan() {
		line++
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		var e entry
		d := json.NewDecoder(bytes.NewReader(b))
		d.DisallowUnknownFields()
		if err := d.Decode(&e); err != nil {
			return nil, fmt.Errorf("replay: line %d: %w", line, err)
		}
		if line == 1 {
			if e.Type != typeHeader {
				return nil, fmt.Errorf("replay: line 1 is a %q entry, want the header", e.Type)
			}
			if e.Version < minVersion || e.Version > Version {
				return nil, fmt.Errorf("replay: recording format version %d, this build reads versions %d to %d", e.Version, minVersion, Version)
			}
			version = e.Version
			p.caps = e.Capabilities.capabilities()
			continue
		}
		switch e.Type {
		case typeGenerate:
			if e.Request == nil {
				return nil, fmt.Errorf("replay: line %d: generate entry without a request", line)
			}
			// The backend contract: the text is exactly the chunks joined.
			if e.Response != nil && e.Response.Text != strings.Join(e.Chunks, "") {
				return nil, fmt.Errorf("replay: line %d: response text is not its chunks joined", line)
			}
			if f := e.v2Fields(); f != "" && version < 2 {
				return nil, fmt.Errorf("replay: line %d: %s in a version %d recording", line, f, version)
			}
			if f := e.v3Fields(); f != "" && version < 3 {
				return nil, fmt.Errorf("replay: line %d: %s in a version %d recording", line, f, version)
			}
			if f := e.v4Fields(); f != "" && version < 4 {
				return nil, fmt.Errorf("replay: line %d: %s in a version %d recording", line, f, version)
			}
		case typeContextSize, typeCountTokens:
		default:
			return nil, fmt.Errorf("replay: line %d: unknown entry type %q", line, e.Type)
		}
		p.entries = append(p.entries, e)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("replay: after line %d: %w", line, err)
	}
	if line == 0 {
		return nil, fmt.Errorf("replay: empty recording")
	}
	return p, nil
}

// Open reads the recording at path.
func Open(path string) (*Replayer, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("replay: %w", err)
	}
	defer f.Close()
	return NewReplayer(f)
}

// Remaining is the number of recorded exchanges not replayed yet.
func (p *Replayer) Remaining() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.entries) - p.next
}

// Done reports an error when exchanges of the recording were never
// replayed: the session took a shorter path than the recorded one.
func (p *Replayer) Done() error {
	if n := p.Remaining(); n > 0 {
		return fmt.Errorf("replay: %d recorded exchanges were not replayed", n)
	}
	return nil
}

// Capabilities are the recorded backend's at this point of the session.
func (p *Replayer) Capabilities() backend.Capabilities {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.caps
}

// take returns the next exchange when it is of type typ, and advances.
func (p *Replayer) take(typ string, check func(*entry) error) (*entry, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	call := p.next + 1
	if p.next >= len(p.entries) {
		return nil, &MismatchError{Call: call, Field: "call", Offset: -1, Recorded: "end of recording", Got: typ}
	}
	e := &p.entries[p.next]
	if e.Type != typ {
		return nil, &MismatchError{Call: call, Field: "call", Offset: -1, Recorded: e.Type, Got: typ}
	}
	if err := check(e); err != nil {
		return nil, err
	}
	p.next++
	if e.Capabilities != nil {
		p.caps = e.Capabilities.capabilities()
	}
	return e, nil
}

// Generate replays the next exchange, which must be a generate call with
// an equal request.
func (p *Replayer) Generate(ctx context.Context, req backend.Request, onChunk func(string) error) (backend.Response, error) {
	got := toWireRequest(req)
	var call int
	e, err := p.take(typeGenerate, func(e *entry) error {
		call = p.next + 1
		return compareRequests(call, e.Request, got)
	})
	if err != nil {
		return backend.Response{}, err
	}
	var resp backend.Response
	for i, c := range e.Chunks {
		resp.Text += c
		if onChunk == nil {
			continue
		}
		if err := onChunk(c); err != nil {
			return partial(e, resp), err
		}
		if e.Error != nil && e.Error.Callback && i+1 == e.Error.AfterChunk {
			return partial(e, resp), &MismatchError{Call: call, Field: "callback", Offset: -1,
				Recorded: fmt.Sprintf("stopped the stream after chunk %d", i+1), Got: "went on"}
		}
	}
	return e.Response.response(), e.Error.err()
}

// partial is the response when the caller's callback stopped the replay:
// the recorded response with the text delivered so far.
func partial(e *entry, soFar backend.Response) backend.Response {
	r := e.Response.response()
	r.Text = soFar.Text
	return r
}

// ContextSize replays the next exchange, a context_size call for model.
func (p *Replayer) ContextSize(ctx context.Context, model string) (int, error) {
	e, err := p.take(typeContextSize, func(e *entry) error {
		if e.Model != model {
			return &MismatchError{Call: p.next + 1, Field: "model", Offset: -1, Recorded: quote(e.Model), Got: quote(model)}
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	return e.Result, e.Error.err()
}

// CountTokens replays the next exchange, a count_tokens call of text.
func (p *Replayer) CountTokens(ctx context.Context, model, text string) (int, error) {
	e, err := p.take(typeCountTokens, func(e *entry) error {
		if e.Model != model {
			return &MismatchError{Call: p.next + 1, Field: "model", Offset: -1, Recorded: quote(e.Model), Got: quote(model)}
		}
		if e.Text != text {
			return textMismatch(p.next+1, "text", e.Text, text)
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	return e.Result, e.Error.err()
}

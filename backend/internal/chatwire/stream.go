package chatwire

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/toolharness/toolharness/backend"
	"github.com/toolharness/toolharness/backend/internal/transport"
	"github.com/toolharness/toolharness/chat"
)

// StreamOptions is the API's stream_options: include_usage asks for a
// last event that carries the usage (and, on llama-server, the timings).
type StreamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

// StreamChunk is one event of a streamed OpenAI-style /chat/completions
// in server mode.
type StreamChunk struct {
	Choices []struct {
		Delta struct {
			Content   *string     `json:"content"`
			ToolCalls []DeltaCall `json:"tool_calls"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage   *Usage          `json:"usage"`
	Timings *Timings        `json:"timings"` // llama-server's
	Error   json.RawMessage `json:"error"`
}

// DeltaCall is one piece of a streamed tool call: the first piece of a
// call carries its index, id and name, later ones more of its arguments
// (OpenAI, llama-server); some servers send each call whole in one piece
// (Ollama's /v1), some without an index.
type DeltaCall struct {
	Index    *int   `json:"index"`
	ID       string `json:"id"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// Calls puts streamed call pieces back together.
type Calls struct {
	calls []partialCall
}

type partialCall struct {
	index    int // -1: the server sent none
	id, name string
	args     []byte
}

// Add takes the pieces of one event. A piece belongs to the call of its
// index; without an index, to the last call unless it carries an id of
// its own. A piece that names a call already named otherwise, or gives it
// a second id, is an error: the calls could not be told apart.
func (a *Calls) Add(pieces []DeltaCall) error {
	for _, d := range pieces {
		p := a.find(d)
		if p == nil {
			idx := -1
			if d.Index != nil {
				idx = *d.Index
			}
			a.calls = append(a.calls, partialCall{index: idx})
			p = &a.calls[len(a.calls)-1]
		}
		switch {
		case d.ID != "" && p.id != "" && d.ID != p.id:
			return fmt.Errorf("tool call %d: a second id %q after %q", len(a.calls)-1, d.ID, p.id)
		case d.Function.Name != "" && p.name != "" && d.Function.Name != p.name:
			return fmt.Errorf("tool call %d: a second name %q after %q", len(a.calls)-1, d.Function.Name, p.name)
		}
		if d.ID != "" {
			p.id = d.ID
		}
		if d.Function.Name != "" {
			p.name = d.Function.Name
		}
		p.args = append(p.args, d.Function.Arguments...)
	}
	return nil
}

// find is the call a piece continues, nil for a new one.
func (a *Calls) find(d DeltaCall) *partialCall {
	if d.Index != nil {
		for i := range a.calls {
			if a.calls[i].index == *d.Index {
				return &a.calls[i]
			}
		}
		return nil
	}
	if len(a.calls) == 0 {
		return nil
	}
	last := &a.calls[len(a.calls)-1]
	if d.ID != "" && last.id != "" && d.ID != last.id {
		return nil
	}
	return last
}

// Done returns the calls read as ReadCall reads a whole answer's.
func (a *Calls) Done() []chat.ToolCall {
	var out []chat.ToolCall
	for i := range a.calls {
		p := &a.calls[i]
		out = append(out, ReadCall(p.id, p.name, json.RawMessage(p.args)))
	}
	return out
}

// ChatStream reads a streamed server-mode /chat/completions answer, one
// event at a time: text deltas go to the caller as they come, call
// pieces are put together, and the last usage (and llama-server's
// timings) seen is kept.
type ChatStream struct {
	backend  string
	out      *transport.Delivery
	start    time.Time
	first    time.Duration // first delta of text or call
	calls    Calls
	resp     backend.Response
	finished bool
	sawDone  bool
	n        int
	// serverError turns an event's error object into the backend's error
	// (each backend reads its server's error shape).
	serverError func(data []byte) error
}

// NewChatStream starts reading an answer requested at start, delivering
// text to out; serverError makes the error of an event that carries one.
func NewChatStream(backendName string, start time.Time, out *transport.Delivery, serverError func([]byte) error) *ChatStream {
	return &ChatStream{backend: backendName, out: out, start: start, serverError: serverError}
}

// Event handles the data of one event; io.EOF after [DONE].
func (s *ChatStream) Event(data []byte) error {
	data = bytes.TrimSpace(data)
	if string(data) == "[DONE]" {
		s.sawDone = true
		return io.EOF
	}
	if len(data) == 0 {
		return nil
	}
	s.n++
	var c StreamChunk
	if err := json.Unmarshal(data, &c); err != nil {
		return &backend.Error{Kind: backend.KindBadResponse, Backend: s.backend, Consumed: s.out.Consumed(),
			Err: fmt.Errorf("decode stream event %d: %w (%.200q)", s.n, err, data)}
	}
	if len(c.Error) > 0 && string(c.Error) != "null" {
		return s.serverError(data)
	}
	cacheN, promptN := applyTimings(&s.resp.Usage, c.Timings)
	if c.Usage != nil || cacheN != nil {
		ApplyUsage(&s.resp.Usage, c.Usage, cacheN, promptN)
	}
	for _, ch := range c.Choices {
		text := ""
		if ch.Delta.Content != nil {
			text = *ch.Delta.Content
		}
		if (text != "" || len(ch.Delta.ToolCalls) > 0) && s.first == 0 {
			s.first = time.Since(s.start)
		}
		if err := s.calls.Add(ch.Delta.ToolCalls); err != nil {
			return &backend.Error{Kind: backend.KindBadResponse, Backend: s.backend, Consumed: s.out.Consumed(), Err: err}
		}
		if err := s.out.Send(text); err != nil {
			return err
		}
		if r := ch.FinishReason; r != nil && *r != "" {
			s.finished, s.resp.StopReason = true, *r
			if s.resp.StopReason == "tool_calls" {
				s.resp.StopReason = "stop" // as Completion.Response says
			}
		}
	}
	return nil
}

// Result is the answer read: the text delivered, the calls put together,
// the usage; a stream that ended before a finish reason or [DONE] is a
// cut (KindStreamCut), with what arrived.
func (s *ChatStream) Result() (backend.Response, error) {
	r := s.resp
	r.Text = s.out.Text()
	r.ToolCalls = s.calls.Done()
	r.Usage.TimeToFirstChunk = s.first
	r.Usage.Total = time.Since(s.start)
	if !s.finished && !s.sawDone {
		return r, &backend.Error{Kind: backend.KindStreamCut, Backend: s.backend, Consumed: s.out.Consumed(),
			Message: fmt.Sprintf("stream ended after %d events without finish_reason or [DONE]", s.n)}
	}
	return r, nil
}

// Read reads the whole stream from body, through the watchdog: the
// answer with the server's or the caller's own error as it is, and a
// failed read as a cut stream.
func (s *ChatStream) Read(w *transport.Watchdog, body io.Reader) (backend.Response, error) {
	err := ReadEvents(w.Reader(body), s.Event)
	resp, rerr := s.Result()
	if cause, ok := transport.CallbackCause(err); ok {
		return resp, cause // the caller's own error, returned as it is
	}
	var be *backend.Error
	switch {
	case errors.As(err, &be):
		return resp, be
	case err != nil && err != io.EOF:
		return resp, w.Fail(err, backend.KindStreamCut, s.out.Consumed())
	}
	return resp, rerr
}

// ReadEvents calls fn with the data of each server-sent event (data lines
// joined by newlines, dispatched at a blank line or at the end). It
// returns fn's error, the read error, or nil at the end of the body.
// Comments (":"), event:, id: and retry: lines carry nothing here.
func ReadEvents(r io.Reader, fn func(data []byte) error) error {
	br := bufio.NewReader(r)
	var data []byte
	have := false
	dispatch := func() error {
		if !have {
			return nil
		}
		d := data
		data, have = nil, false
		return fn(d)
	}
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			line = bytes.TrimRight(line, "\r\n")
			switch {
			case len(line) == 0:
				if derr := dispatch(); derr != nil {
					return derr
				}
			case bytes.HasPrefix(line, []byte("data:")):
				v := bytes.TrimPrefix(bytes.TrimPrefix(line, []byte("data:")), []byte(" "))
				if have {
					data = append(data, '\n')
				}
				data, have = append(data, v...), true
			}
		}
		if err == io.EOF {
			return dispatch()
		}
		if err != nil {
			return err
		}
	}
}

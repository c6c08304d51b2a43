package registry

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/toolharness/toolharness/chat"
)

// Approver decides whether a side-effecting call may run. The CLI asks
// the user; ApproveAll (--yes) and DenyAll (--deny) answer without asking.
type Approver interface {
	Approve(ctx context.Context, call chat.ToolCall) (bool, error)
}

// ApproverFunc adapts a function to Approver.
type ApproverFunc func(ctx context.Context, call chat.ToolCall) (bool, error)

// Approve calls f.
func (f ApproverFunc) Approve(ctx context.Context, call chat.ToolCall) (bool, error) {
	return f(ctx, call)
}

// ApproveAll approves every call.
type ApproveAll struct{}

// Approve returns true.
func (ApproveAll) Approve(context.Context, chat.ToolCall) (bool, error) { return true, nil }

// DenyAll refuses every call.
type DenyAll struct{}

// Approve returns false.
func (DenyAll) Approve(context.Context, chat.ToolCall) (bool, error) { return false, nil }

// Outcome is what became of one call.
type Outcome struct {
	// Call is the call as validated (coerced arguments), or as given when
	// validation failed.
	Call chat.ToolCall
	// Result goes back to the model; for a failure its Content is the
	// model-facing message and IsError is set.
	Result chat.ToolResult
	// Err is nil on success; its Kind says what failed.
	Err       *Error
	Coercions []Coercion
	// Truncated is set when the result was cut to Options.MaxResultBytes.
	Truncated bool
	// Duplicate is set when the call id had already run: nothing ran again
	// and Result is the earlier one.
	Duplicate bool
	// Ran is set when the handler was invoked.
	Ran      bool
	Duration time.Duration
}

// Ran reports whether a call with this id has run in this registry.
func (r *Registry) Ran(callID string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	_, ok := r.executed[callID]
	return ok
}

// Execute validates and runs the calls of one turn, concurrently up to
// Options.MaxConcurrency, and returns one Outcome per call in call order.
func (r *Registry) Execute(ctx context.Context, calls []chat.ToolCall) []Outcome {
	out := make([]Outcome, len(calls))
	sem := make(chan struct{}, r.opts.MaxConcurrency)
	var wg sync.WaitGroup
	for i, c := range calls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case sem <- struct{}{}:
				defer func() { <-sem }()
				out[i] = r.ExecuteOne(ctx, c)
			case <-ctx.Done():
				out[i] = r.fail(c, &Error{Kind: KindCanceled, Tool: c.Name, CallID: c.ID, Err: ctx.Err(),
					Message: "Error: the call was canceled before it ran."})
			}
		}()
	}
	wg.Wait()
	return out
}

// ExecuteOne validates and runs one call. A call id that already ran is
// not run again: the earlier outcome comes back with Duplicate set. Calls
// without an id are not tracked.
func (r *Registry) ExecuteOne(ctx context.Context, call chat.ToolCall) Outcome {
	if call.ID != "" {
		o, done, err := r.claim(ctx, call.ID)
		if err != nil {
			return r.fail(call, err)
		}
		if done {
			o.Duplicate = true
			return o
		}
	}
	o := r.execute(ctx, call)
	if call.ID != "" {
		r.release(call.ID, o)
	}
	return o
}

// claim returns the earlier outcome of id, waiting for a concurrent run of
// the same id to end; or marks id as running and returns false.
func (r *Registry) claim(ctx context.Context, id string) (Outcome, bool, *Error) {
	for {
		r.mu.Lock()
		if o, ok := r.executed[id]; ok {
			r.mu.Unlock()
			return *o, true, nil
		}
		wait, busy := r.running[id]
		if !busy {
			r.running[id] = make(chan struct{})
			r.mu.Unlock()
			return Outcome{}, false, nil
		}
		r.mu.Unlock()
		select {
		case <-wait:
		case <-ctx.Done():
			return Outcome{}, false, &Error{Kind: KindCanceled, CallID: id, Err: ctx.Err(),
				Message: "Error: the call was canceled."}
		}
	}
}

// release records o when the handler ran (so the id never runs again) and
// wakes waiters. A call refused before running may be sent again.
func (r *Registry) release(id string, o Outcome) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if o.Ran {
		cp := o
		r.executed[id] = &cp
	}
	if ch, ok := r.running[id]; ok {
		close(ch)
		delete(r.running, id)
	}
}

func (r *Registry) fail(call chat.ToolCall, e *Error) Outcome {
	return Outcome{Call: call, Err: e,
		Result: chat.ToolResult{CallID: call.ID, Name: call.Name, Content: e.Message, IsError: true}}
}

func (r *Registry) execute(ctx context.Context, call chat.ToolCall) Outcome {
	if err := ctx.Err(); err != nil {
		return r.fail(call, &Error{Kind: KindCanceled, Tool: call.Name, CallID: call.ID, Err: err,
			Message: "Error: the call was canceled before it ran."})
	}
	v, err := r.Validate(call)
	if err != nil {
		var e *Error
		if !errors.As(err, &e) {
			e = &Error{Kind: KindInvalidArguments, Tool: call.Name, CallID: call.ID, Err: err, Message: err.Error()}
		}
		e.CallID = call.ID
		return r.fail(call, e)
	}
	ent, _ := r.lookup(call.Name)
	if ent.spec.SideEffects {
		ok, err := r.approve(ctx, v.Call)
		if err != nil || !ok {
			msg := "Error: the user did not approve this call; it did not run. Do not retry it unchanged."
			o := r.fail(v.Call, &Error{Kind: KindDenied, Tool: call.Name, CallID: call.ID, Err: err, Message: msg})
			o.Coercions = v.Coercions
			return o
		}
	}
	timeout := r.opts.CallTimeout
	if ent.spec.Timeout > 0 {
		timeout = ent.spec.Timeout
	}
	start := time.Now()
	res, herr := r.run(ctx, ent.spec.Handler, v, timeout)
	o := Outcome{Call: v.Call, Coercions: v.Coercions, Ran: true, Duration: time.Since(start)}
	if herr != nil {
		o.Err = herr
		o.Result = chat.ToolResult{CallID: call.ID, Name: call.Name, Content: herr.Message, IsError: true}
		return o
	}
	res, o.Truncated = capResult(res, r.opts.MaxResultBytes)
	o.Result = chat.ToolResult{CallID: call.ID, Name: call.Name, Content: res}
	return o
}

func (r *Registry) approve(ctx context.Context, call chat.ToolCall) (ok bool, err error) {
	if r.opts.Approver == nil {
		return false, nil
	}
	defer func() {
		if p := recover(); p != nil {
			ok, err = false, fmt.Errorf("registry: approver panicked: %v", p)
		}
	}()
	return r.opts.Approver.Approve(ctx, call)
}

type handlerResult struct {
	out string
	err error
	pan any
	stk []byte
}

// run calls the handler under the timeout, turning a panic into an error.
// When the timeout or the caller's context ends first, run returns at once;
// the handler's context is canceled so a well-behaved handler stops too.
func (r *Registry) run(ctx context.Context, h Handler, v Validated, timeout time.Duration) (string, *Error) {
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	done := make(chan handlerResult, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				done <- handlerResult{pan: p, stk: debug.Stack()}
			}
		}()
		out, err := h(cctx, v.Call.Arguments)
		done <- handlerResult{out: out, err: err}
	}()
	name, id := v.Call.Name, v.Call.ID
	var hr handlerResult
	select {
	case hr = <-done:
	case <-cctx.Done():
		// Prefer a result that raced with the deadline.
		select {
		case hr = <-done:
		default:
			return "", r.ctxError(ctx, name, id, timeout, cctx.Err())
		}
	}
	switch {
	case hr.pan != nil:
		return "", &Error{Kind: KindPanic, Tool: name, CallID: id,
			Err:     fmt.Errorf("registry: handler panic: %v\n%s", hr.pan, hr.stk),
			Message: fmt.Sprintf("Error: the tool %s failed internally (%v).", name, hr.pan)}
	case hr.err != nil:
		if cctx.Err() != nil && errors.Is(hr.err, cctx.Err()) {
			return "", r.ctxError(ctx, name, id, timeout, hr.err)
		}
		return "", &Error{Kind: KindToolError, Tool: name, CallID: id, Err: hr.err,
			Message: "Error: " + hr.err.Error()}
	}
	return hr.out, nil
}

func (r *Registry) ctxError(parent context.Context, name, id string, timeout time.Duration, err error) *Error {
	if parent.Err() != nil {
		return &Error{Kind: KindCanceled, Tool: name, CallID: id, Err: parent.Err(),
			Message: "Error: the call was canceled while it ran."}
	}
	return &Error{Kind: KindTimeout, Tool: name, CallID: id, Err: err,
		Message: fmt.Sprintf("Error: the tool %s did not finish within %s and was stopped.", name, timeout)}
}

// capResult cuts s to at most max bytes (on a rune boundary) and says so,
// so the model knows it is not seeing everything.
func capResult(s string, max int) (string, bool) {
	if max < 0 || len(s) <= max {
		return s, false
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	var b strings.Builder
	b.WriteString(s[:cut])
	fmt.Fprintf(&b, "\n[output cut: showing the first %d of %d bytes; narrow the request to see the rest]", cut, len(s))
	return b.String(), true
}

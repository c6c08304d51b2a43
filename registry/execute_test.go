package registry

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolharness/toolharness/chat"
)

func reg(t *testing.T, r *Registry, name string, h Handler, side bool) {
	t.Helper()
	if err := r.Register(Spec{Tool: chat.Tool{Name: name, Description: name + " tool.", Parameters: json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}}}`)}, Handler: h, SideEffects: side}); err != nil {
		t.Fatal(err)
	}
}

func TestExecuteConcurrentInOrder(t *testing.T) {
	r := New(Options{MaxConcurrency: 3})
	var running, peak atomic.Int32
	reg(t, r, "work", func(ctx context.Context, args json.RawMessage) (string, error) {
		n := running.Add(1)
		defer running.Add(-1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		var a struct{ N int }
		json.Unmarshal(args, &a)
		// Later calls finish first, so order must come from the ids.
		time.Sleep(time.Duration(10-a.N) * 5 * time.Millisecond)
		return fmt.Sprint("result ", a.N), nil
	}, false)
	var calls []chat.ToolCall
	for i := 0; i < 8; i++ {
		calls = append(calls, chat.ToolCall{ID: fmt.Sprint("c", i), Name: "work", Arguments: json.RawMessage(fmt.Sprintf(`{"n":%d}`, i))})
	}
	outs := r.Execute(context.Background(), calls)
	for i, o := range outs {
		if o.Result.CallID != calls[i].ID || o.Result.Content != fmt.Sprint("result ", i) || o.Err != nil {
			t.Errorf("outcome %d: %+v", i, o)
		}
	}
	if p := peak.Load(); p != 3 {
		t.Errorf("peak concurrency %d, want 3", p)
	}
}

func TestExecuteTimeoutPanicError(t *testing.T) {
	r := New(Options{CallTimeout: 50 * time.Millisecond})
	reg(t, r, "slow", func(ctx context.Context, _ json.RawMessage) (string, error) {
		<-ctx.Done()
		time.Sleep(10 * time.Millisecond)
		return "late", nil
	}, false)
	reg(t, r, "stuck", func(ctx context.Context, _ json.RawMessage) (string, error) {
		time.Sleep(2 * time.Second) // ignores its context
		return "late", nil
	}, false)
	reg(t, r, "boom", func(context.Context, json.RawMessage) (string, error) { panic("nil map") }, false)
	reg(t, r, "fail", func(context.Context, json.RawMessage) (string, error) { return "", errors.New("disk full") }, false)
	tests := []struct {
		name string
		kind Kind
		msg  string
	}{
		{"slow", KindTimeout, "Error: the tool slow did not finish within 50ms and was stopped."},
		{"stuck", KindTimeout, "Error: the tool stuck did not finish within 50ms and was stopped."},
		{"boom", KindPanic, "Error: the tool boom failed internally (nil map)."},
		{"fail", KindToolError, "Error: disk full"},
	}
	for _, tt := range tests {
		start := time.Now()
		o := r.ExecuteOne(context.Background(), chat.ToolCall{ID: tt.name, Name: tt.name})
		if o.Err == nil || o.Err.Kind != tt.kind || o.Result.Content != tt.msg || !o.Result.IsError {
			t.Errorf("%s: %+v", tt.name, o)
		}
		if d := time.Since(start); d > time.Second {
			t.Errorf("%s took %v; the timeout did not stop the wait", tt.name, d)
		}
	}
}

func TestExecuteCancel(t *testing.T) {
	r := New(Options{})
	started := make(chan struct{})
	reg(t, r, "wait", func(ctx context.Context, _ json.RawMessage) (string, error) {
		close(started)
		<-ctx.Done()
		return "", ctx.Err()
	}, false)
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-started; cancel() }()
	o := r.ExecuteOne(ctx, chat.ToolCall{ID: "1", Name: "wait"})
	if o.Err == nil || o.Err.Kind != KindCanceled {
		t.Fatalf("%+v", o)
	}
	o = r.ExecuteOne(ctx, chat.ToolCall{ID: "2", Name: "wait"})
	if o.Err == nil || o.Err.Kind != KindCanceled || o.Ran {
		t.Errorf("after cancel: %+v", o)
	}
}

func TestAtMostOnce(t *testing.T) {
	r := New(Options{})
	var runs atomic.Int32
	reg(t, r, "inc", func(context.Context, json.RawMessage) (string, error) {
		time.Sleep(5 * time.Millisecond)
		return fmt.Sprint("run ", runs.Add(1)), nil
	}, false)
	call := chat.ToolCall{ID: "same", Name: "inc"}
	// The same id in one batch, concurrently, and again in a retried turn.
	outs := r.Execute(context.Background(), []chat.ToolCall{call, call, call})
	again := r.ExecuteOne(context.Background(), call)
	if n := runs.Load(); n != 1 {
		t.Fatalf("ran %d times", n)
	}
	dups := 0
	for _, o := range append(outs, again) {
		if o.Result.Content != "run 1" {
			t.Errorf("result %q", o.Result.Content)
		}
		if o.Duplicate {
			dups++
		}
	}
	if dups != 3 || !r.Ran("same") {
		t.Errorf("duplicates %d, ran %v", dups, r.Ran("same"))
	}
	// A call refused by validation did not run, so it may come again.
	bad := chat.ToolCall{ID: "b", Name: "inc", Arguments: json.RawMessage(`{"n":"x"}`)}
	if o := r.ExecuteOne(context.Background(), bad); o.Ran || o.Err == nil || r.Ran("b") {
		t.Errorf("invalid call: %+v", o)
	}
}

func TestApproval(t *testing.T) {
	var mu sync.Mutex
	var asked []string
	ask := ApproverFunc(func(_ context.Context, c chat.ToolCall) (bool, error) {
		mu.Lock()
		defer mu.Unlock()
		asked = append(asked, c.Name)
		return c.ID == "yes", nil
	})
	for _, tt := range []struct {
		name     string
		approver Approver
		id       string
		side     bool
		ran      bool
	}{
		{"read-only never asks", ask, "no", false, true},
		{"asked yes", ask, "yes", true, true},
		{"asked no", ask, "no", true, false},
		{"nil denies", nil, "x", true, false},
		{"--yes", ApproveAll{}, "x", true, true},
		{"--deny", DenyAll{}, "x", true, false},
	} {
		r := New(Options{Approver: tt.approver})
		ran := false
		reg(t, r, "act", func(context.Context, json.RawMessage) (string, error) { ran = true; return "done", nil }, tt.side)
		o := r.ExecuteOne(context.Background(), chat.ToolCall{ID: tt.id, Name: "act"})
		if ran != tt.ran || o.Ran != tt.ran {
			t.Errorf("%s: ran %v, want %v", tt.name, ran, tt.ran)
		}
		if !tt.ran && (o.Err == nil || o.Err.Kind != KindDenied) {
			t.Errorf("%s: %+v", tt.name, o)
		}
	}
	if strings.Join(asked, ",") != "act,act" {
		t.Errorf("asked %v", asked)
	}
}

func TestResultCap(t *testing.T) {
	r := New(Options{MaxResultBytes: 10})
	reg(t, r, "big", func(context.Context, json.RawMessage) (string, error) { return "héllo wörld and more", nil }, false)
	o := r.ExecuteOne(context.Background(), chat.ToolCall{ID: "1", Name: "big"})
	want := "héllo wö\n[output cut: showing the first 10 of 22 bytes; narrow the request to see the rest]"
	if !o.Truncated || o.Result.Content != want {
		t.Errorf("got %q", o.Result.Content)
	}
	r = New(Options{MaxResultBytes: -1})
	reg(t, r, "big", func(context.Context, json.RawMessage) (string, error) { return strings.Repeat("x", 100000), nil }, false)
	if o := r.ExecuteOne(context.Background(), chat.ToolCall{ID: "1", Name: "big"}); o.Truncated || len(o.Result.Content) != 100000 {
		t.Errorf("uncapped: truncated %v len %d", o.Truncated, len(o.Result.Content))
	}
}

func TestPerToolTimeoutAndQueuedCancel(t *testing.T) {
	r := New(Options{CallTimeout: time.Hour, MaxConcurrency: 1})
	block := func(ctx context.Context, _ json.RawMessage) (string, error) {
		<-ctx.Done()
		return "", ctx.Err()
	}
	if err := r.Register(Spec{Tool: chat.Tool{Name: "quick"}, Handler: block, Timeout: 20 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	o := r.ExecuteOne(context.Background(), chat.ToolCall{ID: "t", Name: "quick"})
	if o.Err == nil || o.Err.Kind != KindTimeout || !strings.Contains(o.Result.Content, "20ms") {
		t.Fatalf("per-tool timeout: %+v", o)
	}
	// With one slot, one call waits in the queue; cancelling reports both
	// canceled and the queued one never runs.
	reg(t, r, "hold", block, false)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	outs := r.Execute(ctx, []chat.ToolCall{{ID: "1", Name: "hold"}, {ID: "2", Name: "hold"}})
	for i, o := range outs {
		if o.Err == nil || o.Err.Kind != KindCanceled {
			t.Errorf("call %d: %+v", i, o)
		}
	}
	// Which call gets the slot first is up to the scheduler; the other
	// must not have run.
	if outs[0].Ran == outs[1].Ran {
		t.Errorf("ran: %v and %v; want exactly one", outs[0].Ran, outs[1].Ran)
	}
}

func TestCoerceNull(t *testing.T) {
	r := New(Options{Coerce: true})
	if err := r.Register(Spec{Tool: chat.Tool{Name: "f", Parameters: json.RawMessage(`{"type":"object","properties":{"n":{"type":"null"},"s":{"type":["string","null"]}}}`)}, Handler: nop}); err != nil {
		t.Fatal(err)
	}
	v, err := r.Validate(chat.ToolCall{Name: "f", Arguments: json.RawMessage(`{"n":"null","s":"null"}`)})
	if err != nil {
		t.Fatal(err)
	}
	if string(v.Call.Arguments) != `{"n":null,"s":"null"}` || len(v.Coercions) != 1 {
		t.Errorf("got %s %v", v.Call.Arguments, v.Coercions)
	}
}

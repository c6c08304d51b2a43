package agent

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/toolharness/toolharness/backend"
	"github.com/toolharness/toolharness/chat"
)

// failingWriter accepts ok writes, then refuses every other.
type failingWriter struct{ ok int }

var errDiskFull = errors.New("disk full")

func (w *failingWriter) Write(p []byte) (int, error) {
	if w.ok == 0 {
		return 0, errDiskFull
	}
	w.ok--
	return len(p), nil
}

// TestTraceWriteErrorSurfaces: a trace record that cannot be written is
// an error of the exchange (ErrTrace, wrapping the writer's error), and
// the exchange itself is still complete. Each case fails a different
// record: the user line, a step, the exchange line.
func TestTraceWriteErrorSurfaces(t *testing.T) {
	tests := []struct {
		name string
		ok   int // records written before the failure
	}{
		{"user record", 0},
		{"step record", 1},
		{"exchange record", 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := &failingWriter{ok: tt.ok}
			h := newHarness(t, []reply{{text: "hello"}}, func(c *Config) { c.Trace = w })
			ex, err := h.s.Send(context.Background(), "hi")
			if !errors.Is(err, ErrTrace) || !errors.Is(err, errDiskFull) {
				t.Fatalf("err %v, want ErrTrace wrapping the write error", err)
			}
			if ex == nil || ex.Answer != "hello" || ex.Stop != StopAnswered {
				t.Errorf("exchange %+v, want the complete answered exchange", ex)
			}
		})
	}
	// A trace that writes is no error.
	h := newHarness(t, []reply{{text: "hello"}}, nil)
	if _, err := h.s.Send(context.Background(), "hi"); err != nil {
		t.Fatal(err)
	}
}

// TestLocalToolBadSchema: a local tool whose schema cannot be read is an
// error when the session is made (its required-parameter check would
// otherwise be skipped, and a call missing the parameter would run).
func TestLocalToolBadSchema(t *testing.T) {
	ran := false
	bad := LocalTool{
		Tool: chat.Tool{Name: "echo", Parameters: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}},"required":"text"}`)},
		Run:  func(context.Context, map[string]any) (string, error) { ran = true; return "", nil },
	}
	if _, err := addLocal(nil, []LocalTool{bad}); err == nil || !strings.Contains(err.Error(), `agent: local tool "echo": schema:`) {
		t.Fatalf("addLocal: %v, want an error naming the tool", err)
	}
	r, err := NewRenderer(RendererOptions{Template: "qwen2.5", Format: "hermes"})
	if err != nil {
		t.Fatal(err)
	}
	_, newErr := New(context.Background(), Config{Backend: &scriptBackend{}, Model: "m", Mode: backend.ModeRaw, Renderer: r,
		Env: testEnv, MaxTurns: 2, Local: []LocalTool{bad}})
	if newErr == nil || !strings.Contains(newErr.Error(), `local tool "echo"`) {
		t.Fatalf("New: %v, want an error naming the tool", newErr)
	}
	if ran {
		t.Error("the tool ran")
	}
}

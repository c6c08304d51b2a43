package replay

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/toolharness/toolharness/backend"
	"github.com/toolharness/toolharness/chat"
)

// serverBackend answers every request with one call, as a server's own
// parser would in server mode.
type serverBackend struct{}

func (serverBackend) Capabilities() backend.Capabilities {
	return backend.Capabilities{Chat: true, ServerTools: true}
}

func (serverBackend) Generate(context.Context, backend.Request, func(string) error) (backend.Response, error) {
	return backend.Response{StopReason: "stop", ToolCalls: []chat.ToolCall{{ID: "x1", Name: "f", Arguments: json.RawMessage(`{"a":1}`)}}}, nil
}

// TestServerModeRoundTrip: a server-mode session (tools, tool_choice,
// parallel_tool_calls, structured calls both ways) records and replays
// exactly, and a replay whose tools differ is a mismatch.
func TestServerModeRoundTrip(t *testing.T) {
	no := false
	req := backend.Request{Model: "m", Mode: backend.ModeServer, ToolChoice: "required", ParallelToolCalls: &no,
		Tools: []chat.Tool{{Name: "f", Parameters: json.RawMessage(`{"type":"object"}`)}},
		Messages: []chat.Message{{Role: chat.RoleUser, Content: "go"},
			{Role: chat.RoleAssistant, ToolCalls: []chat.ToolCall{{ID: "x0", Name: "f", Arguments: json.RawMessage(`{"a":0}`)}}},
			{Role: chat.RoleTool, ToolCallID: "x0", Name: "f", Content: "ok"}}}
	var buf bytes.Buffer
	rec, err := NewRecorder(serverBackend{}, &buf)
	if err != nil {
		t.Fatal(err)
	}
	live, err := rec.Generate(context.Background(), req, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	recording := buf.String()
	p, err := NewReplayer(strings.NewReader(recording))
	if err != nil {
		t.Fatal(err)
	}
	if !p.Capabilities().ServerTools {
		t.Error("server_tools capability lost")
	}
	got, err := p.Generate(context.Background(), req, nil)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(live, got); diff != "" {
		t.Errorf("(-live +replay):\n%s", diff)
	}
	p, err = NewReplayer(strings.NewReader(recording))
	if err != nil {
		t.Fatal(err)
	}
	other := req
	other.Tools = []chat.Tool{{Name: "g"}}
	var mm *MismatchError
	if _, err := p.Generate(context.Background(), other, nil); !errors.As(err, &mm) || !strings.HasPrefix(mm.Field, "tools") {
		t.Errorf("other tools: err %v", err)
	}
	old := strings.Replace(recording, `"version":4`, `"version":3`, 1)
	if _, err := NewReplayer(strings.NewReader(old)); err == nil || !strings.Contains(err.Error(), "in a version 3 recording") {
		t.Errorf("server-mode fields in a version-3 recording: err %v", err)
	}
}

package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolharness/toolharness/chat"
	"github.com/toolharness/toolharness/registry"
	"github.com/toolharness/toolharness/registry/mcp/mcptest"
)

// The test binary doubles as a real MCP server (mcptest): with
// mcptest.EnvServe set it serves over stdio and exits, so the tests start
// a separate process and talk to it through the SDK's command transport.
func TestMain(m *testing.M) {
	mcptest.ServeIfAsked()
	os.Exit(m.Run())
}

func TestStdioServer(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	r := registry.New(registry.Options{Approver: registry.ApproveAll{}})
	conn, err := Load(ctx, r, Server{Name: "calc", Command: []string{exe, "-test.run=^$"}, Env: []string{mcptest.EnvServe + "=1"}})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	checkTools(t, ctx, r)
}

func TestHTTPServer(t *testing.T) {
	srv := mcptest.NewServer()
	ts := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil))
	defer ts.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := ParseServer("calc=" + ts.URL)
	if err != nil {
		t.Fatal(err)
	}
	s.Deferred = true
	r := registry.New(registry.Options{Approver: registry.ApproveAll{}})
	conn, err := Load(ctx, r, s)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	checkTools(t, ctx, r)
	if !r.IsDeferred("mcp__calc__add") || len(r.CoreTools()) != 1 {
		t.Errorf("deferred MCP tools: core %v", r.CoreTools())
	}
}

func checkTools(t *testing.T, ctx context.Context, r *registry.Registry) {
	t.Helper()
	var names []string
	for _, tool := range r.Tools() {
		names = append(names, tool.Name)
	}
	if !strings.Contains(strings.Join(names, ","), "mcp__calc__add,mcp__calc__shout") {
		t.Fatalf("tools %v", names)
	}
	if r.SideEffects("mcp__calc__add") || !r.SideEffects("mcp__calc__shout") {
		t.Error("read-only hint not honoured")
	}
	outs := r.Execute(ctx, []chat.ToolCall{
		{ID: "1", Name: "mcp__calc__add", Arguments: json.RawMessage(`{"a":2,"b":40}`)},
		{ID: "2", Name: "mcp__calc__shout", Arguments: json.RawMessage(`{"text":"hi <there>"}`)},
		{ID: "3", Name: "mcp__calc__shout", Arguments: json.RawMessage(`{"text":""}`)},
		{ID: "4", Name: "mcp__calc__add", Arguments: json.RawMessage(`{"a":"2","b":40}`)},
	})
	want := []struct {
		content string
		kind    registry.Kind
	}{
		{"42", ""},
		{"HI <THERE>", ""},
		{"Error: nothing to shout", registry.KindToolError},
		{"", registry.KindInvalidArguments},
	}
	for i, o := range outs {
		var kind registry.Kind
		if o.Err != nil {
			kind = o.Err.Kind
		}
		if kind != want[i].kind || (want[i].content != "" && o.Result.Content != want[i].content) {
			t.Errorf("call %d: kind %q content %q", i+1, kind, o.Result.Content)
		}
	}
}

func TestParseServer(t *testing.T) {
	tests := []struct {
		in   string
		want Server
	}{
		{"npx -y @scope/server .", Server{Name: "npx", Command: []string{"npx", "-y", "@scope/server", "."}}},
		{"files=/usr/bin/fs-server --root=/tmp", Server{Name: "files", Command: []string{"/usr/bin/fs-server", "--root=/tmp"}}},
		{"https://mcp.example.com/mcp", Server{Name: "mcp_example_com", URL: "https://mcp.example.com/mcp"}},
	}
	for _, tt := range tests {
		got, err := ParseServer(tt.in)
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(got) != fmt.Sprint(tt.want) {
			t.Errorf("%q: got %+v want %+v", tt.in, got, tt.want)
		}
	}
	_, err := ParseServer("  ")
	var se *SpecError
	if !errors.As(err, &se) || err.Error() != "mcp: empty server spec" || se.Cause() != "empty server spec" {
		t.Errorf("empty spec: %v (%T)", err, err)
	}
	if ToolName("my server", "do.it") != "mcp__my_server__do_it" {
		t.Error(ToolName("my server", "do.it"))
	}
}

// TestInitTimeout checks that a server that never answers initialize (a
// stdio process that reads nothing, an HTTP endpoint that never replies)
// is an error naming it within the bound, not a hang.
func TestInitTimeout(t *testing.T) {
	hang := make(chan struct{})
	silent := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-hang:
		case <-r.Context().Done():
		}
	}))
	defer silent.Close()
	defer close(hang)
	tests := []struct {
		name   string
		server Server
	}{
		{"stdio", Server{Name: "sleeper", Command: []string{"sleep", "1000"}}},
		{"http", Server{Name: "silent", URL: silent.URL}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.server.Timeout = 300 * time.Millisecond
			start := time.Now()
			_, err := Connect(context.Background(), tt.server)
			if !errors.Is(err, ErrTimeout) {
				t.Fatalf("got %v, want ErrTimeout", err)
			}
			want := fmt.Sprintf("mcp: server %q did not answer initialize within 300ms", tt.server.Name)
			if !strings.HasPrefix(err.Error(), want) {
				t.Errorf("message %q, want it to start with %q", err, want)
			}
			if d := time.Since(start); d > 10*time.Second {
				t.Errorf("took %s", d)
			}
		})
	}
}

// stallingServer is the real test server, except that it never answers
// the given method (it waits until the test ends, whatever the client
// asks): a server stuck after initialize.
func stallingServer(t *testing.T, method string) string {
	srv := mcptest.NewServer()
	hang := make(chan struct{})
	srv.AddReceivingMiddleware(func(next sdk.MethodHandler) sdk.MethodHandler {
		return func(ctx context.Context, m string, req sdk.Request) (sdk.Result, error) {
			if m == method {
				<-hang
			}
			return next(ctx, m, req)
		}
	})
	ts := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil))
	t.Cleanup(ts.Close)
	t.Cleanup(func() { close(hang) })
	return ts.URL
}

// TestRequestTimeout checks that Server.Timeout bounds tools/list and
// tools/call as it bounds initialize: a server that answers initialize
// and then stalls is an error naming it and the request, not a hang.
func TestRequestTimeout(t *testing.T) {
	tests := []struct {
		method string
		want   string
	}{
		{"tools/list", `mcp: server "stuck" did not answer tools/list within 300ms`},
		{"tools/call", `mcp: server "stuck" did not answer tools/call add within 300ms`},
	}
	for _, tt := range tests {
		t.Run(tt.method, func(t *testing.T) {
			s := Server{Name: "stuck", URL: stallingServer(t, tt.method), Timeout: 300 * time.Millisecond}
			start := time.Now()
			r := registry.New(registry.Options{Approver: registry.ApproveAll{}})
			conn, err := Load(context.Background(), r, s)
			if err == nil {
				defer conn.Close()
				outs := r.Execute(context.Background(), []chat.ToolCall{{ID: "1", Name: "mcp__stuck__add", Arguments: json.RawMessage(`{"a":1,"b":2}`)}})
				if len(outs) != 1 || outs[0].Err == nil {
					t.Fatalf("tools/call answered: %+v", outs)
				}
				err = outs[0].Err
			}
			if !errors.Is(err, ErrTimeout) {
				t.Fatalf("got %v, want ErrTimeout", err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("message %q, want it to hold %q", err, tt.want)
			}
			if d := time.Since(start); d > 10*time.Second {
				t.Errorf("took %s", d)
			}
		})
	}
}

// TestToolSchema: a schema that does not encode as a JSON object is an
// error naming the tool, never a schema that turns validation off.
func TestToolSchema(t *testing.T) {
	tests := []struct {
		name   string
		schema any
		want   string // "" = accepted
		params string
	}{
		{name: "object", schema: map[string]any{"type": "object"}, params: `{"type":"object"}`},
		{name: "none", schema: nil, params: `{"type":"object","properties":{}}`},
		{name: "unencodable", schema: map[string]any{"maximum": math.NaN()}, want: `mcp: server "srv": tool "unencodable": input schema: `},
		{name: "not an object", schema: []any{"x"}, want: `mcp: server "srv": tool "not an object": input schema is ["x"], not a JSON object`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := toolOf("srv", &sdk.Tool{Name: tt.name, InputSchema: tt.schema})
			if tt.want != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
					t.Fatalf("got %v (schema %s), want an error starting %q", err, got.Parameters, tt.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if string(got.Parameters) != tt.params {
				t.Errorf("schema %s, want %s", got.Parameters, tt.params)
			}
		})
	}
}

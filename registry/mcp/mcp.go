// Package mcp loads tools from MCP servers (a stdio command or a
// streamable-HTTP URL) with the official Go SDK and registers them in a
// registry as mcp__SERVER__TOOL, deferred or not. Tools the server marks
// read-only (annotations.readOnlyHint) are registered read-only; all
// others are side-effecting and go through the approval hook.
//
//	s, err := mcp.ParseServer("files=npx -y @modelcontextprotocol/server-filesystem .")
//	conn, err := mcp.Load(ctx, r, s)   // connect, list tools, register them
//	defer conn.Close()
//
// Schemas are registered as the server sends them, re-encoded from the
// SDK's map form (so their keys come out sorted), and validated by the
// registry like any other tool's.
//
// Package mcptest is a real MCP server (the SDK's) for tests; the tests of
// this package and of `toolharness tools list --mcp` load tools from it.
package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolharness/toolharness/chat"
	"github.com/toolharness/toolharness/registry"
)

// Server says how to reach one MCP server.
type Server struct {
	// Name goes into tool names: mcp__Name__tool.
	Name string
	// Command is the argv of a stdio server; URL the endpoint of an HTTP
	// one. Exactly one is set.
	Command []string
	URL     string
	// Env is added to the command's environment.
	Env []string
	// Deferred registers the server's tools as deferred.
	Deferred bool
	// Timeout bounds the wait for the server's answer to every request:
	// initialize, tools/list and each tools/call (a server that never
	// answers would hang the command or the agent); 0 means
	// DefaultTimeout.
	Timeout time.Duration
}

// DefaultTimeout is the request bound of a Server without one.
const DefaultTimeout = 30 * time.Second

// ErrTimeout is returned (wrapped) when a server does not answer a
// request (initialize, tools/list, tools/call) within Server.Timeout.
var ErrTimeout = errors.New("mcp: no answer in time")

// timeout is s.Timeout, or DefaultTimeout when unset.
func (s Server) timeout() time.Duration {
	if s.Timeout <= 0 {
		return DefaultTimeout
	}
	return s.Timeout
}

// request runs one request to the server under its deadline; a request
// that runs past it is an ErrTimeout naming the server and what was
// asked (the caller's own cancellation stays the caller's error).
func (s Server) request(ctx context.Context, what string, do func(context.Context) error) error {
	rctx, cancel := context.WithTimeout(ctx, s.timeout())
	defer cancel()
	err := do(rctx)
	if err != nil && ctx.Err() == nil && rctx.Err() != nil {
		return fmt.Errorf("mcp: server %q did not answer %s within %s: %w", s.Name, what, s.timeout(), ErrTimeout)
	}
	return err
}

// SpecError is a server spec ParseServer cannot read. Cause is the
// reason without the package's words, for a command that names the flag.
type SpecError struct {
	Msg string
	Err error
}

func (e *SpecError) Error() string { return "mcp: " + e.Msg }
func (e *SpecError) Unwrap() error { return e.Err }

// Cause is Error without the package's words.
func (e *SpecError) Cause() string { return e.Msg }

// ParseServer reads a --mcp value: "[NAME=]COMMAND ARGS…" or
// "[NAME=]http(s)://…"; a spec it cannot read is a *SpecError. Without
// NAME the name is the command's base name (or the URL's host).
func ParseServer(spec string) (Server, error) {
	spec = strings.TrimSpace(spec)
	var s Server
	if name, rest, ok := strings.Cut(spec, "="); ok && validName(name) {
		s.Name, spec = name, strings.TrimSpace(rest)
	}
	if spec == "" {
		return Server{}, &SpecError{Msg: "empty server spec"}
	}
	if strings.HasPrefix(spec, "http://") || strings.HasPrefix(spec, "https://") {
		u, err := url.Parse(spec)
		if err != nil {
			return Server{}, &SpecError{Msg: fmt.Sprintf("server URL %q: %v", spec, err), Err: err}
		}
		s.URL = spec
		if s.Name == "" {
			s.Name = u.Hostname()
		}
	} else {
		s.Command = strings.Fields(spec)
		if s.Name == "" {
			s.Name = filepath.Base(s.Command[0])
		}
	}
	s.Name = sanitize(s.Name)
	return s, nil
}

func validName(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !(r == '_' || r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

// sanitize keeps names within what every tool-call format accepts.
func sanitize(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r == '_' || r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

// ToolName is the registered name of an MCP tool.
func ToolName(server, tool string) string { return "mcp__" + sanitize(server) + "__" + sanitize(tool) }

// Conn is a live session with one MCP server.
type Conn struct {
	server  Server
	session *sdk.ClientSession
}

// Connect starts (or dials) the server and initializes the session. A
// server that does not answer initialize within s.Timeout is an error
// naming it (and a stdio server is stopped).
func Connect(ctx context.Context, s Server) (*Conn, error) {
	client := sdk.NewClient(&sdk.Implementation{Name: "toolharness", Version: "0"}, nil)
	var t sdk.Transport
	switch {
	case len(s.Command) > 0 && s.URL == "":
		cmd := exec.Command(s.Command[0], s.Command[1:]...)
		cmd.Env = append(os.Environ(), s.Env...)
		cmd.Stderr = os.Stderr
		t = &sdk.CommandTransport{Command: cmd}
	case s.URL != "" && len(s.Command) == 0:
		t = &sdk.StreamableClientTransport{Endpoint: s.URL, DisableStandaloneSSE: true}
	default:
		return nil, fmt.Errorf("mcp: server %q: set exactly one of a command and a URL", s.Name)
	}
	var sess *sdk.ClientSession
	err := s.request(ctx, "initialize", func(ctx context.Context) error {
		var err error
		sess, err = client.Connect(ctx, t, nil)
		return err
	})
	if errors.Is(err, ErrTimeout) {
		return nil, err
	}
	if err != nil {
		return nil, fmt.Errorf("mcp: connect to %q: %w", s.Name, err)
	}
	return &Conn{server: s, session: sess}, nil
}

// Close ends the session (and stops a stdio server).
func (c *Conn) Close() error {
	if err := c.session.Close(); err != nil {
		return fmt.Errorf("mcp: close %q: %w", c.server.Name, err)
	}
	return nil
}

// Tools lists the server's tools as chat tools (named mcp__server__tool)
// with whether each is read-only. The whole listing (every page) is
// bounded by the server's Timeout; a tool whose input schema cannot be
// used is an error naming it.
func (c *Conn) Tools(ctx context.Context) ([]Tool, error) {
	var out []Tool
	err := c.server.request(ctx, "tools/list", func(ctx context.Context) error {
		for t, err := range c.session.Tools(ctx, nil) {
			if err != nil {
				return fmt.Errorf("mcp: list tools of %q: %w", c.server.Name, err)
			}
			tool, err := toolOf(c.server.Name, t)
			if err != nil {
				return err
			}
			out = append(out, tool)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// toolOf is the registered form of one of server's tools. Its input
// schema must encode as a JSON object: anything else would register the
// tool without validation. A tool that sends no schema at all takes no
// arguments.
func toolOf(server string, t *sdk.Tool) (Tool, error) {
	schema, err := chat.Marshal(t.InputSchema)
	if err != nil {
		return Tool{}, fmt.Errorf("mcp: server %q: tool %q: input schema: %w", server, t.Name, err)
	}
	switch trimmed := strings.TrimSpace(string(schema)); {
	case trimmed == "null":
		schema = json.RawMessage(`{"type":"object","properties":{}}`)
	case !strings.HasPrefix(trimmed, "{"):
		return Tool{}, fmt.Errorf("mcp: server %q: tool %q: input schema is %.40s, not a JSON object", server, t.Name, trimmed)
	}
	return Tool{
		Tool:     chat.Tool{Name: ToolName(server, t.Name), Description: t.Description, Parameters: schema},
		Remote:   t.Name,
		ReadOnly: t.Annotations != nil && t.Annotations.ReadOnlyHint,
	}, nil
}

// Tool is one MCP tool as registered.
type Tool struct {
	chat.Tool
	// Remote is the tool's name on the server.
	Remote   string
	ReadOnly bool
}

// Register registers the server's tools in r.
func (c *Conn) Register(ctx context.Context, r *registry.Registry) error {
	tools, err := c.Tools(ctx)
	if err != nil {
		return err
	}
	for _, t := range tools {
		err := r.Register(registry.Spec{
			Tool:        t.Tool,
			Handler:     c.handler(t.Remote),
			SideEffects: !t.ReadOnly,
			Deferred:    c.server.Deferred,
		})
		if err != nil {
			return fmt.Errorf("mcp: server %q: %w", c.server.Name, err)
		}
	}
	return nil
}

// Load connects to s and registers its tools; close the returned Conn
// when the session ends.
func Load(ctx context.Context, r *registry.Registry, s Server) (*Conn, error) {
	c, err := Connect(ctx, s)
	if err != nil {
		return nil, err
	}
	if err := c.Register(ctx, r); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

func (c *Conn) handler(remote string) registry.Handler {
	return func(ctx context.Context, args json.RawMessage) (string, error) {
		var res *sdk.CallToolResult
		err := c.server.request(ctx, "tools/call "+remote, func(ctx context.Context) error {
			var err error
			res, err = c.session.CallTool(ctx, &sdk.CallToolParams{Name: remote, Arguments: args})
			return err
		})
		if errors.Is(err, ErrTimeout) {
			return "", err
		}
		if err != nil {
			return "", fmt.Errorf("mcp: %s: %w", remote, err)
		}
		text := resultText(res)
		if res.IsError {
			return "", errors.New(text)
		}
		return text, nil
	}
}

// resultText flattens a result to text: text parts as they are, other
// parts described, structured content as JSON when there is nothing else.
func resultText(res *sdk.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		switch x := c.(type) {
		case *sdk.TextContent:
			parts = append(parts, x.Text)
		case *sdk.ImageContent:
			parts = append(parts, fmt.Sprintf("[image %s, %d bytes]", x.MIMEType, len(x.Data)))
		case *sdk.AudioContent:
			parts = append(parts, fmt.Sprintf("[audio %s, %d bytes]", x.MIMEType, len(x.Data)))
		default:
			if b, err := chat.Marshal(c); err == nil {
				parts = append(parts, string(b))
			}
		}
	}
	if len(parts) == 0 && res.StructuredContent != nil {
		if b, err := chat.Marshal(res.StructuredContent); err == nil {
			parts = append(parts, string(b))
		}
	}
	return strings.Join(parts, "\n")
}

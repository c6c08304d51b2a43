// Package mcptest is a small, real MCP server for tests (the SDK's own
// server with two tools), so that tests of the mcp package and of the CLI
// load tools over a real transport rather than a fake.
//
// A test binary doubles as the stdio server: its TestMain calls
// ServeIfAsked first, and a test starts the binary again (os.Executable)
// with EnvServe=1 in its environment, e.g. as an --mcp command.
package mcptest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// EnvServe, set to "1", makes ServeIfAsked serve over stdio and exit.
const EnvServe = "TOOLHARNESS_TEST_MCP_SERVER"

type addArgs struct {
	A int `json:"a" jsonschema:"first addend"`
	B int `json:"b" jsonschema:"second addend"`
}

type echoArgs struct {
	Text string `json:"text"`
}

// NewServer returns a server with two tools: "add" (read-only, adds two
// integers) and "shout" (side-effecting by default, upper-cases its text
// and fails on empty text).
func NewServer() *sdk.Server {
	s := sdk.NewServer(&sdk.Implementation{Name: "testserver", Version: "1"}, nil)
	sdk.AddTool(s, &sdk.Tool{Name: "add", Description: "Add two integers.", Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true}},
		func(_ context.Context, _ *sdk.CallToolRequest, a addArgs) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: fmt.Sprint(a.A + a.B)}}}, nil, nil
		})
	sdk.AddTool(s, &sdk.Tool{Name: "shout", Description: "Echo text in upper case; fails on empty text."},
		func(_ context.Context, _ *sdk.CallToolRequest, a echoArgs) (*sdk.CallToolResult, any, error) {
			if a.Text == "" {
				return nil, nil, errors.New("nothing to shout")
			}
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: strings.ToUpper(a.Text)}}}, nil, nil
		})
	return s
}

// ServeIfAsked serves NewServer over stdio and exits the process when
// EnvServe is "1"; otherwise it returns at once.
func ServeIfAsked() {
	if os.Getenv(EnvServe) != "1" {
		return
	}
	if err := NewServer().Run(context.Background(), &sdk.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, "mcptest:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/toolharness/toolharness/chat"
	"github.com/toolharness/toolharness/registry"
	"github.com/toolharness/toolharness/registry/builtin"
	"github.com/toolharness/toolharness/registry/mcp"
)

// toolSources is what --tools, --mcp and friends ask for.
type toolSources struct {
	// Specs are --tools values: comma-separated builtin:GROUP, builtin
	// (= builtin:fs) and tool files.
	Specs     []string
	MCP       []string
	Workspace string
	BashAllow []string
	// Deferred lists tool names (or mcp server names) to register deferred.
	DeferredMCP bool
}

// errNoHandler is what a tool read from a file answers when run: a file
// only describes tools.
var errNoHandler = errors.New("this tool has no implementation in this harness (it was loaded from a catalog file)")

// loadRegistry builds a registry from the sources. The returned closer
// ends MCP sessions; call it when done.
func loadRegistry(ctx context.Context, src toolSources, opts registry.Options) (*registry.Registry, func(), error) {
	r := registry.New(opts)
	var conns []*mcp.Conn
	closeAll := func() {
		for _, c := range conns {
			c.Close()
		}
	}
	var groups []string
	for _, item := range splitList(src.Specs) {
		switch {
		case item == "builtin":
			groups = append(groups, builtin.GroupFS)
		case strings.HasPrefix(item, "builtin:"):
			groups = append(groups, strings.Split(strings.TrimPrefix(item, "builtin:"), "+")...)
		default:
			tools, err := chat.ReadToolsFile(item)
			if err != nil {
				return nil, closeAll, err
			}
			for _, t := range tools {
				if err := r.Register(registry.Spec{Tool: t, Handler: noHandler}); err != nil {
					return nil, closeAll, err
				}
			}
		}
	}
	if len(groups) > 0 {
		o := builtin.Options{Workspace: src.Workspace, BashAllow: src.BashAllow}
		if err := builtin.RegisterGroups(r, groups, o); err != nil {
			return nil, closeAll, err
		}
	}
	for _, m := range src.MCP {
		s, err := mcp.ParseServer(m)
		if err != nil {
			return nil, closeAll, err
		}
		s.Deferred = src.DeferredMCP
		c, err := mcp.Load(ctx, r, s)
		if err != nil {
			return nil, closeAll, err
		}
		conns = append(conns, c)
	}
	return r, closeAll, nil
}

func noHandler(context.Context, json.RawMessage) (string, error) { return "", errNoHandler }

// coercingFormats are the formats whose parameter values are raw text, so
// the registry's lossless coercions apply.
func coercingFormat(format string) bool {
	switch format {
	case "xml", "qwen3-coder", "tags":
		return true
	}
	return false
}

func describeTool(r *registry.Registry, t chat.Tool) string {
	kind := "read-only"
	if r.SideEffects(t.Name) {
		kind = "side effects"
	}
	return fmt.Sprintf("%s (%s)", t.Name, kind)
}

package builtin

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/toolharness/toolharness/registry"
)

// The named groups the CLI accepts as builtin:GROUP.
const (
	GroupFS   = "fs"   // read_file, list_dir, glob, grep, write_file, edit_file
	GroupBash = "bash" // bash (needs Options.Bash)
)

// Groups lists the group names.
func Groups() []string { return []string{GroupFS, GroupBash} }

// Options configure the built-in tools.
type Options struct {
	// Workspace is the root every file tool is confined to ("" = ".").
	Workspace string
	// Bash enables the bash tool; it is off otherwise.
	Bash bool
	// BashAllow lists the commands bash may run (the first word of the
	// command line). Empty means DefaultBashAllow; "*" allows any command
	// line, run with bash -c.
	BashAllow []string
	// BashSandbox is the path of bwrap (FindSandbox): bash commands then
	// run confined to the workspace, without network (sandboxArgs).
	// Empty runs them unconfined, as the user running toolharness.
	BashSandbox string
	// BashTimeout bounds one bash command (default 60s).
	BashTimeout time.Duration
	// Deferred registers the tools as deferred (loaded with tool_search).
	Deferred bool
}

// DefaultBashAllow is the allow-list used when Options.BashAllow is
// empty: commands that read and report.
func DefaultBashAllow() []string {
	return []string{"cat", "date", "echo", "find", "grep", "head", "ls", "pwd", "sort", "tail", "uniq", "wc"}
}

// Register registers every group: fs always, bash when Options.Bash.
func Register(r *registry.Registry, o Options) error {
	groups := []string{GroupFS}
	if o.Bash {
		groups = append(groups, GroupBash)
	}
	return RegisterGroups(r, groups, o)
}

// RegisterGroups registers the named groups. Asking for bash turns it on.
func RegisterGroups(r *registry.Registry, groups []string, o Options) error {
	ws, err := NewWorkspace(o.Workspace)
	if err != nil {
		return err
	}
	seen := map[string]bool{}
	for _, g := range groups {
		if seen[g] {
			continue
		}
		seen[g] = true
		switch g {
		case GroupFS:
			if err := registerFS(r, ws, o.Deferred); err != nil {
				return err
			}
		case GroupBash:
			if err := registerBash(r, ws, o); err != nil {
				return err
			}
		default:
			known := Groups()
			sort.Strings(known)
			return fmt.Errorf("builtin: unknown group %q (known: %s)", g, strings.Join(known, ", "))
		}
	}
	return nil
}

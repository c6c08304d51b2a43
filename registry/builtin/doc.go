// Package builtin provides the built-in tools: read_file, list_dir, glob
// and grep (read-only), write_file and edit_file (side-effecting), all
// confined to a workspace root, and bash (side-effecting, off unless
// enabled, limited to an allow-list of commands run without a shell).
//
// Confinement: a path is joined to the root when relative, cleaned, and
// refused when it leaves the root lexically ("../x", "/etc/passwd") or when
// its deepest existing ancestor resolves (filepath.EvalSymlinks) outside the
// root. Dangling symlinks are refused. glob and grep walk without following
// symlinks.
//
//	err := builtin.Register(r, builtin.Options{Workspace: dir, Bash: true, BashAllow: []string{"ls", "go"}})
//	err := builtin.RegisterGroups(r, []string{builtin.GroupFS}, builtin.Options{Workspace: dir})
//	ws, err := builtin.NewWorkspace(dir); p, err := ws.Resolve("a/b.txt")
package builtin

package builtin

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// ErrOutsideWorkspace is returned (wrapped) for any path that resolves
// outside the workspace root.
var ErrOutsideWorkspace = errors.New("path is outside the workspace")

// Workspace confines paths to a root directory.
type Workspace struct {
	root string // absolute, symlinks resolved
}

// NewWorkspace resolves root (absolute, symlinks evaluated); it must be an
// existing directory.
func NewWorkspace(root string) (Workspace, error) {
	if root == "" {
		root = "."
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return Workspace{}, fmt.Errorf("builtin: workspace %q: %w", root, err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return Workspace{}, fmt.Errorf("builtin: workspace %q: %w", root, err)
	}
	st, err := os.Stat(real)
	if err != nil {
		return Workspace{}, fmt.Errorf("builtin: workspace %q: %w", root, err)
	}
	if !st.IsDir() {
		return Workspace{}, fmt.Errorf("builtin: workspace %q is not a directory", root)
	}
	return Workspace{root: real}, nil
}

// Root is the resolved root directory.
func (w Workspace) Root() string { return w.root }

// Resolve maps a path the model gave (relative to the root, or absolute)
// to a real path inside the root. It refuses paths that leave the root
// lexically ("../x", "/etc/passwd") and paths whose deepest existing
// ancestor is a symlink (or sits under one) that leads outside. The path
// itself need not exist (write_file creates it). The check is made at call
// time; a concurrent process swapping a directory for a symlink between
// the check and the use is not defended against.
func (w Workspace) Resolve(p string) (string, error) {
	if strings.ContainsRune(p, 0) {
		return "", fmt.Errorf("invalid path %q: contains a NUL byte", p)
	}
	if p == "" {
		p = "."
	}
	full := p
	if !filepath.IsAbs(full) {
		full = filepath.Join(w.root, full)
	}
	full = filepath.Clean(full)
	if !w.inside(full) {
		return "", fmt.Errorf("%w: %q (the workspace is %s; use a path inside it)", ErrOutsideWorkspace, p, w.root)
	}
	// Find the deepest existing ancestor and resolve its symlinks; the
	// rest of the path does not exist yet, so it cannot be a link.
	existing, rest := full, ""
	for {
		if _, err := os.Lstat(existing); err == nil {
			break
		} else if !errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("path %q: %w", p, err)
		}
		parent := filepath.Dir(existing)
		if parent == existing {
			break
		}
		rest = filepath.Join(filepath.Base(existing), rest)
		existing = parent
	}
	real, err := filepath.EvalSymlinks(existing)
	if err != nil {
		// A dangling symlink: where it points is outside our knowledge.
		return "", fmt.Errorf("%w: %q is a symlink that cannot be resolved", ErrOutsideWorkspace, p)
	}
	resolved := filepath.Join(real, rest)
	if !w.inside(resolved) {
		return "", fmt.Errorf("%w: %q leads through a symlink to %s", ErrOutsideWorkspace, p, real)
	}
	return resolved, nil
}

func (w Workspace) inside(p string) bool {
	rel, err := filepath.Rel(w.root, p)
	if err != nil {
		return false
	}
	return rel == "." || (rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)))
}

// Rel writes a resolved path relative to the root, with forward slashes,
// for results shown to the model.
func (w Workspace) Rel(p string) string {
	rel, err := filepath.Rel(w.root, p)
	if err != nil {
		return p
	}
	return filepath.ToSlash(rel)
}

package builtin

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/toolharness/toolharness/registry"
)

const (
	maxReadBytes   = 256 << 10
	maxListEntries = 1000
	maxGlobMatches = 1000
	maxGrepMatches = 500
)

type readFileArgs struct {
	Path   string `json:"path" jsonschema_description:"file path relative to the workspace root"`
	Offset int    `json:"offset,omitempty" jsonschema:"minimum=1" jsonschema_description:"first line to read (1-based; default 1)"`
	Limit  int    `json:"limit,omitempty" jsonschema:"minimum=1" jsonschema_description:"number of lines to read (default: to the end)"`
}

type listDirArgs struct {
	Path string `json:"path,omitempty" jsonschema_description:"directory relative to the workspace root (default: the root)"`
}

type globArgs struct {
	Pattern string `json:"pattern" jsonschema_description:"glob pattern relative to the workspace root; * matches within a path segment and ** across segments (e.g. **/*.go)"`
}

type grepArgs struct {
	Pattern string `json:"pattern" jsonschema_description:"regular expression (RE2 syntax) to search for"`
	Path    string `json:"path,omitempty" jsonschema_description:"file or directory to search (default: the workspace root)"`
	Include string `json:"include,omitempty" jsonschema_description:"only search files whose name matches this glob (e.g. *.go)"`
}

type writeFileArgs struct {
	Path    string `json:"path" jsonschema_description:"file path relative to the workspace root; parent directories are created"`
	Content string `json:"content" jsonschema_description:"the complete new content of the file"`
}

type editFileArgs struct {
	Path       string `json:"path" jsonschema_description:"file path relative to the workspace root"`
	OldString  string `json:"old_string" jsonschema_description:"exact text to replace; must occur exactly once unless replace_all is true"`
	NewString  string `json:"new_string" jsonschema_description:"replacement text"`
	ReplaceAll bool   `json:"replace_all,omitempty" jsonschema_description:"replace every occurrence"`
}

func registerFS(r *registry.Registry, ws Workspace, deferred bool) error {
	ro := registry.Spec{Deferred: deferred}
	rw := registry.Spec{Deferred: deferred, SideEffects: true}
	for _, err := range []error{
		registry.RegisterFunc(r, "read_file", "Read a text file in the workspace. Returns its lines, optionally a range of them.", ws.readFile, ro),
		registry.RegisterFunc(r, "list_dir", "List a directory in the workspace; directories end with /.", ws.listDir, ro),
		registry.RegisterFunc(r, "glob", "Find files in the workspace whose path matches a glob pattern.", ws.glob, ro),
		registry.RegisterFunc(r, "grep", "Search file contents in the workspace with a regular expression; returns path:line: text.", ws.grep, ro),
		registry.RegisterFunc(r, "write_file", "Create or overwrite a file in the workspace with the given content.", ws.writeFile, rw),
		registry.RegisterFunc(r, "edit_file", "Replace exact text in a file in the workspace.", ws.editFile, rw),
	} {
		if err != nil {
			return fmt.Errorf("builtin: %w", err)
		}
	}
	return nil
}

func (w Workspace) readFile(_ context.Context, a readFileArgs) (string, error) {
	p, err := w.Resolve(a.Path)
	if err != nil {
		return "", err
	}
	st, err := os.Stat(p)
	if err != nil {
		return "", fmt.Errorf("cannot read %s: %w", a.Path, errors.Unwrap(err))
	}
	if st.IsDir() {
		return "", fmt.Errorf("%s is a directory; use list_dir", a.Path)
	}
	f, err := os.Open(p)
	if err != nil {
		return "", fmt.Errorf("cannot read %s: %w", a.Path, err)
	}
	defer f.Close()
	data := make([]byte, maxReadBytes+1)
	n, _ := io.ReadFull(f, data)
	data = data[:n]
	if bytes.IndexByte(data[:min(len(data), 8192)], 0) >= 0 {
		return "", fmt.Errorf("%s looks like a binary file", a.Path)
	}
	cut := len(data) > maxReadBytes
	if cut {
		data = data[:maxReadBytes]
	}
	lines := strings.SplitAfter(string(data), "\n")
	if len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	start := max(a.Offset, 1)
	if start > len(lines) && len(lines) > 0 {
		return "", fmt.Errorf("%s has %d lines; offset %d is past the end", a.Path, len(lines), a.Offset)
	}
	end := len(lines)
	if a.Limit > 0 && start-1+a.Limit < end {
		end = start - 1 + a.Limit
	}
	out := strings.Join(lines[min(start-1, len(lines)):end], "")
	if cut && end == len(lines) {
		out += fmt.Sprintf("\n[file longer than %d bytes; read further with offset]", maxReadBytes)
	}
	return out, nil
}

func (w Workspace) listDir(_ context.Context, a listDirArgs) (string, error) {
	p, err := w.Resolve(a.Path)
	if err != nil {
		return "", err
	}
	ents, err := os.ReadDir(p)
	if err != nil {
		return "", fmt.Errorf("cannot list %s: %w", orDot(a.Path), errors.Unwrap(err))
	}
	var b strings.Builder
	for i, e := range ents {
		if i == maxListEntries {
			fmt.Fprintf(&b, "[%d more entries not shown]\n", len(ents)-i)
			break
		}
		b.WriteString(e.Name())
		if e.IsDir() {
			b.WriteByte('/')
		}
		b.WriteByte('\n')
	}
	if len(ents) == 0 {
		return "(empty directory)", nil
	}
	return strings.TrimSuffix(b.String(), "\n"), nil
}

func (w Workspace) glob(ctx context.Context, a globArgs) (string, error) {
	pat := filepath.ToSlash(a.Pattern)
	if strings.HasPrefix(pat, "/") || pat == ".." || strings.HasPrefix(pat, "../") || strings.Contains(pat, "/../") {
		return "", fmt.Errorf("%w: pattern %q must be relative to the workspace and stay inside it", ErrOutsideWorkspace, a.Pattern)
	}
	if _, err := path.Match(strings.ReplaceAll(pat, "**", "*"), ""); err != nil {
		return "", fmt.Errorf("bad glob pattern %q: %w", a.Pattern, err)
	}
	var matches []string
	more := 0
	err := w.walk(ctx, w.root, func(rel string, d fs.DirEntry) {
		if matchGlob(pat, rel) {
			if len(matches) < maxGlobMatches {
				matches = append(matches, rel)
			} else {
				more++
			}
		}
	})
	if err != nil {
		return "", err
	}
	if len(matches) == 0 {
		return "no files match " + a.Pattern, nil
	}
	sort.Strings(matches)
	out := strings.Join(matches, "\n")
	if more > 0 {
		out += fmt.Sprintf("\n[%d more matches not shown]", more)
	}
	return out, nil
}

// walk visits the workspace below dir (not following symlinks, skipping
// .git), calling fn with slash-separated paths relative to the root.
func (w Workspace) walk(ctx context.Context, dir string, fn func(rel string, d fs.DirEntry)) error {
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // unreadable entries are skipped, not fatal
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if d.IsDir() && d.Name() == ".git" {
			return filepath.SkipDir
		}
		if p == w.root {
			return nil
		}
		fn(w.Rel(p), d)
		return nil
	})
}

// matchGlob matches a slash-separated path against a pattern where "**"
// spans any number of segments.
func matchGlob(pat, name string) bool {
	return matchSegs(strings.Split(pat, "/"), strings.Split(name, "/"))
}

func matchSegs(ps, ns []string) bool {
	for len(ps) > 0 {
		if ps[0] == "**" {
			for i := 0; i <= len(ns); i++ {
				if matchSegs(ps[1:], ns[i:]) {
					return true
				}
			}
			return false
		}
		if len(ns) == 0 {
			return false
		}
		if ok, _ := path.Match(ps[0], ns[0]); !ok {
			return false
		}
		ps, ns = ps[1:], ns[1:]
	}
	return len(ns) == 0
}

func (w Workspace) grep(ctx context.Context, a grepArgs) (string, error) {
	re, err := regexp.Compile(a.Pattern)
	if err != nil {
		return "", fmt.Errorf("bad regular expression %q: %w", a.Pattern, err)
	}
	p, err := w.Resolve(a.Path)
	if err != nil {
		return "", err
	}
	var out []string
	more := 0
	search := func(file string) {
		if a.Include != "" {
			if ok, _ := path.Match(a.Include, filepath.Base(file)); !ok {
				return
			}
		}
		f, err := os.Open(file)
		if err != nil {
			return
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for n := 1; sc.Scan(); n++ {
			line := sc.Bytes()
			if n == 1 && bytes.IndexByte(line, 0) >= 0 {
				return // binary
			}
			if re.Match(line) {
				if len(out) < maxGrepMatches {
					out = append(out, fmt.Sprintf("%s:%d: %s", w.Rel(file), n, truncLine(string(line))))
				} else {
					more++
				}
			}
		}
	}
	st, err := os.Stat(p)
	if err != nil {
		return "", fmt.Errorf("cannot search %s: %w", orDot(a.Path), errors.Unwrap(err))
	}
	if !st.IsDir() {
		search(p)
	} else if err := w.walk(ctx, p, func(rel string, d fs.DirEntry) {
		if d.Type().IsRegular() {
			search(filepath.Join(w.root, filepath.FromSlash(rel)))
		}
	}); err != nil {
		return "", err
	}
	if len(out) == 0 {
		return "no matches for " + a.Pattern, nil
	}
	res := strings.Join(out, "\n")
	if more > 0 {
		res += fmt.Sprintf("\n[%d more matches not shown]", more)
	}
	return res, nil
}

func truncLine(s string) string {
	if len(s) <= 300 {
		return s
	}
	cut := 300
	for cut > 0 && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut] + "…"
}

func (w Workspace) writeFile(_ context.Context, a writeFileArgs) (string, error) {
	p, err := w.Resolve(a.Path)
	if err != nil {
		return "", err
	}
	if st, err := os.Stat(p); err == nil && st.IsDir() {
		return "", fmt.Errorf("%s is a directory", a.Path)
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return "", fmt.Errorf("cannot create the directory of %s: %w", a.Path, err)
	}
	if err := os.WriteFile(p, []byte(a.Content), 0o644); err != nil {
		return "", fmt.Errorf("cannot write %s: %w", a.Path, err)
	}
	return fmt.Sprintf("wrote %d bytes to %s", len(a.Content), w.Rel(p)), nil
}

func (w Workspace) editFile(_ context.Context, a editFileArgs) (string, error) {
	if a.OldString == "" {
		return "", errors.New("old_string is empty; to create a file use write_file")
	}
	p, err := w.Resolve(a.Path)
	if err != nil {
		return "", err
	}
	data, err := os.ReadFile(p)
	if err != nil {
		return "", fmt.Errorf("cannot read %s: %w", a.Path, errors.Unwrap(err))
	}
	s := string(data)
	n := strings.Count(s, a.OldString)
	switch {
	case n == 0:
		return "", fmt.Errorf("old_string was not found in %s; read the file and copy the text exactly", a.Path)
	case n > 1 && !a.ReplaceAll:
		return "", fmt.Errorf("old_string occurs %d times in %s; add surrounding lines to make it unique, or set replace_all", n, a.Path)
	}
	if a.ReplaceAll {
		s = strings.ReplaceAll(s, a.OldString, a.NewString)
	} else {
		s = strings.Replace(s, a.OldString, a.NewString, 1)
	}
	st, err := os.Stat(p)
	if err != nil {
		return "", err
	}
	if err := os.WriteFile(p, []byte(s), st.Mode().Perm()); err != nil {
		return "", fmt.Errorf("cannot write %s: %w", a.Path, err)
	}
	return fmt.Sprintf("replaced %d occurrence(s) in %s", n, w.Rel(p)), nil
}

func orDot(p string) string {
	if p == "" {
		return "."
	}
	return p
}

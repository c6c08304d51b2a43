package agent

import (
	"flag"
	"path/filepath"
	"testing"

	goldenfile "github.com/toolharness/toolharness/internal/golden"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// golden compares got with testdata/name, rewriting it under -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	goldenfile.Check(t, *update, filepath.Join("testdata", name), got)
}

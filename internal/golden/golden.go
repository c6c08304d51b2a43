// Package golden compares test output with golden files under testdata/,
// rewriting them when a test runs with its package's -update flag. It is
// shared by the packages whose tests keep goldens, so each has one line
// where it used to have its own copy of this logic.
package golden

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Check compares got with the file at path. With update it first writes
// got to path (creating its directory), so the comparison then passes and
// the diff of the golden file shows in version control.
func Check(t testing.TB, update bool, path, got string) {
	t.Helper()
	if update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("golden: %v (run the package's tests with -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("golden: %s differs (-want +got):\n%s", path, diff)
	}
}

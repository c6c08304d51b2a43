package golden

import (
	"os"
	"path/filepath"
	"testing"
)

// recorder captures failures so Check's own failures can be asserted.
type recorder struct {
	testing.TB
	failed bool
}

func (r *recorder) Helper()               {}
func (r *recorder) Errorf(string, ...any) { r.failed = true }
func (r *recorder) Fatalf(string, ...any) { r.failed = true; panic(r) }
func (r *recorder) Fatal(...any)          { r.failed = true; panic(r) }

func check(update bool, path, got string) (failed bool) {
	r := &recorder{}
	defer func() {
		if p := recover(); p != nil && p != r {
			panic(p)
		}
		failed = r.failed
	}()
	Check(r, update, path, got)
	return r.failed
}

func TestCheck(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "a.golden")
	if !check(false, path, "x") {
		t.Error("missing golden file: no failure")
	}
	if check(true, path, "hello\n") {
		t.Error("update: failure")
	}
	if data, err := os.ReadFile(path); err != nil || string(data) != "hello\n" {
		t.Errorf("update wrote %q, %v", data, err)
	}
	if check(false, path, "hello\n") {
		t.Error("equal: failure")
	}
	if !check(false, path, "bye\n") {
		t.Error("different: no failure")
	}
}

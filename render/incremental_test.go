package render

import (
	"testing"
)

func TestIncrementalFamilies(t *testing.T) {
	for _, f := range families(t) {
		ok, why := Incremental(f, "")
		t.Logf("%s (%s): %v %s", f.Name, f.DefaultFormat, ok, why)
	}
}

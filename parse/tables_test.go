package parse

import (
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestSharedTablesSameEvents: a parser on the tables built once per format
// (tables.go) gives the events of one that compiles its own (asking for
// the default turn markers by name makes New compile them), in every
// format, strict and lenient, on the format and family cases.
func TestSharedTablesSameEvents(t *testing.T) {
	var ins []string
	for _, c := range formatCases {
		ins = append(ins, c.in)
	}
	for _, c := range allFamilyCases() {
		ins = append(ins, c.in)
	}
	for _, format := range Formats() {
		for _, strict := range []bool{false, true} {
			shared := Options{Strict: strict}
			own := Options{Strict: strict, TurnMarkers: TurnMarkers()}
			if sharedTables(format, shared) == nil || sharedTables(format, own) != nil {
				t.Fatalf("%s strict=%v: the shared tables are not where they should be", format, strict)
			}
			for _, in := range ins {
				want := collect(t, format, own, chunked(in, 3))
				if d := cmp.Diff(want, collect(t, format, shared, chunked(in, 3))); d != "" {
					t.Fatalf("%s strict=%v %q (-own +shared):\n%s", format, strict, in, d)
				}
			}
		}
	}
}

// TestSharedTablesConcurrent: parsers on the shared tables, in several
// goroutines at once, read them only (the race detector holds them to
// it) and give the events a lone parser gives.
func TestSharedTablesConcurrent(t *testing.T) {
	in := quickBase + benchInput(t, "hermes", 3000) + "\nHuman: more"
	for _, format := range []string{"hermes", "auto", "qwen3-coder", "glm45", "deepseek", "harmony"} {
		want := collect(t, format, Options{}, chunked(in, 4))
		var wg sync.WaitGroup
		errs := make(chan string, 8)
		for range 8 {
			wg.Go(func() {
				p, err := New(format, Options{})
				if err != nil {
					errs <- err.Error()
					return
				}
				if d := cmp.Diff(want, run(p, chunked(in, 4))); d != "" {
					errs <- d
				}
			})
		}
		wg.Wait()
		close(errs)
		for d := range errs {
			t.Fatalf("%s: concurrent parse differs:\n%s", format, d)
		}
	}
}

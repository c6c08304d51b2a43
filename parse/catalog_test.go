package parse

import (
	"encoding/json"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/toolharness/toolharness/chat"
)

// TestSharedCatalogSameEvents: a parser on a shared, frozen catalog
// (Options.Catalog) gives the events of one that decodes its own schemas, in every format,
// strict and lenient, on the format and family cases (values typed by
// the schema included), whole and in 3-byte chunks.
func TestSharedCatalogSameEvents(t *testing.T) {
	var ins []string
	for _, c := range formatCases {
		ins = append(ins, c.in)
	}
	for _, c := range allFamilyCases() {
		ins = append(ins, c.in)
	}
	typed := 0
	for _, format := range Formats() {
		for _, strict := range []bool{false, true} {
			o := Options{Strict: strict, Tools: testTools}
			for _, in := range ins {
				for _, chunks := range [][]string{{in}, chunked(in, 3)} {
					so := o
					so.Catalog = NewCatalog(testTools)
					shared, err := New(format, so)
					if err != nil {
						t.Fatal(err)
					}
					own, _ := New(format, o)
					want := run(own, chunks)
					if d := cmp.Diff(want, run(shared, chunks)); d != "" {
						t.Fatalf("%s strict=%v %q (-own +shared):\n%s", format, strict, in, d)
					}
					for _, ts := range own.tools {
						typed += len(ts.params)
					}
				}
			}
		}
	}
	if typed == 0 {
		t.Fatal("no parameter was typed by a schema: the comparison proves nothing")
	}
}

// TestCatalogOf: a catalog is of the tools it was built from, and no
// longer once they change in place (same slice, another schema); one
// built again reads the new schema.
func TestCatalogOf(t *testing.T) {
	tools := []chat.Tool{{Name: "f", Parameters: json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}}}`)}}
	in := "<tool_call>\n<function=f>\n<parameter=n>\n5\n</parameter>\n</function>\n</tool_call>"
	args := func(c *Catalog) string {
		p, err := New("qwen3-coder", Options{Tools: tools, Catalog: c})
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range run(p, []string{in}) {
			if e.Type == EventCall {
				return string(e.Call.Arguments)
			}
		}
		t.Fatal("no call")
		return ""
	}
	c := NewCatalog(tools)
	if !c.Of(tools) {
		t.Fatal("a catalog is not of the tools it was built from")
	}
	if got := args(c); got != `{"n":5}` {
		t.Fatalf("integer schema: arguments %s", got)
	}
	copy(tools[0].Parameters[len(`{"type":"object","properties":{"n":{"type":"`):], "string\"}}}  ")
	if c.Of(tools) {
		t.Fatal("a catalog is still of its tools after a schema changed in place")
	}
	if got := args(NewCatalog(tools)); got != `{"n":"5"}` {
		t.Fatalf("after the schema became a string: arguments %s, want the value as a string", got)
	}
	if (*Catalog)(nil).Of(tools) {
		t.Fatal("no catalog is of any tools")
	}
}

// TestSharedCatalogConcurrent: parsers sharing a catalog on several
// goroutines only read it (the race detector holds them to it).
func TestSharedCatalogConcurrent(t *testing.T) {
	in := quickBase + benchInput(t, "qwen3-coder", 3000)
	for _, format := range []string{"qwen3-coder", "xml", "auto"} {
		o := Options{Tools: testTools, Catalog: NewCatalog(testTools)}
		want := collect(t, format, Options{Tools: testTools}, chunked(in, 4))
		var wg sync.WaitGroup
		errs := make(chan string, 8)
		for range 8 {
			wg.Go(func() {
				p, err := New(format, o)
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

package parse

import (
	"encoding/json"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/toolharness/toolharness/chat"
)

// ownTools is the tools map as a parser built it before catalogs were
// shared: each schema decoded lazily, by this parser alone.
func ownTools(tools []chat.Tool) map[string]*toolSchema {
	m := make(map[string]*toolSchema, len(tools))
	for _, t := range tools {
		m[t.Name] = &toolSchema{name: t.Name, raw: t.Parameters}
	}
	return m
}

// TestSharedCatalogSameEvents: a parser on the shared, frozen catalog
// gives the events of one that decodes its own schemas, in every format,
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
					shared, err := New(format, o)
					if err != nil {
						t.Fatal(err)
					}
					own, _ := New(format, o)
					own.tools = ownTools(testTools)
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

// TestSharedCatalogFollowsChanges: a catalog changed in place between two
// parsers (same slice, another schema) is not the one shared before.
func TestSharedCatalogFollowsChanges(t *testing.T) {
	tools := []chat.Tool{{Name: "f", Parameters: json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}}}`)}}
	in := "<tool_call>\n<function=f>\n<parameter=n>\n5\n</parameter>\n</function>\n</tool_call>"
	args := func() string {
		p, err := New("qwen3-coder", Options{Tools: tools})
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
	if got := args(); got != `{"n":5}` {
		t.Fatalf("integer schema: arguments %s", got)
	}
	copy(tools[0].Parameters[len(`{"type":"object","properties":{"n":{"type":"`):], "string\"}}}  ")
	if got := args(); got != `{"n":"5"}` {
		t.Fatalf("after the schema became a string: arguments %s, want the value as a string", got)
	}
}

// TestSharedCatalogConcurrent: parsers sharing a catalog on several
// goroutines only read it (the race detector holds them to it).
func TestSharedCatalogConcurrent(t *testing.T) {
	in := quickBase + benchInput(t, "qwen3-coder", 3000)
	for _, format := range []string{"qwen3-coder", "xml", "auto"} {
		o := Options{Tools: testTools}
		want := collect(t, format, o, chunked(in, 4))
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

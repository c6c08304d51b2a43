package parse

import (
	"bytes"

	"github.com/toolharness/toolharness/chat"
)

// Catalog is a tool catalog read once for the parsers that share it: its
// tools by name, each schema decoded and every parameter's types worked
// out up front. The agent builds a parser for every generation, all with
// the same catalog; with Options.Catalog they read this one instead of
// each decoding the schemas again. Parsers never write it, so parsers on
// several goroutines may share it.
type Catalog struct {
	// src is a copy of the names and parameter schemas it was built
	// from: a caller may change its slice afterwards (Of).
	src   []chat.Tool
	tools map[string]*toolSchema
}

// NewCatalog reads tools for Options.Catalog.
func NewCatalog(tools []chat.Tool) *Catalog {
	c := &Catalog{src: make([]chat.Tool, len(tools)), tools: make(map[string]*toolSchema, len(tools))}
	for i, t := range tools {
		c.src[i] = chat.Tool{Name: t.Name, Parameters: bytes.Clone(t.Parameters)}
		ts := &toolSchema{name: t.Name, raw: c.src[i].Parameters}
		ts.freeze()
		c.tools[t.Name] = ts
	}
	return c
}

// Of reports whether c (nil: none) was built from tools: the same names
// and parameter schemas, in the same order (all a parser reads of them).
func (c *Catalog) Of(tools []chat.Tool) bool { return c != nil && sameSchemas(c.src, tools) }

// sameSchemas says whether a and b name the same tools with the same
// parameter schemas, in the same order (all a parser reads of them).
func sameSchemas(a, b []chat.Tool) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Name != b[i].Name || !bytes.Equal(a[i].Parameters, b[i].Parameters) {
			return false
		}
	}
	return true
}

// freeze decodes the schema and works out the types of every parameter
// it declares; types then answers from params alone and writes nothing,
// so parsers on several goroutines may share t.
func (t *toolSchema) freeze() {
	props := t.properties()
	t.params = map[string]paramTypes{}
	if props != nil {
		for _, m := range props.Members {
			t.params[m.Key] = t.paramTypes(m.Key)
		}
	}
	t.frozen = true
}

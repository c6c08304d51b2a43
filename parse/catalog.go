package parse

import (
	"bytes"
	"sync"

	"github.com/toolharness/toolharness/chat"
)

// The agent builds a parser for every generation, all with the same
// catalog. The catalog's map and each tool's decoded schema are built
// once per catalog and shared read-only by those parsers, instead of
// being decoded again by each.

// sharedCatalog is a catalog's tools, by name.
type sharedCatalog struct {
	// src is a copy of the names and parameter schemas it was built
	// from: a caller may change its slice between two parsers.
	src   []chat.Tool
	tools map[string]*toolSchema
}

// catalogs keeps the last few catalogs; an agent uses one.
var catalogs struct {
	sync.Mutex
	recent [4]*sharedCatalog
	next   int
}

// catalogTools returns the tools map of tools, shared with every parser
// made with a catalog of the same names and schemas. Its schemas are
// frozen: decoded, every parameter's types worked out, and never written.
func catalogTools(tools []chat.Tool) map[string]*toolSchema {
	catalogs.Lock()
	defer catalogs.Unlock()
	for _, c := range catalogs.recent {
		if c != nil && sameSchemas(c.src, tools) {
			return c.tools
		}
	}
	c := &sharedCatalog{src: make([]chat.Tool, len(tools)), tools: make(map[string]*toolSchema, len(tools))}
	for i, t := range tools {
		c.src[i] = chat.Tool{Name: t.Name, Parameters: bytes.Clone(t.Parameters)}
		ts := &toolSchema{name: t.Name, raw: c.src[i].Parameters}
		ts.freeze()
		c.tools[t.Name] = ts
	}
	catalogs.recent[catalogs.next] = c
	catalogs.next = (catalogs.next + 1) % len(catalogs.recent)
	return c.tools
}

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

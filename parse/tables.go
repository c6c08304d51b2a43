package parse

import "sync"

// compiled is what a parser reads of its format and never writes: the
// opener tables, the reasoning blocks a turn may start with, and the bare
// opener. The agent builds a parser for every generation; building these
// for each one was most of a fresh parser's cost (about 40 of its 54
// allocations and 25 KB), so for the named formats they are built once.
type compiled struct {
	tab, htab *table
	thinks    [][2]string
	bareOp    *opener
}

// compile builds the tables of format (a named format, or a syntax's
// label) from its openers and the turn markers.
func compile(format string, ops []opener, opts Options) *compiled {
	ops = append(ops, turnOpeners(opts.TurnMarkers)...)
	c := &compiled{tab: newTable(ops)}
	c.htab = harmonyTable(c.tab)
	c.thinks = c.tab.thinksOf(reasoningPairs(format))
	c.bareOp = bareOpener(format, opts.Strict)
	return c
}

// builtTables holds, for each named format and strictness, the tables
// built on first use with the default turn markers. Each entry is set
// once by its sync.OnceValue and only read after; the map itself is
// never written after package initialisation.
var builtTables = func() map[string]*[2]func() *compiled {
	m := make(map[string]*[2]func() *compiled, len(formatNames))
	for _, f := range formatNames {
		var pair [2]func() *compiled
		for i, strict := range []bool{false, true} {
			pair[i] = sync.OnceValue(func() *compiled {
				ops, err := openers(f, nil, strict)
				if err != nil {
					return nil
				}
				return compile(f, ops, Options{Strict: strict})
			})
		}
		m[f] = &pair
	}
	return m
}()

// sharedTables returns the built-once tables for format and opts, or nil
// where they depend on more than the format and strictness: a template's
// own turn markers, or the catalog (tags, and auto, which takes the tags
// format's markers too).
func sharedTables(format string, opts Options) *compiled {
	if len(opts.TurnMarkers) > 0 || len(opts.Tools) > 0 && (format == "tags" || format == "auto") {
		return nil
	}
	pair := builtTables[format]
	if pair == nil {
		return nil
	}
	i := 0
	if opts.Strict {
		i = 1
	}
	return pair[i]()
}

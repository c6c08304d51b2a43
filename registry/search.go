package registry

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strings"
	"unicode"

	"github.com/toolharness/toolharness/chat"
)

// ToolSearchName is the built-in tool that loads deferred tools.
const ToolSearchName = "tool_search"

const defaultSearchResults = 5

// toolSearchTool is the definition of tool_search (a function, so no
// package-level value can be mutated).
func toolSearchTool() chat.Tool {
	return chat.Tool{
		Name: ToolSearchName,
		Description: "Load the definitions of deferred tools (listed by name in a reminder) so you can call them. " +
			`Use "select:name1,name2" to load tools by exact name, or keywords to search names and descriptions.`,
		Parameters: json.RawMessage(`{"type":"object","properties":{` +
			`"query":{"type":"string","description":"\"select:a,b\" for exact names, or search keywords"},` +
			`"max_results":{"type":"integer","minimum":1,"maximum":50,"description":"how many tools to return for a keyword search (default 5)"}},` +
			`"required":["query"],"additionalProperties":false}`),
	}
}

// toolSearchEntry is the compiled tool_search; built on demand because it
// exists only while some tool is deferred. Called with r.mu held.
func (r *Registry) toolSearchEntry() *entry {
	e, err := compileEntry(Spec{Tool: toolSearchTool(), Handler: r.toolSearch})
	if err != nil {
		// The schema is a constant compiled by the tests; should it ever
		// fail, accept any object rather than panic.
		sch, _ := CompileSchema(json.RawMessage(`{"type":"object"}`))
		return &entry{spec: Spec{Tool: toolSearchTool(), Handler: r.toolSearch}, schema: sch}
	}
	return e
}

type toolSearchArgs struct {
	Query      string `json:"query"`
	MaxResults int    `json:"max_results"`
}

// toolSearch is the handler of tool_search: it returns the matching
// definitions rendered in the session's catalog format, as a tool result,
// so the system block never changes.
func (r *Registry) toolSearch(_ context.Context, raw json.RawMessage) (string, error) {
	var a toolSearchArgs
	if err := json.Unmarshal(raw, &a); err != nil {
		return "", fmt.Errorf("registry: tool_search arguments: %w", err)
	}
	if a.MaxResults <= 0 {
		a.MaxResults = defaultSearchResults
	}
	tools, missing := r.Search(a.Query, a.MaxResults)
	var b strings.Builder
	if len(tools) == 0 {
		b.WriteString("No deferred tool matches " + show(a.Query) + ".")
		if names := r.deferredNames(); len(names) > 0 {
			b.WriteString(" Deferred tools: " + strings.Join(names, ", ") + ".")
		}
		return b.String(), nil
	}
	cat, err := r.renderCatalog(tools)
	if err != nil {
		return "", err
	}
	r.mu.Lock()
	for _, t := range tools {
		r.loaded[t.Name] = true
	}
	r.mu.Unlock()
	fmt.Fprintf(&b, "Loaded %d tool(s); you can call them now:\n%s", len(tools), cat)
	if len(missing) > 0 {
		fmt.Fprintf(&b, "\nNot found: %s.", strings.Join(missing, ", "))
	}
	return b.String(), nil
}

// Search finds deferred tools. "select:a,b" selects by exact name (the
// names not found are returned as missing); anything else is a keyword
// query ranked by BM25 over name and description, best first, ties by
// name, at most n results.
func (r *Registry) Search(query string, n int) (tools []chat.Tool, missing []string) {
	r.mu.Lock()
	var deferred []chat.Tool
	for _, name := range r.names {
		if e := r.entries[name]; e.spec.Deferred {
			deferred = append(deferred, e.spec.Tool)
		}
	}
	all := r.entries
	r.mu.Unlock()
	q := strings.TrimSpace(query)
	if rest, ok := cutPrefixFold(q, "select:"); ok {
		for _, name := range strings.Split(rest, ",") {
			name = strings.TrimSpace(name)
			if name == "" {
				continue
			}
			r.mu.Lock()
			e, found := all[name]
			r.mu.Unlock()
			if found {
				tools = append(tools, e.spec.Tool)
			} else {
				missing = append(missing, name)
			}
		}
		return tools, missing
	}
	return bm25(deferred, q, n), nil
}

func cutPrefixFold(s, prefix string) (string, bool) {
	if len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix) {
		return s[len(prefix):], true
	}
	return s, false
}

// bm25 ranks tools for a keyword query (k1 = 1.2, b = 0.75). The name's
// tokens count twice: a tool named for the query beats one that mentions
// it in passing.
func bm25(tools []chat.Tool, query string, n int) []chat.Tool {
	const k1, b = 1.2, 0.75
	qterms := tokens(query)
	if len(qterms) == 0 || len(tools) == 0 {
		return nil
	}
	docs := make([][]string, len(tools))
	df := map[string]int{}
	total := 0
	for i, t := range tools {
		nameToks := tokens(t.Name)
		d := append(append(nameToks, nameToks...), tokens(t.Description)...)
		docs[i] = d
		total += len(d)
		seen := map[string]bool{}
		for _, w := range d {
			if !seen[w] {
				seen[w] = true
				df[w]++
			}
		}
	}
	avg := float64(total) / float64(len(docs))
	type scored struct {
		i     int
		score float64
	}
	var res []scored
	N := float64(len(docs))
	for i, d := range docs {
		tf := map[string]int{}
		for _, w := range d {
			tf[w]++
		}
		s := 0.0
		for _, q := range qterms {
			f := float64(tf[q])
			if f == 0 {
				continue
			}
			idf := math.Log(1 + (N-float64(df[q])+0.5)/(float64(df[q])+0.5))
			s += idf * f * (k1 + 1) / (f + k1*(1-b+b*float64(len(d))/avg))
		}
		if s > 0 {
			res = append(res, scored{i, s})
		}
	}
	sort.Slice(res, func(i, j int) bool {
		if res[i].score != res[j].score {
			return res[i].score > res[j].score
		}
		return tools[res[i].i].Name < tools[res[j].i].Name
	})
	var out []chat.Tool
	for k := 0; k < len(res) && k < n; k++ {
		out = append(out, tools[res[k].i])
	}
	return out
}

// tokens lower-cases and splits on anything not a letter or digit, and
// on camelCase boundaries, so "getWeather" and "get_weather" share terms.
func tokens(s string) []string {
	var out []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			out = append(out, strings.ToLower(string(cur)))
			cur = cur[:0]
		}
	}
	var prev rune
	for _, r := range s {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			if unicode.IsUpper(r) && unicode.IsLower(prev) {
				flush()
			}
			cur = append(cur, r)
		default:
			flush()
		}
		prev = r
	}
	flush()
	return out
}

func (r *Registry) deferredNames() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, n := range r.names {
		if r.entries[n].spec.Deferred {
			out = append(out, n)
		}
	}
	return out
}

// DeferredReminder is the text that names the deferred tools, for a system
// reminder (not the system block). It is "" when no tool is deferred.
func (r *Registry) DeferredReminder() string {
	names := r.deferredNames()
	if len(names) == 0 {
		return ""
	}
	return "These tools are available but their definitions are not loaded yet: " + strings.Join(names, ", ") +
		". Before calling one, load it with " + ToolSearchName + ` (query "select:NAME" or keywords).`
}

// Loaded returns the deferred tools tool_search has returned so far.
func (r *Registry) Loaded() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, n := range r.names {
		if r.loaded[n] {
			out = append(out, n)
		}
	}
	return out
}

// Savings estimates what deferring saves in the system block.
type Savings struct {
	DeferredTools int `json:"deferred_tools"`
	// FullBytes is the catalog of every tool; CoreBytes the catalog
	// actually in the system block plus the reminder.
	FullBytes int `json:"full_bytes"`
	CoreBytes int `json:"core_bytes"`
	// SavedTokens is an ESTIMATE: saved bytes / 4.
	SavedTokens int `json:"saved_tokens_estimate"`
}

// CatalogSavings renders the full and the core catalog with the session's
// renderer and estimates the tokens saved (bytes/4; an estimate, not a
// tokenizer count).
func (r *Registry) CatalogSavings() (Savings, error) {
	var all []chat.Tool
	r.mu.Lock()
	for _, n := range r.names {
		all = append(all, r.entries[n].spec.Tool)
	}
	r.mu.Unlock()
	full, err := r.renderCatalog(all)
	if err != nil {
		return Savings{}, err
	}
	core, err := r.renderCatalog(r.CoreTools())
	if err != nil {
		return Savings{}, err
	}
	s := Savings{DeferredTools: len(r.deferredNames()), FullBytes: len(full), CoreBytes: len(core) + len(r.DeferredReminder())}
	if d := s.FullBytes - s.CoreBytes; d > 0 {
		s.SavedTokens = d / 4
	}
	return s, nil
}

package registry

import (
	"fmt"
	"sort"
	"strings"

	"github.com/toolharness/toolharness/chat"
)

const (
	maxSuggestions = 3
	maxListed      = 20
)

// unknownTool answers a call to a tool that is not registered with the
// closest registered names (deferred ones included: the model may have
// read them in the reminder) and an example call of the closest one.
func (r *Registry) unknownTool(call chat.ToolCall) *Error {
	r.mu.Lock()
	names := append([]string(nil), r.names...)
	if r.hasDeferredLocked() {
		names = append(names, ToolSearchName)
	}
	r.mu.Unlock()
	sugg := closest(call.Name, names, maxSuggestions)
	e := &Error{Kind: KindUnknownTool, Tool: call.Name, CallID: call.ID, Suggestions: sugg}
	var b strings.Builder
	if call.Name == "" {
		b.WriteString("The call names no tool.")
	} else {
		fmt.Fprintf(&b, "There is no tool named %s.", show(call.Name))
	}
	switch {
	case len(sugg) > 0:
		fmt.Fprintf(&b, " Did you mean: %s?", strings.Join(sugg, ", "))
		if ent, ok := r.lookup(sugg[0]); ok {
			e.Example = r.formatCall(chat.ToolCall{Name: sugg[0], Arguments: exampleArgs(ent, nil)})
			fmt.Fprintf(&b, "\nA valid call looks like:\n%s", e.Example)
		}
	case len(names) > 0:
		listed := names
		if len(listed) > maxListed {
			listed = listed[:maxListed]
		}
		fmt.Fprintf(&b, " Available tools: %s", strings.Join(listed, ", "))
		if len(names) > maxListed {
			fmt.Fprintf(&b, " and %d more", len(names)-maxListed)
		}
		b.WriteString(".")
	default:
		b.WriteString(" No tools are available; answer without calling one.")
	}
	e.Message = b.String()
	return e
}

// closest returns up to n names near name: equal once case and separators
// are ignored, containing it (or contained in it), or within an edit
// distance of a third of its length. Ties are broken by name.
func closest(name string, names []string, n int) []string {
	key := normName(name)
	if key == "" || len(key) > 256 {
		// Nothing to compare, or a runaway name not worth a quadratic search.
		return nil
	}
	type cand struct {
		name string
		d    int
	}
	var cs []cand
	limit := max(2, len(key)/3)
	for _, c := range names {
		k := normName(c)
		d := levenshtein(key, k)
		switch {
		case k == key:
			d = 0
		case strings.Contains(k, key) || strings.Contains(key, k):
			d = min(d, 1+abs(len(k)-len(key))/4)
		case d > limit:
			continue
		}
		cs = append(cs, cand{c, d})
	}
	sort.Slice(cs, func(i, j int) bool {
		if cs[i].d != cs[j].d {
			return cs[i].d < cs[j].d
		}
		return cs[i].name < cs[j].name
	})
	var out []string
	for i := 0; i < len(cs) && i < n; i++ {
		out = append(out, cs[i].name)
	}
	return out
}

// normName folds case and drops separators, so get_weather, getWeather and
// get-weather compare equal.
func normName(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		switch r {
		case '_', '-', '.', ' ', ':', '/':
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

func levenshtein(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

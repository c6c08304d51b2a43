package derive

import (
	"encoding/json"
	"reflect"
	"strings"

	"github.com/toolharness/toolharness/parse"
)

// callSite is where one rendered call sits in a render and how its body is
// written: the facts the diff of renders gives, before markers are named.
type callSite struct {
	body parse.BodyKind
	// start and end delimit the call's core: the JSON object or list, the
	// Python list or call, or the name through the arguments' end.
	start, end int
	// nameAt and nameEnd delimit the tool name in the render.
	nameAt, nameEnd int
	// For BodyJSON and BodyJSONList: the keys of the call object.
	nameKey, argsKey string
	// For BodyNameJSON: the arguments object's span.
	argsAt, argsEnd int
	// For BodyPairs: the spans of each key and value, in order.
	keys, values [][2]int
	// listCalls counts the calls of a list body (JSON or Python).
	listCalls int
	// quote is the token strings are written between in a quoted-object
	// body (BodyNameJSON whose arguments are no JSON).
	quote string
}

// jsonValueAt decodes the JSON value starting at s[at]; ok is false when
// none does. Numbers stay json.Number so that values compare as written.
func jsonValueAt(s string, at int) (v any, end int, ok bool) {
	if at >= len(s) || (s[at] != '{' && s[at] != '[') {
		return nil, 0, false
	}
	dec := json.NewDecoder(strings.NewReader(s[at:]))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return nil, 0, false
	}
	return v, at + int(dec.InputOffset()), true
}

func decodeJSON(raw string) any {
	var v any
	dec := json.NewDecoder(strings.NewReader(raw))
	dec.UseNumber()
	if dec.Decode(&v) != nil {
		return nil
	}
	return v
}

// sameArgs reports whether v is the arguments object want, written as an
// object or as a string holding one (double-encoded arguments).
func sameArgs(v any, want any) bool {
	if s, ok := v.(string); ok {
		v = decodeJSON(s)
	}
	return v != nil && reflect.DeepEqual(v, want)
}

// callObjectKeys returns the keys of a call object holding name and args;
// both are "" (and ok true) for an object whose only key is the name.
func callObjectKeys(v any, name string, args any) (nameKey, argsKey string, ok bool) {
	obj, isObj := v.(map[string]any)
	if !isObj {
		return "", "", false
	}
	if x, one := obj[name]; one && len(obj) == 1 && sameArgs(x, args) {
		// {"NAME": {…}}: the name is the key (Apertus).
		return "", "", true
	}
	for k, x := range obj {
		if s, isStr := x.(string); isStr && s == name && nameKey == "" {
			nameKey = k
		}
	}
	for k, x := range obj {
		if k != nameKey && sameArgs(x, args) {
			argsKey = k
		}
	}
	return nameKey, argsKey, nameKey != "" && argsKey != ""
}

// locateCall finds the call to tool name with arguments args in s, at or
// after from and before limit, and says how it is written. ok is false when
// the name is not there or its arguments cannot be found in a known shape.
func locateCall(s string, from, limit int, name string, args []arg) (site callSite, ok bool) {
	rel := strings.Index(s[from:limit], name)
	if rel < 0 {
		return site, false
	}
	site.nameAt = from + rel
	site.nameEnd = site.nameAt + len(name)
	want := decodeJSON(string(argsObject(args)))
	if locateJSON(s, from, limit, name, want, &site) {
		return site, true
	}
	if locatePython(s, from, limit, &site) {
		return site, true
	}
	if locateNameJSON(s, limit, want, &site) {
		return site, true
	}
	if locateQuoted(s, limit, args, want, &site) {
		return site, true
	}
	if locatePairs(s, limit, args, &site) {
		return site, true
	}
	return site, false
}

// locateJSON: the name is a string value inside a JSON object (or a list
// of them) that also holds the arguments. The outermost such value wins,
// so a list of calls is seen as one.
func locateJSON(s string, from, limit int, name string, want any, site *callSite) bool {
	for _, at := range openBrackets(s[:site.nameAt], from) {
		v, end, ok := jsonValueAt(s[:limit], at)
		if !ok || end <= site.nameAt {
			continue
		}
		if list, isList := v.([]any); isList && len(list) > 0 {
			nk, ak, found := callObjectKeys(list[0], name, want)
			if !found {
				continue
			}
			*site = callSite{body: parse.BodyJSONList, start: at, end: end, nameAt: site.nameAt, nameEnd: site.nameEnd,
				nameKey: nk, argsKey: ak, listCalls: len(list)}
			return true
		}
		if nk, ak, found := callObjectKeys(v, name, want); found {
			site.body, site.start, site.end, site.nameKey, site.argsKey = parse.BodyJSON, at, end, nk, ak
			return true
		}
	}
	return false
}

// maxCandidates bounds the brackets tried as the start of a JSON value
// around the name: decoding from each is linear, and a render with deep
// unclosed nesting must not make derivation quadratic.
const maxCandidates = 4

// openBrackets returns the offsets of the brackets still open at the end
// of s[from:] (outside JSON strings), outermost first: the only places a
// JSON value holding what follows can start. Only the maxCandidates
// outermost and innermost are returned.
func openBrackets(s string, from int) []int {
	var stack []int
	inString := false
	for i := from; i < len(s); i++ {
		c := s[i]
		switch {
		case inString:
			if c == '\\' {
				i++
			} else if c == '"' {
				inString = false
			}
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			stack = append(stack, i)
		case (c == '}' || c == ']') && len(stack) > 0:
			stack = stack[:len(stack)-1]
		}
	}
	if len(stack) > 2*maxCandidates {
		stack = append(stack[:maxCandidates:maxCandidates], stack[len(stack)-maxCandidates:]...)
	}
	return stack
}

// locatePython: the name is followed by "(" — a Python call, inside a
// list when "[" precedes it.
func locatePython(s string, from, limit int, site *callSite) bool {
	if site.nameEnd >= limit || s[site.nameEnd] != '(' {
		return false
	}
	end := pythonSpanEnd(s[:limit], site.nameEnd)
	if end < 0 {
		return false
	}
	site.body, site.start, site.end = parse.BodyPython, site.nameAt, end
	before := strings.TrimRight(s[from:site.nameAt], " \t\n")
	if strings.HasSuffix(before, "[") {
		open := from + len(before) - 1
		if listEnd := pythonSpanEnd(s[:limit], open); listEnd > 0 {
			site.body, site.start, site.end = parse.BodyPythonList, open, listEnd
			site.listCalls = strings.Count(s[open:listEnd], "(") // refined by the caller for parallel calls
		}
	}
	return true
}

// pythonSpanEnd returns the offset after the bracket that closes the one
// at s[open], skipping quoted strings; -1 when it is not closed.
func pythonSpanEnd(s string, open int) int {
	depth := 0
	for i := open; i < len(s); i++ {
		switch c := s[i]; c {
		case '(', '[', '{':
			depth++
		case ')', ']', '}':
			depth--
			if depth == 0 {
				return i + 1
			}
		case '"', '\'':
			for i++; i < len(s) && s[i] != c; i++ {
				if s[i] == '\\' {
					i++
				}
			}
		}
	}
	return -1
}

// locateNameJSON: the name is written outside JSON and the arguments'
// object follows it.
func locateNameJSON(s string, limit int, want any, site *callSite) bool {
	at := strings.IndexByte(s[site.nameEnd:limit], '{')
	if at < 0 {
		return false
	}
	at += site.nameEnd
	v, end, ok := jsonValueAt(s[:limit], at)
	if !ok || !sameArgs(v, want) {
		return false
	}
	site.body, site.start, site.end, site.argsAt, site.argsEnd = parse.BodyNameJSON, site.nameAt, end, at, end
	return true
}

// locatePairs: each argument's key, then its value, after the name.
func locatePairs(s string, limit int, args []arg, site *callSite) bool {
	at := site.nameEnd
	for _, a := range args {
		k := strings.Index(s[at:limit], a.key)
		if k < 0 {
			return false
		}
		k += at
		kEnd := k + len(a.key)
		v, vEnd, ok := findValue(s[:limit], kEnd, a.value)
		if !ok {
			return false
		}
		site.keys = append(site.keys, [2]int{k, kEnd})
		site.values = append(site.values, [2]int{v, vEnd})
		at = vEnd
	}
	site.body, site.start, site.end = parse.BodyPairs, site.nameAt, at
	return len(args) > 0
}

// findValue finds the first rendering of the JSON value text after from:
// a string's raw text or its JSON form, true/false also as Python prints
// them, numbers as written.
func findValue(s string, from int, value string) (at, end int, ok bool) {
	forms := []string{value}
	switch {
	case strings.HasPrefix(value, `"`):
		var raw string
		if json.Unmarshal([]byte(value), &raw) == nil {
			forms = []string{raw}
		}
	case value == "true":
		forms = append(forms, "True")
	case value == "false":
		forms = append(forms, "False")
	}
	best := -1
	var bestForm string
	for _, f := range forms {
		if i := strings.Index(s[from:], f); i >= 0 && (best < 0 || i < best) {
			best, bestForm = i, f
		}
	}
	if best < 0 {
		return 0, 0, false
	}
	return from + best, from + best + len(bestForm), true
}

// locateQuoted: the name is followed by an object with bare keys whose
// strings sit between a special token written on both sides of them
// (FunctionGemma's {k:<escape>v<escape>}, Gemma 4's {k:<|"|>v<|"|>}).
// The token is read off the first string argument; the object must then
// decode to the probe's arguments.
func locateQuoted(s string, limit int, args []arg, want any, site *callSite) bool {
	at := strings.IndexByte(s[site.nameEnd:limit], '{')
	if at < 0 || at > 16 || strings.ContainsAny(s[site.nameEnd:site.nameEnd+at], "\n\"") {
		return false
	}
	at += site.nameEnd
	var raw string
	for _, a := range args {
		if json.Unmarshal([]byte(a.value), &raw) == nil {
			break
		}
	}
	v := strings.Index(s[at:limit], raw)
	if raw == "" || v < 0 {
		return false
	}
	v += at
	before := s[at:v]
	q := ""
	for i := len(before) - 1; i >= 0; i-- {
		if (before[i] == '<' || before[i] == '[') && specialLen(before[i:]) == len(before)-i {
			q = before[i:]
			break
		}
	}
	if q == "" || !strings.HasPrefix(s[v+len(raw):], q) {
		return false
	}
	end, obj, ok := quotedObject(s[:limit], at, q)
	if !ok || !reflect.DeepEqual(decodeJSON(obj), want) {
		return false
	}
	site.body, site.start, site.end, site.argsAt, site.argsEnd, site.quote = parse.BodyNameJSON, site.nameAt, end, at, end, q
	return true
}

// quotedObject reads the object at s[at] in the quoted notation (bare
// keys, strings between q) and returns its end and its JSON text.
func quotedObject(s string, at int, q string) (end int, obj string, ok bool) {
	var b strings.Builder
	depth := 0
	for i := at; i < len(s); {
		switch c := s[i]; {
		case strings.HasPrefix(s[i:], q):
			e := strings.Index(s[i+len(q):], q)
			if e < 0 {
				return 0, "", false
			}
			b.Write(quote(s[i+len(q) : i+len(q)+e]))
			i += len(q) + e + len(q)
			continue
		case c == '{' || c == '[':
			depth++
		case c == '}' || c == ']':
			depth--
			if depth == 0 {
				b.WriteByte(c)
				return i + 1, b.String(), true
			}
		case c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			k := i
			for k < len(s) && isIdent(s[k]) {
				k++
			}
			if w := s[i:k]; k < len(s) && s[k] == ':' {
				b.Write(quote(w)) // a bare key
			} else {
				b.WriteString(w) // true, false, null
			}
			i = k
			continue
		case c == '"':
			return 0, "", false // JSON's quotes: not this notation
		}
		b.WriteByte(s[i])
		i++
	}
	return 0, "", false
}

package bench

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"strings"
	"unicode"

	"github.com/toolharness/toolharness/chat"
)

// ExpectedCall is one call a correct answer makes: the tool's name and a
// matcher per argument, in the order they were written.
type ExpectedCall struct {
	Name string
	Args []ArgMatcher
}

// ArgMatcher matches one named argument.
type ArgMatcher struct {
	Name string
	Matcher
}

// MatchKind is how a Matcher compares.
type MatchKind string

// The matcher kinds.
const (
	MatchExact  MatchKind = "exact"
	MatchOneOf  MatchKind = "one_of"
	MatchRegex  MatchKind = "regex"
	MatchApprox MatchKind = "approx"
	MatchAny    MatchKind = "any"
)

// Matcher compares one argument value.
type Matcher struct {
	Kind MatchKind
	// Values holds the exact value (one element) or the accepted values.
	Values []any
	// Pattern is the regex (anchored to the whole value).
	Pattern string
	re      *regexp.Regexp
	// Approx and Tolerance: |v - Approx| ≤ Tolerance.
	Approx, Tolerance float64
	// Optional accepts an absent argument.
	Optional bool
	// Normalize compares strings ignoring case, spaces and punctuation
	// (BFCL's standardisation).
	Normalize bool
}

type wireCall struct {
	Name string          `json:"name"`
	Args json.RawMessage `json:"args,omitempty"`
}

// UnmarshalJSON reads {"name": …, "args": {param: matcher, …}}.
func (c *ExpectedCall) UnmarshalJSON(data []byte) error {
	var w wireCall
	if err := json.Unmarshal(data, &w); err != nil {
		return fmt.Errorf("expected call: %w", err)
	}
	if w.Name == "" {
		return errors.New("expected call without a name")
	}
	*c = ExpectedCall{Name: w.Name}
	if !hasJSON(w.Args) {
		return nil
	}
	v, err := chat.DecodeOrdered(w.Args)
	if err != nil {
		return fmt.Errorf("expected call %q: args: %w", w.Name, err)
	}
	obj, ok := v.(*chat.Object)
	if !ok {
		return fmt.Errorf("expected call %q: args must be an object", w.Name)
	}
	for _, m := range obj.Members {
		mt, err := parseMatcher(m.Value)
		if err != nil {
			return fmt.Errorf("expected call %q: arg %q: %w", w.Name, m.Key, err)
		}
		c.Args = append(c.Args, ArgMatcher{Name: m.Key, Matcher: mt})
	}
	return nil
}

// MarshalJSON writes the form UnmarshalJSON reads.
func (c ExpectedCall) MarshalJSON() ([]byte, error) {
	args := &chat.Object{}
	for _, a := range c.Args {
		args.Members = append(args.Members, chat.Member{Key: a.Name, Value: a.Matcher.wire()})
	}
	raw, err := chat.EncodeOrdered(args)
	if err != nil {
		return nil, err
	}
	return chat.Marshal(wireCall{Name: c.Name, Args: raw})
}

var matcherKeys = map[string]bool{
	"exact": true, "one_of": true, "regex": true, "approx": true, "tolerance": true,
	"any": true, "optional": true, "normalize": true,
}

func parseMatcher(v any) (Matcher, error) {
	obj, ok := v.(*chat.Object)
	if !ok {
		return Matcher{Kind: MatchExact, Values: []any{plain(v)}}, nil
	}
	var m Matcher
	kinds := 0
	for _, mem := range obj.Members {
		if !matcherKeys[mem.Key] {
			return m, fmt.Errorf("unknown matcher key %q (an exact object value is written {exact: {…}})", mem.Key)
		}
		switch mem.Key {
		case "exact":
			m.Kind, m.Values = MatchExact, []any{plain(mem.Value)}
			kinds++
		case "one_of":
			list, ok := mem.Value.([]any)
			if !ok || len(list) == 0 {
				return m, errors.New("one_of needs a non-empty list")
			}
			m.Kind = MatchOneOf
			for _, e := range list {
				m.Values = append(m.Values, plain(e))
			}
			kinds++
		case "regex":
			s, ok := mem.Value.(string)
			if !ok {
				return m, errors.New("regex must be a string")
			}
			re, err := compileRegex(s)
			if err != nil {
				return m, err
			}
			m.Kind, m.Pattern, m.re = MatchRegex, s, re
			kinds++
		case "approx":
			f, ok := number(mem.Value)
			if !ok {
				return m, errors.New("approx must be a number")
			}
			m.Kind, m.Approx = MatchApprox, f
			kinds++
		case "tolerance":
			f, ok := number(mem.Value)
			if !ok || f < 0 {
				return m, errors.New("tolerance must be a non-negative number")
			}
			m.Tolerance = f
		case "any":
			m.Kind = MatchAny
			kinds++
		case "optional":
			m.Optional, _ = mem.Value.(bool)
		case "normalize":
			m.Normalize, _ = mem.Value.(bool)
		}
	}
	if kinds != 1 {
		return m, errors.New("give exactly one of exact, one_of, regex, approx, any")
	}
	return m, nil
}

func (m Matcher) wire() any {
	o := &chat.Object{}
	switch m.Kind {
	case MatchExact:
		if !m.Optional && !m.Normalize {
			if _, isObj := m.Values[0].(map[string]any); !isObj {
				return m.Values[0]
			}
		}
		o.Members = append(o.Members, chat.Member{Key: "exact", Value: m.Values[0]})
	case MatchOneOf:
		o.Members = append(o.Members, chat.Member{Key: "one_of", Value: m.Values})
	case MatchRegex:
		o.Members = append(o.Members, chat.Member{Key: "regex", Value: m.Pattern})
	case MatchApprox:
		o.Members = append(o.Members, chat.Member{Key: "approx", Value: m.Approx}, chat.Member{Key: "tolerance", Value: m.Tolerance})
	case MatchAny:
		o.Members = append(o.Members, chat.Member{Key: "any", Value: true})
	}
	if m.Optional {
		o.Members = append(o.Members, chat.Member{Key: "optional", Value: true})
	}
	if m.Normalize {
		o.Members = append(o.Members, chat.Member{Key: "normalize", Value: true})
	}
	return o
}

// plain turns ordered JSON values into maps for comparison.
func plain(v any) any {
	switch x := v.(type) {
	case *chat.Object:
		m := make(map[string]any, len(x.Members))
		for _, mem := range x.Members {
			m[mem.Key] = plain(mem.Value)
		}
		return m
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = plain(e)
		}
		return out
	}
	return v
}

func number(v any) (float64, bool) {
	switch x := v.(type) {
	case json.Number:
		f, err := x.Float64()
		return f, err == nil
	case float64:
		return x, true
	case int:
		return float64(x), true
	}
	return 0, false
}

// Match reports whether v (a decoded JSON value) satisfies the matcher.
func (m Matcher) Match(v any) bool {
	switch m.Kind {
	case MatchAny:
		return true
	case MatchExact, MatchOneOf:
		for _, want := range m.Values {
			if equalJSON(want, v, m.Normalize) {
				return true
			}
		}
		return false
	case MatchRegex:
		s, ok := v.(string)
		if !ok {
			return false
		}
		if m.re == nil {
			re, err := compileRegex(m.Pattern)
			if err != nil {
				return false
			}
			return re.MatchString(s)
		}
		return m.re.MatchString(s)
	case MatchApprox:
		f, ok := number(v)
		return ok && math.Abs(f-m.Approx) <= m.Tolerance
	}
	return false
}

// equalJSON compares decoded JSON values: numbers by value (1 == 1.0),
// objects ignoring key order.
func equalJSON(a, b any, normalize bool) bool {
	if fa, ok := number(a); ok {
		fb, ok := number(b)
		return ok && fa == fb
	}
	switch x := a.(type) {
	case string:
		y, ok := b.(string)
		if !ok {
			return false
		}
		if normalize {
			return normalizeString(x) == normalizeString(y)
		}
		return x == y
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !equalJSON(x[i], y[i], normalize) {
				return false
			}
		}
		return true
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, xv := range x {
			yv, ok := y[k]
			if !ok || !equalJSON(xv, yv, normalize) {
				return false
			}
		}
		return true
	}
	return a == b
}

// normalizeString is BFCL's standardize_string: lower case, without
// spaces and the punctuation ,./-_*^ .
func normalizeString(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) || strings.ContainsRune(",./-_*^", r) {
			return -1
		}
		return unicode.ToLower(r)
	}, s)
}

// decodeArgs decodes call arguments for matching.
func decodeArgs(raw json.RawMessage) (map[string]any, error) {
	m := map[string]any{}
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return m, nil
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	if err := d.Decode(&m); err != nil {
		return nil, err
	}
	return m, nil
}

// matchCall reports whether call satisfies want.
func matchCall(want ExpectedCall, call Call, extraArgs bool) bool {
	if call.Name != want.Name {
		return false
	}
	args, err := decodeArgs(call.Arguments)
	if err != nil {
		return false
	}
	named := map[string]bool{}
	for _, a := range want.Args {
		named[a.Name] = true
		v, ok := args[a.Name]
		if !ok {
			if a.Optional {
				continue
			}
			return false
		}
		if !a.Match(v) {
			return false
		}
	}
	if !extraArgs {
		for k := range args {
			if !named[k] {
				return false
			}
		}
	}
	return true
}

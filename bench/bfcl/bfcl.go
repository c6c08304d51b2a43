package bfcl

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"

	"github.com/toolharness/toolharness/bench"
	"github.com/toolharness/toolharness/chat"
)

// Question is one line of BFCL's data.
type Question struct {
	ID       string          `json:"id"`
	Question json.RawMessage `json:"question"`
	Function json.RawMessage `json:"function"`
	Category string          `json:"category"`
	// PossibleAnswer is absent for relevance questions.
	PossibleAnswer json.RawMessage `json:"possible_answer"`
}

// Skipped is a question the importer could not turn into a case, and why.
type Skipped struct {
	ID     string
	Reason string
}

// Note is an approximation the importer made on a question that it kept.
type Note = Skipped

// Result of an import.
type Result struct {
	Suite   bench.Suite
	Skipped []Skipped
	Notes   []Note
}

// Import reads BFCL questions, one JSON object per line. A question that
// cannot be converted is listed in Skipped, never silently dropped; a
// broken line is an error.
func Import(r io.Reader, name string) (Result, error) {
	res := Result{Suite: bench.Suite{Name: name, Description: "BFCL v1 questions (Apache-2.0, ShishirPatil/gorilla)"}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	line := 0
	for sc.Scan() {
		line++
		text := bytes.TrimSpace(sc.Bytes())
		if len(text) == 0 {
			continue
		}
		var q Question
		if err := json.Unmarshal(text, &q); err != nil {
			return res, fmt.Errorf("bfcl: line %d: %w", line, err)
		}
		c, notes, err := convert(q)
		if err != nil {
			res.Skipped = append(res.Skipped, Skipped{ID: q.ID, Reason: err.Error()})
			continue
		}
		res.Notes = append(res.Notes, notes...)
		res.Suite.Cases = append(res.Suite.Cases, c)
	}
	if err := sc.Err(); err != nil {
		return res, fmt.Errorf("bfcl: line %d: %w", line+1, err)
	}
	return res, nil
}

func convert(q Question) (bench.Case, []Note, error) {
	c := bench.Case{ID: q.ID, Category: category(q.Category)}
	if q.ID == "" {
		return c, nil, errors.New("no id")
	}
	text, err := questionText(q.Question)
	if err != nil {
		return c, nil, err
	}
	c.Messages = []chat.Message{{Role: chat.RoleUser, Content: text}}
	fns := bytes.TrimSpace(q.Function)
	if len(fns) > 0 && fns[0] == '{' {
		fns = append(append([]byte("["), fns...), ']')
	}
	conv, err := convertTypes(fns)
	if err != nil {
		return c, nil, fmt.Errorf("function: %w", err)
	}
	if c.Tools, err = chat.ParseTools(conv); err != nil {
		return c, nil, err
	}
	if !hasJSON(q.PossibleAnswer) {
		if q.Category != "relevance" {
			return c, nil, fmt.Errorf("category %q without possible_answer", q.Category)
		}
		c.Expect = bench.Expectation{NoCall: true}
		return c, nil, nil
	}
	calls, notes, err := answers(q.ID, q.PossibleAnswer, c.Tools)
	if err != nil {
		return c, nil, err
	}
	c.Expect = bench.Expectation{Calls: calls}
	return c, notes, nil
}

// category shortens BFCL's names to the suite's vocabulary.
func category(c string) string {
	switch c {
	case "multiple_function":
		return "multiple"
	case "parallel_function":
		return "parallel"
	case "parallel_multiple_function":
		return "parallel_multiple"
	case "relevance":
		return "restraint"
	}
	return c
}

// questionText accepts a string or BFCL v3's [[{role, content}]] turns
// (the user turns are joined).
func questionText(raw json.RawMessage) (string, error) {
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s, nil
	}
	var turns [][]struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	}
	if err := json.Unmarshal(raw, &turns); err != nil {
		return "", fmt.Errorf("question is neither a string nor a list of turns")
	}
	var parts []string
	for _, turn := range turns {
		for _, m := range turn {
			if m.Role == "user" {
				parts = append(parts, m.Content)
			}
		}
	}
	if len(parts) == 0 {
		return "", errors.New("question has no user turn")
	}
	return strings.Join(parts, "\n"), nil
}

var bfclTypes = map[string]string{"dict": "object", "float": "number", "tuple": "array"}

// convertTypes rewrites BFCL's type names to JSON Schema's, keeping key
// order; "any" drops the type constraint. Only string-valued "type"
// members are schema types (a property may itself be named "type").
func convertTypes(data []byte) ([]byte, error) {
	v, err := chat.DecodeOrdered(data)
	if err != nil {
		return nil, err
	}
	var walk func(v any) any
	walk = func(v any) any {
		switch x := v.(type) {
		case *chat.Object:
			out := &chat.Object{}
			for _, m := range x.Members {
				if s, ok := m.Value.(string); ok && m.Key == "type" {
					if s == "any" {
						continue
					}
					if t, ok := bfclTypes[s]; ok {
						m.Value = t
					}
				} else {
					m.Value = walk(m.Value)
				}
				out.Members = append(out.Members, m)
			}
			return out
		case []any:
			for i := range x {
				x[i] = walk(x[i])
			}
		}
		return v
	}
	return chat.EncodeOrdered(walk(v))
}

// BFCL keys parallel answers name_1, name_2 (a few lines write "name 1").
var parallelSuffix = regexp.MustCompile(`^(.*)[_ ]\d+$`)

func answers(id string, raw json.RawMessage, tools []chat.Tool) ([]bench.ExpectedCall, []Note, error) {
	v, err := chat.DecodeOrdered(raw)
	if err != nil {
		return nil, nil, err
	}
	obj, ok := v.(*chat.Object)
	if !ok {
		return nil, nil, errors.New("possible_answer is not an object")
	}
	names := map[string]bool{}
	for _, t := range tools {
		names[t.Name] = true
	}
	var calls []bench.ExpectedCall
	var notes []Note
	for _, m := range obj.Members {
		name := m.Key
		if !names[name] {
			if sm := parallelSuffix.FindStringSubmatch(name); sm != nil && names[sm[1]] {
				name = sm[1]
			} else {
				return nil, nil, fmt.Errorf("possible_answer key %q names no function of the question", m.Key)
			}
		}
		args, ok := m.Value.(*chat.Object)
		if !ok {
			return nil, nil, fmt.Errorf("possible_answer %q is not an object of parameters", m.Key)
		}
		call := bench.ExpectedCall{Name: name}
		for _, p := range args.Members {
			opts, ok := p.Value.([]any)
			if !ok {
				return nil, nil, fmt.Errorf("possible_answer %q.%q is not a list of accepted values", m.Key, p.Key)
			}
			mt, note := matcher(opts)
			if note != "" {
				notes = append(notes, Note{ID: id, Reason: fmt.Sprintf("%s.%s: %s", name, p.Key, note)})
			}
			call.Args = append(call.Args, bench.ArgMatcher{Name: p.Key, Matcher: mt})
		}
		calls = append(calls, call)
	}
	if len(calls) == 0 {
		return nil, nil, errors.New("possible_answer lists no call")
	}
	return calls, notes, nil
}

// matcher turns BFCL's accepted values into a matcher; "" means optional.
// A nested object answer (itself a map of accepted-value lists) becomes an
// exact object when each key has one accepted value, else "any" with a
// note, since the benchmark's matchers do not nest.
func matcher(opts []any) (bench.Matcher, string) {
	m := bench.Matcher{Kind: bench.MatchOneOf, Normalize: true}
	note := ""
	for _, o := range opts {
		if s, ok := o.(string); ok && s == "" {
			m.Optional = true
			continue
		}
		if obj, ok := o.(*chat.Object); ok {
			exact, ok := flatten(obj)
			if !ok {
				return bench.Matcher{Kind: bench.MatchAny, Optional: m.Optional}, "nested answer with alternatives accepted as any value"
			}
			m.Values = append(m.Values, exact)
			continue
		}
		m.Values = append(m.Values, plainValue(o))
	}
	if len(m.Values) == 0 {
		// Only "" accepted: the parameter should be left out (or empty).
		m.Values = []any{""}
	}
	return m, note
}

func flatten(obj *chat.Object) (map[string]any, bool) {
	out := map[string]any{}
	for _, mem := range obj.Members {
		list, ok := mem.Value.([]any)
		if !ok || len(list) != 1 {
			return nil, false
		}
		if _, nested := list[0].(*chat.Object); nested {
			return nil, false
		}
		out[mem.Key] = plainValue(list[0])
	}
	return out, true
}

func plainValue(v any) any {
	switch x := v.(type) {
	case *chat.Object:
		m := map[string]any{}
		for _, mem := range x.Members {
			m[mem.Key] = plainValue(mem.Value)
		}
		return m
	case []any:
		out := make([]any, len(x))
		for i := range x {
			out[i] = plainValue(x[i])
		}
		return out
	}
	return v
}

func hasJSON(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) > 0 && !bytes.Equal(raw, []byte("null"))
}

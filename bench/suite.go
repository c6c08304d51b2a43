package bench

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"regexp"

	"github.com/toolharness/toolharness/chat"
)

// Suite is a named list of cases.
type Suite struct {
	Name        string
	Description string
	Cases       []Case
}

// Case is one benchmark question: the tools offered, the conversation so
// far, and what the model should do next.
type Case struct {
	ID string
	// Category groups cases in reports: single, multiple, parallel,
	// multi_turn, restraint, awkward, …
	Category string
	Tools    []chat.Tool
	Messages []chat.Message
	Expect   Expectation
}

// Expectation is what a correct answer does: make Calls (in order when
// Ordered) or, with NoCall, answer without calling a tool (restraint).
type Expectation struct {
	NoCall bool
	Calls  []ExpectedCall
	// Ordered requires the calls in the listed order; otherwise any order
	// matches (parallel calls).
	Ordered bool
	// ExtraArgs allows arguments the matchers do not mention. BFCL does not
	// (an argument outside its answer is wrong); hand-written suites
	// usually do.
	ExtraArgs bool
}

// HasExpectation reports whether the case says anything to score against.
func (e Expectation) HasExpectation() bool { return e.NoCall || len(e.Calls) > 0 }

// ErrSuite marks a suite file that cannot be used; the message says where.
var ErrSuite = errors.New("bench: suite")

//go:embed suites/default.yaml
var defaultSuite []byte

// DefaultSuite returns the built-in suite embedded in the binary.
func DefaultSuite() (Suite, error) {
	return ParseSuite(defaultSuite)
}

// ReadSuiteFile reads a suite from a YAML or JSON file.
func ReadSuiteFile(path string) (Suite, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Suite{}, inputError(ErrSuite, "%w", err)
	}
	s, err := ParseSuite(data)
	if err != nil {
		return s, fmt.Errorf("%w (in %s)", err, path)
	}
	return s, nil
}

type wireSuite struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Tools       json.RawMessage `json:"tools"`
	Cases       []wireCase      `json:"cases"`
}

type wireCase struct {
	ID       string          `json:"id"`
	Category string          `json:"category"`
	Tools    json.RawMessage `json:"tools"`
	Messages json.RawMessage `json:"messages"`
	Prompt   string          `json:"prompt"`
	Expect   wireExpect      `json:"expect"`
}

type wireExpect struct {
	NoCall    bool           `json:"no_call,omitempty"`
	Calls     []ExpectedCall `json:"calls,omitempty"`
	Ordered   bool           `json:"ordered,omitempty"`
	ExtraArgs bool           `json:"extra_args,omitempty"`
}

// ParseSuite reads a suite (YAML or JSON):
//
//	name: weather
//	tools: [ … OpenAI or Anthropic shape … ]   # shared by every case
//	cases:
//	  - id: paris
//	    category: single
//	    prompt: What's the weather in Paris?      # or messages: [ … ]
//	    tools: [ … ]                               # optional, replaces the shared catalog
//	    expect:
//	      calls:
//	        - name: get_weather
//	          args: {city: {one_of: [Paris, "Paris, France"]}}
//	      ordered: false
//	  - id: hello
//	    prompt: Hello!
//	    expect: {no_call: true}
//
// Argument matchers: a plain value (exact), {exact: v}, {one_of: [..]},
// {regex: "…"} (must match the whole string), {approx: n, tolerance: t},
// {any: true}; each may add optional: true (absence is fine) and
// normalize: true (strings compared case-, space- and punctuation-blind).
func ParseSuite(data []byte) (Suite, error) {
	js, err := chat.YAMLToJSON(data)
	if err != nil {
		return Suite{}, inputError(ErrSuite, "%w", err)
	}
	var w wireSuite
	d := json.NewDecoder(bytes.NewReader(js))
	d.DisallowUnknownFields()
	if err := d.Decode(&w); err != nil {
		return Suite{}, inputError(ErrSuite, "%w", err)
	}
	s := Suite{Name: w.Name, Description: w.Description}
	var shared []chat.Tool
	if hasJSON(w.Tools) {
		if shared, err = chat.ParseTools(w.Tools); err != nil {
			return s, inputError(ErrSuite, "tools: %w", err)
		}
	}
	seen := map[string]bool{}
	for i, wc := range w.Cases {
		c, err := buildCase(wc, shared)
		if err != nil {
			return s, inputError(ErrSuite, "case %d (%s): %w", i, wc.ID, err)
		}
		if seen[c.ID] {
			return s, inputError(ErrSuite, "case %d: duplicate id %q", i, c.ID)
		}
		seen[c.ID] = true
		s.Cases = append(s.Cases, c)
	}
	if len(s.Cases) == 0 {
		return s, inputError(ErrSuite, "no cases")
	}
	return s, nil
}

func hasJSON(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) > 0 && !bytes.Equal(raw, []byte("null"))
}

func buildCase(wc wireCase, shared []chat.Tool) (Case, error) {
	c := Case{ID: wc.ID, Category: wc.Category, Tools: shared}
	if c.ID == "" {
		return c, errors.New("missing id")
	}
	if hasJSON(wc.Tools) {
		tools, err := chat.ParseTools(wc.Tools)
		if err != nil {
			return c, err
		}
		c.Tools = tools
	}
	if len(c.Tools) == 0 {
		return c, errors.New("no tools (give suite-level or case-level tools)")
	}
	switch {
	case hasJSON(wc.Messages) && wc.Prompt != "":
		return c, errors.New("give either prompt or messages, not both")
	case hasJSON(wc.Messages):
		conv, err := chat.ParseConversation(wc.Messages)
		if err != nil {
			return c, err
		}
		c.Messages = conv.Messages
	case wc.Prompt != "":
		c.Messages = []chat.Message{{Role: chat.RoleUser, Content: wc.Prompt}}
	default:
		return c, errors.New("no prompt or messages")
	}
	c.Expect = Expectation{NoCall: wc.Expect.NoCall, Calls: wc.Expect.Calls, Ordered: wc.Expect.Ordered, ExtraArgs: wc.Expect.ExtraArgs}
	if err := c.Expect.check(c.Tools); err != nil {
		return c, err
	}
	return c, nil
}

func (e Expectation) check(tools []chat.Tool) error {
	if e.NoCall && len(e.Calls) > 0 {
		return errors.New("expect: no_call together with calls")
	}
	if !e.HasExpectation() {
		return errors.New("expect: give calls or no_call: true")
	}
	names := map[string]bool{}
	for _, t := range tools {
		names[t.Name] = true
	}
	for _, c := range e.Calls {
		if !names[c.Name] {
			return fmt.Errorf("expect: call %q names no tool of the case", c.Name)
		}
	}
	return nil
}

// MarshalJSON writes the suite in the shape ParseSuite reads, each case
// with its own tools.
func (s Suite) MarshalJSON() ([]byte, error) {
	type outCase struct {
		ID       string         `json:"id"`
		Category string         `json:"category,omitempty"`
		Tools    []chat.Tool    `json:"tools"`
		Messages []chat.Message `json:"messages"`
		Expect   wireExpect     `json:"expect"`
	}
	out := struct {
		Name        string    `json:"name"`
		Description string    `json:"description,omitempty"`
		Cases       []outCase `json:"cases"`
	}{Name: s.Name, Description: s.Description}
	for _, c := range s.Cases {
		out.Cases = append(out.Cases, outCase{
			ID: c.ID, Category: c.Category, Tools: c.Tools, Messages: c.Messages,
			Expect: wireExpect{NoCall: c.Expect.NoCall, Calls: c.Expect.Calls, Ordered: c.Expect.Ordered, ExtraArgs: c.Expect.ExtraArgs},
		})
	}
	return chat.Marshal(out)
}

// compileRegex anchors a matcher's pattern to the whole value.
func compileRegex(p string) (*regexp.Regexp, error) {
	return regexp.Compile(`^(?:` + p + `)$`)
}

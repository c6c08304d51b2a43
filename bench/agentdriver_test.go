package bench

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/toolharness/toolharness/backend"
	"github.com/toolharness/toolharness/templates"
	"github.com/toolharness/toolharness/templates/source"
)

// recordingBackend keeps every request and answers each with a fixed
// constrained-style JSON object: a call of tool f, or an answer when the
// request's schema allows one.
type recordingBackend struct {
	mu   sync.Mutex
	reqs []backend.Request
}

func (b *recordingBackend) Capabilities() backend.Capabilities {
	return backend.Capabilities{Raw: true, Chat: true, Constrain: true}
}

func (b *recordingBackend) Generate(_ context.Context, req backend.Request, onChunk func(string) error) (backend.Response, error) {
	b.mu.Lock()
	b.reqs = append(b.reqs, req)
	b.mu.Unlock()
	text := `{"name":"f","arguments":{"a":"x"}}`
	if len(req.Format) > 0 && schemaAllowsAnswer(req.Format) {
		text = `{"answer":"hi"}`
	}
	if onChunk != nil {
		if err := onChunk(text); err != nil {
			return backend.Response{Text: text}, err
		}
	}
	return backend.Response{Text: text, Usage: backend.Usage{PromptTokens: 10, GeneratedTokens: len(text)}}, nil
}

// schemaAllowsAnswer reports whether a call schema (agent.CallSchema) has
// the {"answer": …} alternative.
func schemaAllowsAnswer(schema json.RawMessage) bool {
	type alt struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	var s struct {
		AnyOf []alt `json:"anyOf"`
		alt
	}
	if json.Unmarshal(schema, &s) != nil {
		return false
	}
	alts := append(s.AnyOf, s.alt)
	for _, a := range alts {
		if _, ok := a.Properties["answer"]; ok {
			return true
		}
	}
	return false
}

// TestAgentDriverConstrained checks what a constrained run asks of the
// server: calls only for cases that expect calls, the answer alternative
// for restraint cases, and the string bound; unconstrained runs send no
// schema.
func TestAgentDriverConstrained(t *testing.T) {
	suite := testSuite(t)
	cell := Cell{Model: "m", Format: "hermes", Mode: "raw"}
	for _, constrained := range []bool{true, false} {
		b := &recordingBackend{}
		d := &AgentDriver{Backends: map[string]backend.Backend{"e": b}, Constrained: constrained, ConstrainMaxString: 12,
			Template: func(context.Context, string, string) (string, error) { return "chatml", nil }}
		for _, c := range suite.Cases {
			b.reqs = nil
			run, err := d.RunCase(context.Background(), "e", cell, c)
			if err != nil {
				t.Fatalf("constrained %v, %s: %v", constrained, c.ID, err)
			}
			if len(b.reqs) == 0 || len(run.Attempts) == 0 {
				t.Fatalf("constrained %v, %s: %d requests, %d attempts", constrained, c.ID, len(b.reqs), len(run.Attempts))
			}
			format := b.reqs[0].Format
			if !constrained {
				if len(format) != 0 {
					t.Errorf("unconstrained %s sent a schema: %s", c.ID, format)
				}
				continue
			}
			if len(format) == 0 {
				t.Fatalf("constrained %s sent no schema", c.ID)
			}
			if got, want := schemaAllowsAnswer(format), c.Expect.NoCall; got != want {
				t.Errorf("%s (restraint %v): answer alternative %v in %s", c.ID, c.Expect.NoCall, got, format)
			}
			if !strings.Contains(string(format), `"maxLength":12`) {
				t.Errorf("%s: the string bound is not in %s", c.ID, format)
			}
			a := run.Attempts[0]
			if c.Expect.NoCall {
				if len(a.Lenient.Calls) != 0 || a.Lenient.Content != "hi" {
					t.Errorf("%s: %+v", c.ID, a.Lenient)
				}
				continue
			}
			if len(a.Lenient.Calls) != 1 || a.Lenient.Calls[0].Name != "f" || len(a.Lenient.Errors) != 0 || len(a.SchemaErrors) != 0 {
				t.Errorf("%s: lenient %+v schema %+v", c.ID, a.Lenient, a.SchemaErrors)
			}
		}
	}
}

// failingBackend fails every generation the way a dead server does.
type failingBackend struct{}

func (failingBackend) Capabilities() backend.Capabilities {
	return backend.Capabilities{Raw: true, Chat: true, Constrain: true}
}

func (failingBackend) Generate(context.Context, backend.Request, func(string) error) (backend.Response, error) {
	return backend.Response{}, &backend.Error{Kind: backend.KindUnreachable, Backend: "ollama", Err: errors.New("connection refused")}
}

// TestAgentDriverKeepsGenerationError is the regression test of a case
// whose generation failed being judged as a missed call: the driver must
// return the error, and the runner record the case as an error.
func TestAgentDriverKeepsGenerationError(t *testing.T) {
	suite := testSuite(t)
	for _, constrained := range []bool{false, true} {
		d := &AgentDriver{Backends: map[string]backend.Backend{"e": failingBackend{}}, Constrained: constrained,
			Template: func(context.Context, string, string) (string, error) { return "chatml", nil }}
		cell := Cell{Model: "m", Format: "hermes", Mode: "raw"}
		_, err := d.RunCase(context.Background(), "e", cell, suite.Cases[0])
		if !errors.Is(err, backend.ErrUnreachable) {
			t.Fatalf("constrained %v: RunCase error %v, want the backend's unreachable error", constrained, err)
		}
		recs, ok, err := runJob(context.Background(), d, "e", job{cell: cell, c: suite.Cases[0]})
		if !ok || err == nil {
			t.Fatalf("runJob ok %v err %v", ok, err)
		}
		last := recs[len(recs)-1]
		if last.Verdict != VerdictError || last.Error == "" || !last.Final || last.Success {
			t.Errorf("constrained %v: failed case recorded as %+v", constrained, last)
		}
	}
}

// TestAgentDriverOwnTemplateModes runs a case with a model's own template
// outside the built-in families (GLM-4.5's) in both modes with the
// native format: raw mode uses the call syntax derived from the template
// (the template writes catalog and calls), and so does chat mode, whose
// system message carries the template's own tool section
// (agent.PlanChatCatalog).
func TestAgentDriverOwnTemplateModes(t *testing.T) {
	src, err := source.Load(filepath.Join("..", "templates", "testdata", "conformance", "templates", "zai-org-GLM-4.5.jinja"), source.Options{Tools: true})
	if err != nil {
		t.Fatal(err)
	}
	fam, err := src.Family()
	if err != nil {
		t.Fatal(err)
	}
	suite := testSuite(t)
	for _, tt := range []struct{ mode, want string }{{"raw", "glm45"}, {"chat", "glm45"}} {
		t.Run(tt.mode, func(t *testing.T) {
			d := &AgentDriver{Backends: map[string]backend.Backend{"e": &recordingBackend{}},
				Family: func(context.Context, string, string) (templates.Family, error) { return fam, nil }}
			run, err := d.RunCase(context.Background(), "e", Cell{Model: "m", Format: Native, Mode: tt.mode}, suite.Cases[0])
			if err != nil {
				t.Fatalf("RunCase: %v", err)
			}
			if run.FormatUsed != tt.want {
				t.Errorf("format used %q, want %q", run.FormatUsed, tt.want)
			}
		})
	}
}

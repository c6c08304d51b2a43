package agent

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/toolharness/toolharness/backend"
	"github.com/toolharness/toolharness/chat"
)

func TestRunCase(t *testing.T) {
	msgs := []chat.Message{{Role: chat.RoleSystem, Content: "Be terse."}, {Role: chat.RoleUser, Content: "Read a.go"}}
	good := hermesCall("read_file", `{"path": "a.go"}`)
	tests := []struct {
		name     string
		replies  []reply
		retries  int
		attempts int
		ok       bool
		check    func(t *testing.T, res CaseResult, reqs []backend.Request)
	}{
		{name: "first try", replies: []reply{{text: good}}, retries: 2, attempts: 1, ok: true,
			check: func(t *testing.T, res CaseResult, reqs []backend.Request) {
				a := res.Attempts[0]
				if len(a.Calls) != 1 || a.Calls[0].Name != "read_file" || string(a.Calls[0].Arguments) != `{"path":"a.go"}` {
					t.Errorf("calls %+v", a.Calls)
				}
				if !strings.Contains(reqs[0].Prompt, "Be terse.") || !strings.Contains(reqs[0].Prompt, `"name": "read_file"`) {
					t.Errorf("prompt lacks the system text or the catalog:\n%s", reqs[0].Prompt)
				}
			}},
		{name: "invalid then fixed", replies: []reply{{text: hermesCall("read_file", `{"file": "a.go"}`)}, {text: good}}, retries: 2, attempts: 2, ok: true,
			check: func(t *testing.T, res CaseResult, reqs []backend.Request) {
				if len(res.Attempts[0].Invalid) != 1 || res.Attempts[0].Invalid[0].Kind != "invalid_arguments" {
					t.Errorf("invalid %+v", res.Attempts[0].Invalid)
				}
				if !strings.HasPrefix(reqs[1].Prompt, reqs[0].Prompt) || !strings.Contains(reqs[1].Prompt[len(reqs[0].Prompt):], "<tool_response>") {
					t.Errorf("the retry must extend the first prompt with the error result")
				}
			}},
		{name: "parse error then fixed", replies: []reply{{text: "<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"a.go\"}\n<tool_call>x"}, {text: good}}, retries: 1, attempts: 2, ok: true,
			check: func(t *testing.T, res CaseResult, reqs []backend.Request) {
				if len(res.Attempts[0].ParseErrors) == 0 {
					t.Errorf("no parse errors in %+v", res.Attempts[0])
				}
			}},
		{name: "budget spent", replies: []reply{{text: hermesCall("nope", `{}`)}, {text: hermesCall("nope", `{}`)}}, retries: 1, attempts: 2, ok: false},
		{name: "restraint", replies: []reply{{text: "No tool needed."}}, retries: 1, attempts: 1, ok: true,
			check: func(t *testing.T, res CaseResult, _ []backend.Request) {
				if res.Attempts[0].Content != "No tool needed." || len(res.Attempts[0].Calls) != 0 {
					t.Errorf("%+v", res.Attempts[0])
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := &scriptBackend{replies: tt.replies}
			res, err := RunCase(context.Background(), b, Case{Model: "m", Messages: msgs, Tools: testTools, Template: "qwen2.5", Format: "hermes", MaxRetries: tt.retries})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Attempts) != tt.attempts || res.OK != tt.ok || res.Retries != tt.attempts-1 {
				t.Fatalf("attempts %d ok %v retries %d", len(res.Attempts), res.OK, res.Retries)
			}
			if tt.check != nil {
				tt.check(t, res, b.reqs())
			}
		})
	}
}

func TestRunCaseBackendError(t *testing.T) {
	b := &scriptBackend{replies: []reply{{failBefore: &backend.Error{Kind: backend.KindServer, Status: 404, Backend: "script", Message: "model not found"}}}}
	res, err := RunCase(context.Background(), b, Case{Model: "m", Messages: []chat.Message{{Role: chat.RoleUser, Content: "x"}}, Tools: testTools, Template: "chatml"})
	if !errors.Is(err, backend.ErrServer) || len(res.Attempts) != 1 {
		t.Errorf("err %v, %d attempts", err, len(res.Attempts))
	}
}

func TestRunCaseConstrained(t *testing.T) {
	tests := []struct {
		name        string
		requireCall bool
		reply       string
		wantAnswer  bool // the schema sent has the answer alternative
		wantCalls   int
	}{
		// A restraint case keeps the answer branch, so the model may answer.
		{name: "answer allowed", reply: `{"answer":"no tool needed"}`, wantAnswer: true},
		{name: "answer allowed, call made", reply: `{"name":"read_file","arguments":{"path":"a"}}`, wantAnswer: true, wantCalls: 1},
		// A case that expects calls constrains to calls only.
		{name: "call required", requireCall: true, reply: `{"name":"read_file","arguments":{"path":"a"}}`, wantCalls: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := &scriptBackend{replies: []reply{{text: tt.reply}}, constrain: true}
			res, err := RunCase(context.Background(), b, Case{Model: "m", Messages: []chat.Message{{Role: chat.RoleUser, Content: "x"}}, Tools: testTools, Template: "chatml",
				Constrained: true, RequireCall: tt.requireCall, Mode: backend.ModeChat})
			if err != nil || !res.OK || len(res.Attempts[0].Calls) != tt.wantCalls {
				t.Fatalf("%v %+v", err, res)
			}
			req := b.reqs()[0]
			if len(req.Format) == 0 || len(req.Messages) == 0 || req.Prompt != "" {
				t.Fatalf("request %+v", req)
			}
			alts := schemaAlternatives(t, req.Format)
			answer, calls := 0, map[string]bool{}
			for _, a := range alts {
				if _, ok := a.Properties["answer"]; ok {
					answer++
				}
				if n, ok := a.Properties["name"]; ok {
					calls[n.Const] = true
				}
			}
			if (answer == 1) != tt.wantAnswer {
				t.Errorf("%d answer alternatives in %s, want answer allowed %v", answer, req.Format, tt.wantAnswer)
			}
			for _, tool := range testTools {
				if !calls[tool.Name] {
					t.Errorf("no call alternative for %s in %s", tool.Name, req.Format)
				}
			}
			if len(alts) != len(testTools)+answer {
				t.Errorf("%d alternatives in %s", len(alts), req.Format)
			}
		})
	}
}

// schemaAlt is the part of a CallSchema alternative the tests look at.
type schemaAlt struct {
	Properties map[string]struct {
		Const string `json:"const"`
	} `json:"properties"`
}

// schemaAlternatives returns the alternatives of a CallSchema (a schema
// with one alternative is that alternative).
func schemaAlternatives(t *testing.T, schema []byte) []schemaAlt {
	t.Helper()
	var s struct {
		AnyOf []schemaAlt `json:"anyOf"`
		schemaAlt
	}
	if err := json.Unmarshal(schema, &s); err != nil {
		t.Fatalf("schema %s: %v", schema, err)
	}
	if len(s.AnyOf) > 0 {
		return s.AnyOf
	}
	return []schemaAlt{s.schemaAlt}
}

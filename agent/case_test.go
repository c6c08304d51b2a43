package agent

import (
	"context"
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
	res, err := RunCase(context.Background(), b, Case{Model: "m", Messages: []chat.Message{{Role: chat.RoleUser, Content: "x"}}, Tools: testTools})
	if !errors.Is(err, backend.ErrServer) || len(res.Attempts) != 1 {
		t.Errorf("err %v, %d attempts", err, len(res.Attempts))
	}
}

func TestRunCaseConstrained(t *testing.T) {
	b := &scriptBackend{replies: []reply{{text: `{"name":"read_file","arguments":{"path":"a"}}`}}, constrain: true}
	res, err := RunCase(context.Background(), b, Case{Model: "m", Messages: []chat.Message{{Role: chat.RoleUser, Content: "x"}}, Tools: testTools, Constrained: true, Mode: backend.ModeChat})
	if err != nil || !res.OK || len(res.Attempts[0].Calls) != 1 {
		t.Fatalf("%v %+v", err, res)
	}
	req := b.reqs()[0]
	if len(req.Format) == 0 || len(req.Messages) == 0 || req.Prompt != "" {
		t.Errorf("request %+v", req)
	}
}

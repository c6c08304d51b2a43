package llamacpptest

import (
	"context"
	"strings"
	"testing"

	"github.com/toolharness/toolharness/backend"
)

func TestExactly(t *testing.T) {
	for _, c := range []struct{ text, want string }{
		{"", `root ::= ""`},
		{"hello", `root ::= "hello"`},
		{`say "hi"\n`, `root ::= "say \"hi\"\\n"`},
		{"a\nb\tc\r", `root ::= "a\x0Ab\x09c\x0D"`},
		{"<tool_call>\n{\"name\": \"f\"}\n</tool_call>", `root ::= "<tool_call>\x0A{\"name\": \"f\"}\x0A</tool_call>"`},
		{"é", `root ::= "\xE9"`},
		{"日本", `root ::= "\u65E5\u672C"`},
		{"𝔘!", `root ::= "\U0001D518!"`},
	} {
		if got := Exactly(c.text); got != c.want+"\n" {
			t.Errorf("Exactly(%q) = %q, want %q", c.text, got, c.want+"\n")
		}
	}
}

// recorder is a backend that keeps the requests it gets.
type recorder struct{ reqs []backend.Request }

func (r *recorder) Generate(_ context.Context, req backend.Request, _ func(string) error) (backend.Response, error) {
	r.reqs = append(r.reqs, req)
	return backend.Response{}, nil
}

func (r *recorder) Capabilities() backend.Capabilities { return backend.Capabilities{Raw: true} }

func TestScripted(t *testing.T) {
	rec := &recorder{}
	s := Scripted(rec, "one", "two")
	ctx := context.Background()
	for _, want := range []string{"one", "two"} {
		if _, err := s.Generate(ctx, backend.Request{Mode: backend.ModeRaw, Prompt: "p"}, nil); err != nil {
			t.Fatal(err)
		}
		if got := rec.reqs[len(rec.reqs)-1].Grammar; got != Exactly(want) {
			t.Errorf("grammar %q, want Exactly(%q)", got, want)
		}
	}
	if _, err := s.Generate(ctx, backend.Request{}, nil); err == nil || !strings.Contains(err.Error(), "beyond the 2 scripted outputs") {
		t.Errorf("third request: err = %v", err)
	}
	if len(rec.reqs) != 2 || s.Used() != 3 {
		t.Errorf("%d requests sent, %d asked; want 2 and 3", len(rec.reqs), s.Used())
	}
	s = Scripted(rec, "x")
	if _, err := s.Generate(ctx, backend.Request{Grammar: "root ::= \"y\""}, nil); err == nil {
		t.Error("a request with its own grammar was scripted over")
	}
	if _, err := s.ContextSize(ctx, ""); err == nil {
		t.Error("ContextSize of a backend without one answered")
	}
}

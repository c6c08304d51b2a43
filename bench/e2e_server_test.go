package bench

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/toolharness/toolharness/backend"
	"github.com/toolharness/toolharness/backend/llamacpp"
	"github.com/toolharness/toolharness/chat"
	"github.com/toolharness/toolharness/internal/llamacpptest"
	"github.com/toolharness/toolharness/internal/ollamatest"
)

// forcedCall makes the random model of a real llama-server write one
// call in either mode. Raw mode: a grammar admits only the hermes text of
// the call (the harness's parser reads it). Server mode: the server's own
// tool-call grammar (tool_choice "required", one call, the reply opened
// with the call marker, which the server continues) admits only a call
// the tool's schema allows, and the server's own parser reads it; the stop
// at the closing marker ends the turn after one call.
type forcedCall struct {
	backend.Backend
	hermes string
}

func (f forcedCall) Generate(ctx context.Context, req backend.Request, onChunk func(string) error) (backend.Response, error) {
	if req.Mode == backend.ModeServer {
		no := false
		req.Messages = append(req.Messages, chat.Message{Role: chat.RoleAssistant, Content: "<tool_call>\n"})
		req.ToolChoice, req.ParallelToolCalls, req.Stop = "required", &no, append(req.Stop, "</tool_call>")
	} else {
		req.Grammar = llamacpptest.Exactly(f.hermes)
	}
	return f.Backend.Generate(ctx, req, onChunk)
}

// TestE2EServerModeBesideRaw runs one case in raw mode (the harness's
// rendering and parser) and in server mode (the server's template and
// parser) on one real llama-server, as `bench run --modes raw,server` and
// `compare` do: both make the expected call at the first try, the results
// say which mode made them, and the summary pairs the harness's format
// with the server's parser.
func TestE2EServerModeBesideRaw(t *testing.T) {
	tmpl, err := os.ReadFile("../templates/testdata/official/Qwen-Qwen2.5-7B-Instruct.jinja")
	if err != nil {
		t.Fatal(err)
	}
	srv := llamacpptest.Start(t, llamacpptest.WithChatTemplate(string(tmpl)))
	client, err := llamacpp.New(llamacpp.Config{BaseURL: srv.URL, StallTimeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	suite, err := ParseSuite([]byte(`
name: e2e-server
tools:
  - {name: get_weather, description: "Weather of a city.", input_schema: {type: object, properties: {city: {type: string, enum: [Paris]}}, required: [city]}}
cases:
  - {id: single, category: single, prompt: "Weather in Paris?", expect: {calls: [{name: get_weather, args: {city: Paris}}]}}
`))
	if err != nil {
		t.Fatal(err)
	}
	zero := 0.0
	driver := &AgentDriver{
		Backends: map[string]backend.Backend{srv.URL: forcedCall{Backend: client,
			hermes: "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>"}},
		Template: func(context.Context, string, string) (string, error) { return "qwen2.5", nil },
		Options:  backend.Options{Temperature: &zero, MaxTokens: 300},
	}
	cells, err := ParseCells([]string{"tiny"}, []string{"hermes"}, []string{"raw", "server"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	res, err := Run(ctx, RunConfig{Suite: suite, Cells: cells, Driver: driver, Out: t.TempDir(), Endpoints: []Endpoint{{URL: srv.URL}}})
	if err != nil {
		t.Fatal(err)
	}
	modes := map[string]bool{}
	for _, r := range res.Records {
		modes[r.Mode] = true
		if r.Mode == "server" && r.Format != ServerFormat {
			t.Errorf("server-mode record of format %q", r.Format)
		}
	}
	if !modes["raw"] || !modes["server"] {
		t.Errorf("records of modes %v; want raw and server", modes)
	}
	s := Summarize(res.Records)
	if len(s.Groups) != 2 {
		t.Fatalf("%d groups; want raw/hermes and server", len(s.Groups))
	}
	for _, g := range s.Groups {
		if g.Errors != 0 || g.FirstTry.K != 1 || g.FirstTry.N != 1 {
			t.Errorf("%s/%s: errors %d, first try %d/%d, verdicts %v", g.Mode, g.Format, g.Errors, g.FirstTry.K, g.FirstTry.N, g.Verdicts)
		}
	}
	crossed := false
	for _, c := range s.Comparisons {
		crossed = crossed || (c.Mode == "raw" && c.ModeB == "server" && c.FormatA == "hermes" && c.FormatB == ServerFormat)
	}
	if !crossed {
		t.Errorf("no raw-versus-server comparison in %+v", s.Comparisons)
	}
}

// TestE2EServerModeOllamaRefusal runs server mode against a real Ollama
// whose test model's template has no tools: Ollama refuses the request
// (HTTP 400, "does not support tools"), and the case is an error verdict,
// in no rate, never a measured miss.
func TestE2EServerModeOllamaRefusal(t *testing.T) {
	s := ollamatest.Start(t)
	suite := e2eSuite(t)
	cells, err := ParseCells([]string{s.Model}, []string{"hermes"}, []string{"server"})
	if err != nil {
		t.Fatal(err)
	}
	d, eps := e2eDriver(t, false, s)
	res, err := Run(context.Background(), RunConfig{Suite: suite, Cells: cells, Driver: d, Endpoints: eps, Out: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Records) != len(suite.Cases) {
		t.Fatalf("%d records; want one per case (%d)", len(res.Records), len(suite.Cases))
	}
	for _, r := range res.Records {
		if r.Verdict != VerdictError || r.Mode != "server" || !strings.Contains(r.Error, "does not support tools") || !strings.Contains(r.Error, "HTTP 400") {
			t.Errorf("%s: verdict %s, mode %s, error %q", r.ID, r.Verdict, r.Mode, r.Error)
		}
	}
	t.Logf("first record: verdict %s, error %q", res.Records[0].Verdict, res.Records[0].Error)
	g := Summarize(res.Records).Groups
	if len(g) != 1 || g[0].Errors != len(suite.Cases) || g[0].FirstTry.N != 0 || g[0].LenientFailure.N != 0 {
		t.Errorf("groups %+v", g)
	}
}

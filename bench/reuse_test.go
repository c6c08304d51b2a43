package bench

import (
	"context"
	"testing"

	"github.com/toolharness/toolharness/backend"
	"github.com/toolharness/toolharness/backend/llamacpp"
	"github.com/toolharness/toolharness/backend/llamacpp/llamacpptest"
)

// TestResultsCarryReuse runs three cases through the agent driver against
// the fake llama-server and checks that each result says how many prompt
// tokens the server reused (timings.cache_n) and evaluated (prompt_n): the
// first request finds an empty cache, the later ones reuse the shared
// system block.
func TestResultsCarryReuse(t *testing.T) {
	srv := llamacpptest.New()
	t.Cleanup(srv.Close)
	for range 6 {
		srv.Script(srv.Tok.Tokenize(`<tool_call>`+"\n"+`{"name": "f", "arguments": {"a": "x"}}`+"\n"+`</tool_call>`, true))
	}
	c, err := llamacpp.New(llamacpp.Config{BaseURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	cells, err := ParseCells([]string{"toy"}, []string{"hermes"}, []string{"raw"})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	d := &AgentDriver{Backends: map[string]backend.Backend{srv.URL: c}, Template: func(context.Context, string, string) (string, error) { return "qwen2.5", nil }}
	if _, err := Run(context.Background(), RunConfig{Suite: testSuite(t), Cells: cells, Repeats: 1, Driver: d, Out: dir,
		Endpoints: []Endpoint{{URL: srv.URL, Concurrency: 1}}}); err != nil {
		t.Fatal(err)
	}
	recs, err := ReadResults(dir)
	if err != nil {
		t.Fatal(err)
	}
	prompts := srv.Prompts()
	if len(recs) != len(prompts) || len(recs) < 3 {
		t.Fatalf("%d records for %d requests", len(recs), len(prompts))
	}
	for i, r := range recs {
		if r.ReusedPromptTokens == nil || r.NewPromptTokens == nil {
			t.Fatalf("record %d (%s) has no reuse figures: %+v", i, r.ID, r)
		}
		p := prompts[i]
		if *r.ReusedPromptTokens != p.CacheN || *r.NewPromptTokens != p.PromptN || r.PromptTokens != len(p.IDs) {
			t.Errorf("record %d: reused %d new %d of %d; the server said cache_n %d prompt_n %d of %d",
				i, *r.ReusedPromptTokens, *r.NewPromptTokens, r.PromptTokens, p.CacheN, p.PromptN, len(p.IDs))
		}
		if (i == 0) != (p.CacheN == 0) {
			t.Errorf("record %d reused %d tokens; want 0 only for the first request", i, p.CacheN)
		}
	}
}

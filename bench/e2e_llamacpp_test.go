package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/toolharness/toolharness/backend"
	"github.com/toolharness/toolharness/backend/llamacpp"
	"github.com/toolharness/toolharness/internal/llamacpptest"
)

// TestE2ELlamaServerBench runs bench's llama.cpp paths against one real
// llama-server (one model load).
func TestE2ELlamaServerBench(t *testing.T) {
	srv := llamacpptest.Start(t)
	t.Run("describe", func(t *testing.T) { testDescribeLlamaServer(t, srv) })
	t.Run("results carry reuse", func(t *testing.T) { testResultsCarryReuse(t, srv) })
}

// testDescribeLlamaServer: the server's /props gives its build and model
// file, with or without the /v1 of its OpenAI API; the description names
// the file, not the first characters of its path.
func testDescribeLlamaServer(t *testing.T, srv *llamacpptest.Server) {
	resp, err := http.Get(srv.URL + "/props")
	if err != nil {
		t.Fatal(err)
	}
	var props struct {
		BuildInfo string `json:"build_info"`
	}
	err = json.NewDecoder(resp.Body).Decode(&props)
	resp.Body.Close()
	if err != nil || props.BuildInfo == "" {
		t.Fatalf("/props: build_info %q, %v", props.BuildInfo, err)
	}
	for _, url := range []string{srv.URL, srv.URL + "/v1"} {
		info := DescribeServer(context.Background(), http.DefaultClient, "llamacpp", url, []string{"m"})
		if info.Error != "" || info.Version != props.BuildInfo || info.Models["(loaded)"] != srv.ModelPath {
			t.Errorf("%s: %+v; want build %q, model %s", url, info, props.BuildInfo, srv.ModelPath)
		}
		if d, want := info.Describe(), fmt.Sprintf("llamacpp %s ((loaded) %s)", props.BuildInfo, filepath.Base(srv.ModelPath)); d != want {
			t.Errorf("describe %q, want %q", d, want)
		}
	}
}

// promptEval is the count of prompt tokens llama-server evaluated for a
// task, from its log's timing lines.
var promptEval = regexp.MustCompile(`prompt eval time =\s*[0-9.]+ ms /\s*([0-9]+) tokens`)

// testResultsCarryReuse runs testSuite's cases through the agent driver,
// one request at a time, the model forced to write a call, and checks
// that each result says how many prompt tokens the server reused
// (timings.cache_n) and evaluated (prompt_n): the evaluated counts are
// the ones the server's own log reports, the first request finds an empty
// cache and the later ones reuse the shared system block.
func testResultsCarryReuse(t *testing.T, srv *llamacpptest.Server) {
	c, err := llamacpp.New(llamacpp.Config{BaseURL: srv.URL, StallTimeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	cells, err := ParseCells([]string{"tiny"}, []string{"hermes"}, []string{"raw"})
	if err != nil {
		t.Fatal(err)
	}
	zero := 0.0
	d := &AgentDriver{
		Backends: map[string]backend.Backend{srv.URL: forcedCall{Backend: c,
			hermes: "<tool_call>\n{\"name\": \"f\", \"arguments\": {\"a\": \"x\"}}\n</tool_call>"}},
		Template: func(context.Context, string, string) (string, error) { return "qwen2.5", nil },
		Options:  backend.Options{Temperature: &zero, MaxTokens: 300},
	}
	dir := t.TempDir()
	mark := len(srv.Log())
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if _, err := Run(ctx, RunConfig{Suite: testSuite(t), Cells: cells, Repeats: 1, Driver: d, Out: dir,
		Endpoints: []Endpoint{{URL: srv.URL, Concurrency: 1}}}); err != nil {
		t.Fatal(err)
	}
	recs, err := ReadResults(dir)
	if err != nil {
		t.Fatal(err)
	}
	// The last completion's line may come a little after Run returns.
	log, _ := srv.WaitLog(mark, func(log string) bool { return len(promptEval.FindAllStringIndex(log, -1)) >= len(recs) })
	evals := promptEval.FindAllStringSubmatch(log, -1)
	if len(recs) != len(evals) || len(recs) < 3 {
		t.Fatalf("%d records for %d completions in the server log", len(recs), len(evals))
	}
	for i, r := range recs {
		if r.ReusedPromptTokens == nil || r.NewPromptTokens == nil {
			t.Fatalf("record %d (%s) has no reuse figures: %+v", i, r.ID, r)
		}
		evaluated, _ := strconv.Atoi(evals[i][1])
		if *r.NewPromptTokens != evaluated || *r.ReusedPromptTokens+*r.NewPromptTokens != r.PromptTokens {
			t.Errorf("record %d: reused %d new %d of %d; the server's log says it evaluated %d",
				i, *r.ReusedPromptTokens, *r.NewPromptTokens, r.PromptTokens, evaluated)
		}
		if (i == 0) != (*r.ReusedPromptTokens == 0) {
			t.Errorf("record %d reused %d tokens; want 0 only for the first request", i, *r.ReusedPromptTokens)
		}
	}
}

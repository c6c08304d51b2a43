package bench

import (
	"context"
	"sync"
	"testing"

	"github.com/toolharness/toolharness/backend"
	"github.com/toolharness/toolharness/backend/ollama"
	"github.com/toolharness/toolharness/internal/ollamatest"
)

// e2eSuite is three cases of the default suite: a single call, a parallel
// call and a restraint case.
func e2eSuite(t *testing.T) Suite {
	t.Helper()
	def, err := DefaultSuite()
	if err != nil {
		t.Fatal(err)
	}
	s := Suite{Name: "e2e"}
	for _, c := range def.Cases {
		switch c.ID {
		case "single_weather", "parallel_read_two", "restraint_greeting":
			s.Cases = append(s.Cases, c)
		}
	}
	if len(s.Cases) != 3 {
		t.Fatalf("picked %d cases", len(s.Cases))
	}
	return s
}

func e2eDriver(t *testing.T, constrained bool, servers ...*ollamatest.Server) (*AgentDriver, []Endpoint) {
	t.Helper()
	temp, seed := 0.8, 7
	d := &AgentDriver{Backends: map[string]backend.Backend{}, MaxRetries: 1, Constrained: constrained,
		Options: backend.Options{Temperature: &temp, Seed: &seed, MaxTokens: 40}}
	var eps []Endpoint
	for _, s := range servers {
		b, err := ollama.New(ollama.Config{Host: s.URL})
		if err != nil {
			t.Fatal(err)
		}
		d.Backends[s.URL] = b
		eps = append(eps, Endpoint{URL: s.URL, Concurrency: 1})
	}
	return d, eps
}

// TestE2EBenchRun runs the matrix against two real Ollama servers serving
// the tiny random-weight model: two formats unconstrained, one
// constrained; the first run is canceled in the middle and resumed.
func TestE2EBenchRun(t *testing.T) {
	s1 := ollamatest.Start(t, ollamatest.WithOwnProcess())
	s2 := ollamatest.Start(t, ollamatest.WithOwnProcess())
	if s1.Model != s2.Model {
		t.Fatalf("the two servers registered different models: %s, %s", s1.Model, s2.Model)
	}
	suite := e2eSuite(t)
	cells, err := ParseCells([]string{s1.Model}, []string{"hermes", "xml"}, []string{"raw"})
	if err != nil {
		t.Fatal(err)
	}
	const repeats = 2
	total := len(cells) * len(suite.Cases) * repeats
	dir := t.TempDir()

	t.Run("unconstrained, canceled then resumed", func(t *testing.T) {
		d, eps := e2eDriver(t, false, s1, s2)
		ctx, cancel := context.WithCancel(context.Background())
		var once sync.Once
		res, err := Run(ctx, RunConfig{Suite: suite, Cells: cells, Repeats: repeats, Driver: d, Endpoints: eps, Out: dir,
			Progress: func(p Progress) {
				if p.Done >= 4 {
					once.Do(cancel)
				}
			}})
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		if !res.Interrupted || res.Done < 4 || res.Done >= total {
			t.Fatalf("first run: interrupted %v, done %d of %d", res.Interrupted, res.Done, total)
		}
		before, err := ReadResults(dir)
		if err != nil {
			t.Fatal(err)
		}
		d2, eps2 := e2eDriver(t, false, s1, s2)
		perEndpoint := map[string]int{}
		res2, err := Run(context.Background(), RunConfig{Suite: suite, Cells: cells, Repeats: repeats, Driver: d2, Endpoints: eps2,
			Out: dir, Resume: true, Progress: func(p Progress) { perEndpoint = p.Endpoint }})
		if err != nil {
			t.Fatal(err)
		}
		if res2.Interrupted || res2.Skipped != res.Done || res2.Done != total-res.Done {
			t.Fatalf("resume: skipped %d (want %d), done %d (want %d)", res2.Skipped, res.Done, res2.Done, total-res.Done)
		}
		after, err := ReadResults(dir)
		if err != nil {
			t.Fatal(err)
		}
		// Nothing lost: the first run's records are still there, unchanged.
		for i, r := range before {
			if after[i].ID != r.ID || after[i].Raw != r.Raw || after[i].Attempt != r.Attempt {
				t.Fatalf("record %d changed by the resume", i)
			}
		}
		finals := keysOf(t, after)
		if len(finals) != total {
			t.Errorf("%d cases in results, want %d", len(finals), total)
		}
		for k, n := range finals {
			if n != 1 {
				t.Errorf("%v recorded %d times", k, n)
			}
		}
		endpoints := map[string]int{}
		for _, r := range after {
			if r.Final {
				endpoints[r.Endpoint]++
			}
			if r.Error != "" {
				t.Errorf("%s attempt %d: %s", r.ID, r.Attempt, r.Error)
			}
			if r.Attempt == 0 && (r.PromptTokens == 0 || r.TotalMillis == 0 || r.Raw == "") {
				t.Errorf("%s: no usage, timing or output recorded: %+v", r.ID, r)
			}
		}
		if endpoints[s1.URL] == 0 || endpoints[s2.URL] == 0 {
			t.Errorf("cases per endpoint %v: the queue did not use both servers", endpoints)
		}
		t.Logf("cases per endpoint %v (resume %v)", endpoints, perEndpoint)
		s := Summarize(after)
		if len(s.Groups) != 2 || len(s.Comparisons) != 2 {
			t.Fatalf("%d groups, %d comparisons", len(s.Groups), len(s.Comparisons))
		}
		for _, g := range s.Groups {
			t.Logf("%s/%s: strict %v lenient %v first-try %v verdicts %v", g.Model, g.Format,
				g.StrictFailure, g.LenientFailure, g.FirstTry, g.Verdicts)
			if g.Cases != len(suite.Cases)*repeats {
				t.Errorf("%s: %d cases", g.Format, g.Cases)
			}
		}
	})

	t.Run("constrained", func(t *testing.T) {
		cdir := t.TempDir()
		d, eps := e2eDriver(t, true, s1, s2)
		ccells, _ := ParseCells([]string{s1.Model}, []string{"hermes"}, []string{"raw"})
		res, err := Run(context.Background(), RunConfig{Suite: suite, Cells: ccells, Repeats: 1, Driver: d, Endpoints: eps, Out: cdir})
		if err != nil {
			t.Fatal(err)
		}
		if res.Done != len(suite.Cases) {
			t.Fatalf("done %d", res.Done)
		}
		// The grammar forces a schema-valid object: nothing fails to parse
		// and every call names a tool of the case.
		for _, r := range res.Records {
			if r.Error != "" || r.Lenient.Failed() || len(r.SchemaErrors) > 0 {
				t.Errorf("%s attempt %d: error %q, parse %+v, schema %+v\nraw: %q", r.ID, r.Attempt, r.Error, r.Lenient, r.SchemaErrors, r.Raw)
			}
		}
		g := Summarize(res.Records).Groups[0]
		t.Logf("constrained: lenient %v verdicts %v", g.LenientFailure, g.Verdicts)
		if g.LenientFailure.K != 0 || g.LenientFailure.N != len(suite.Cases) {
			t.Errorf("constrained lenient failure %+v", g.LenientFailure)
		}
	})
}

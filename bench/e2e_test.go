package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/toolharness/toolharness/backend"
	"github.com/toolharness/toolharness/backend/ollama"
	"github.com/toolharness/toolharness/bench/stats"
	"github.com/toolharness/toolharness/internal/ollamatest"
)

// e2eSuite is small on purpose: the tiny model reads one token per byte
// on two shared cores, so a short catalog keeps each generation quick.
func e2eSuite(t *testing.T) Suite {
	t.Helper()
	s, err := ParseSuite([]byte(`
name: e2e
tools:
  - {name: get_weather, description: "Weather of a city.", input_schema: {type: object, properties: {city: {type: string}}, required: [city]}}
  - {name: read_file, description: "Read a file.", input_schema: {type: object, properties: {path: {type: string}}, required: [path]}}
cases:
  - {id: single, category: single, prompt: "Weather in Paris?", expect: {calls: [{name: get_weather, args: {city: Paris}}]}}
  - {id: parallel, category: parallel, prompt: "Read a.txt and b.txt.", expect: {calls: [{name: read_file, args: {path: a.txt}}, {name: read_file, args: {path: b.txt}}]}}
  - {id: restraint, category: restraint, prompt: "Hello!", expect: {no_call: true}}
`))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// e2eMaxTokens bounds constrained generations. The random model fills a
// string until it happens to close it (about 1 in 95 per token), so
// constrained runs also bound strings (e2eConstrainMaxString): the grammar
// then ends every object well within the limit.
const (
	e2eMaxTokens          = 160
	e2eConstrainMaxString = 16
)

func e2eDriver(t *testing.T, constrained bool, servers ...*ollamatest.Server) (*AgentDriver, []Endpoint) {
	t.Helper()
	temp, seed := 0.8, 7
	maxTokens, maxString := 32, 0
	if constrained {
		maxTokens, maxString = e2eMaxTokens, e2eConstrainMaxString
	}
	d := &AgentDriver{Backends: map[string]backend.Backend{}, MaxRetries: 1, Constrained: constrained,
		ConstrainMaxString: maxString, Options: backend.Options{Temperature: &temp, Seed: &seed, MaxTokens: maxTokens},
		Template: func(context.Context, string, string) (string, error) { return "chatml", nil }}
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
		checkOncePerCase(t, after, total)
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
		schemas := toolSchemas(t, suite)
		for _, g := range s.Groups {
			var group []Record
			for _, r := range after {
				if r.Format == g.Format {
					group = append(group, r)
				}
			}
			valid, n := validCallRate(group, schemas)
			t.Logf("unconstrained %s: call-expecting first attempts that are schema-valid calls %d/%d; strict failure %s, lenient failure %s, first-try success %s, missed call %s, false call %s, verdicts %v",
				g.Format, valid, n, kn(g.StrictFailure), kn(g.LenientFailure), kn(g.FirstTry), kn(g.MissedCall), kn(g.FalseCall), g.Verdicts)
			if g.Cases != len(suite.Cases)*repeats {
				t.Errorf("%s: %d cases", g.Format, g.Cases)
			}
		}
	})

	t.Run("constrained", func(t *testing.T) {
		cdir := t.TempDir()
		d, eps := e2eDriver(t, true, s1, s2)
		ccells, _ := ParseCells([]string{s1.Model}, []string{"hermes"}, []string{"raw"})
		const crepeats = 2
		res, err := Run(context.Background(), RunConfig{Suite: suite, Cells: ccells, Repeats: crepeats, Driver: d, Endpoints: eps, Out: cdir})
		if err != nil {
			t.Fatal(err)
		}
		if res.Done != len(suite.Cases)*crepeats {
			t.Fatalf("done %d", res.Done)
		}
		// A case that expects calls is constrained to calls only, and the
		// grammar (strings bounded by e2eConstrainMaxString) makes every
		// attempt one schema-valid call of a tool of the case. Restraint
		// cases keep the answer alternative: a call or an answer, but
		// schema-valid either way.
		schemas := toolSchemas(t, suite)
		for _, r := range res.Records {
			if r.Error != "" {
				t.Errorf("%s attempt %d: %s", r.ID, r.Attempt, r.Error)
				continue
			}
			if r.GeneratedTokens >= e2eMaxTokens {
				t.Errorf("%s attempt %d: cut by the token limit (%d tokens) although strings are bounded; raw %q", r.ID, r.Attempt, r.GeneratedTokens, r.Raw)
				continue
			}
			if r.Lenient.Failed() || len(r.SchemaErrors) > 0 {
				t.Errorf("%s attempt %d: constrained output failed: parse %+v, schema %+v\nraw: %q", r.ID, r.Attempt, r.Lenient, r.SchemaErrors, r.Raw)
			}
			if r.ExpectNoCall {
				continue
			}
			if len(r.Lenient.Calls) != 1 {
				t.Errorf("%s attempt %d: %d calls, want exactly one (the schema has no answer branch); raw %q", r.ID, r.Attempt, len(r.Lenient.Calls), r.Raw)
				continue
			}
			call := r.Lenient.Calls[0]
			sch, ok := schemas[call.Name]
			if !ok {
				t.Errorf("%s attempt %d: called %q, not a tool of the case", r.ID, r.Attempt, call.Name)
				continue
			}
			if err := validateArgs(sch, call.Arguments); err != nil {
				t.Errorf("%s attempt %d: %s(%s) is not schema-valid: %v", r.ID, r.Attempt, call.Name, call.Arguments, err)
			}
		}
		g := Summarize(res.Records).Groups[0]
		valid, n := validCallRate(res.Records, schemas)
		t.Logf("constrained hermes: %d attempts in %d cases; call-expecting first attempts that are schema-valid calls %d/%d; strict failure %s, lenient failure %s, first-try success %s, missed call %s, false call %s, wrong tool %s, verdicts %v",
			len(res.Records), res.Done, valid, n, kn(g.StrictFailure), kn(g.LenientFailure), kn(g.FirstTry), kn(g.MissedCall), kn(g.FalseCall), kn(g.WrongTool), g.Verdicts)
	})
}

// kn writes a rate as k/n.
func kn(r stats.Rate) string { return fmt.Sprintf("%d/%d", r.K, r.N) }

// toolSchemas compiles the parameter schema of every tool of the suite.
func toolSchemas(t *testing.T, s Suite) map[string]*jsonschema.Schema {
	t.Helper()
	out := map[string]*jsonschema.Schema{}
	for _, c := range s.Cases {
		for _, tool := range c.Tools {
			if _, ok := out[tool.Name]; ok {
				continue
			}
			doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(tool.Parameters))
			if err != nil {
				t.Fatalf("%s: %v", tool.Name, err)
			}
			comp := jsonschema.NewCompiler()
			url := "mem://" + tool.Name + ".json"
			if err := comp.AddResource(url, doc); err != nil {
				t.Fatal(err)
			}
			if out[tool.Name], err = comp.Compile(url); err != nil {
				t.Fatalf("%s: %v", tool.Name, err)
			}
		}
	}
	return out
}

func validateArgs(sch *jsonschema.Schema, args json.RawMessage) error {
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(args))
	if err != nil {
		return err
	}
	return sch.Validate(v)
}

// validCallRate counts the first attempts of call-expecting cases that
// are one or more calls, all of a tool of the case with schema-valid
// arguments, and nothing the parser or registry objected to.
func validCallRate(recs []Record, schemas map[string]*jsonschema.Schema) (valid, n int) {
	for _, r := range recs {
		if r.Attempt != 0 || r.Error != "" || len(r.Expected) == 0 {
			continue
		}
		n++
		if r.Lenient.Failed() || len(r.SchemaErrors) > 0 || len(r.Lenient.Calls) == 0 {
			continue
		}
		ok := true
		for _, c := range r.Lenient.Calls {
			sch, known := schemas[c.Name]
			if !known || validateArgs(sch, c.Arguments) != nil {
				ok = false
			}
		}
		if ok {
			valid++
		}
	}
	return valid, n
}

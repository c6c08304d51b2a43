package bench

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/toolharness/toolharness/backend"
	"github.com/toolharness/toolharness/internal/reach"
	"github.com/toolharness/toolharness/parse"
	"github.com/toolharness/toolharness/render"
)

// Cell is one point of the run matrix.
type Cell struct {
	Model  string
	Format string // a parse format, or Native for the model template's own
	Mode   string // "raw", "chat" or "server" (backend.Mode)
}

// Endpoint is one model server and how many cases it runs at once.
type Endpoint struct {
	URL         string
	Concurrency int
}

// Driver runs one case in one cell on one endpoint, with the retry budget
// of the run. The implementation over package agent is AgentDriver; the
// interface keeps the runner testable and the agent replaceable.
type Driver interface {
	RunCase(ctx context.Context, endpoint string, cell Cell, c Case) (CaseRun, error)
}

// CaseRun is what a driver reports about one case.
type CaseRun struct {
	// FormatUsed is the format the prompt asked for (Native resolved).
	FormatUsed string
	Attempts   []AttemptRun
}

// AttemptRun is one generation of a case.
type AttemptRun struct {
	Raw             string
	Strict          ParseResult
	Lenient         ParseResult
	SchemaErrors    []Problem
	PromptTokens    int
	GeneratedTokens int
	CachedTokens    int
	CachedKnown     bool
	TTFT, Total     time.Duration
	// StopReason is the server's ("length": cut by the token limit).
	StopReason string
}

// RunConfig is a live benchmark run.
type RunConfig struct {
	Suite     Suite
	Cells     []Cell
	Repeats   int
	Endpoints []Endpoint
	Driver    Driver
	// Out is the results directory; Resume continues the results there.
	Out    string
	Resume bool
	// Progress receives progress updates (may be nil), one call at a
	// time and in order.
	Progress func(Progress)
	// Manifest, when set, is written to Out/manifest.json; a Resume into
	// a directory whose manifest differs from it is refused.
	Manifest *Manifest
}

// Progress is the state of a run, sent after every finished case.
type Progress struct {
	Total, Done, Skipped int
	// Failed counts done cases whose first attempt failed to parse
	// (lenient), for the running failure rate.
	Failed  int
	Errors  int
	Elapsed time.Duration
	// Endpoint counts finished cases per endpoint URL.
	Endpoint map[string]int
}

// Rate is cases per second since the start.
func (p Progress) Rate() float64 {
	if p.Elapsed <= 0 {
		return 0
	}
	return float64(p.Done) / p.Elapsed.Seconds()
}

// ETA estimates the time left.
func (p Progress) ETA() time.Duration {
	r := p.Rate()
	if r == 0 {
		return 0
	}
	return time.Duration(float64(p.Total-p.Skipped-p.Done) / r * float64(time.Second))
}

// RunResult says how a run ended.
type RunResult struct {
	Records []Record // every record in the results file, old and new
	Done    int      // cases finished in this invocation
	Skipped int      // cases already in the file (resume)
	// Errors counts the cases of this invocation that ended in a harness
	// or server error (recorded with verdict error, left out of rates).
	Errors int
	// NotRun counts the cases that did not run: ctx ended, or every
	// endpoint stopped.
	NotRun int
	// Interrupted is true when ctx ended before every case ran; the
	// finished cases are in the file, the rest run on --resume.
	Interrupted bool
	// Stopped lists the endpoints that stopped taking cases because the
	// server could not be reached, in the order they stopped.
	Stopped []EndpointStop
}

// EndpointStop says why an endpoint stopped taking cases.
type EndpointStop struct {
	URL string
	// Err is the one-line reason (a *reach.Error).
	Err error
	// After counts the cases the endpoint finished before it stopped,
	// the failed one included.
	After int
}

func (s EndpointStop) Error() string {
	return fmt.Sprintf("%v (endpoint stopped after %d case(s))", s.Err, s.After)
}

type job struct {
	cell   Cell
	c      Case
	repeat int
}

// Run executes the matrix: every case of the suite, in every cell, Repeats
// times, spread over the endpoints by a shared work queue (each endpoint
// runs Concurrency workers, so faster servers take more cases). A case's
// records are written and fsynced together when it finishes. When ctx
// ends, running cases are abandoned unwritten and Run returns what is in
// the file with Interrupted set, so a later Resume runs exactly the
// missing cases. A case whose server cannot be reached is recorded as an
// error and stops its endpoint (a dead server would otherwise turn every
// remaining case into an error record); the other endpoints go on, and
// the cases left when all have stopped are counted in NotRun.
func Run(ctx context.Context, cfg RunConfig) (RunResult, error) {
	var res RunResult
	if cfg.Driver == nil || len(cfg.Endpoints) == 0 || len(cfg.Cells) == 0 || len(cfg.Suite.Cases) == 0 {
		return res, errors.New("bench: run needs a driver, endpoints, cells and cases")
	}
	manifest := cfg.Manifest
	if manifest != nil && cfg.Resume {
		// Checked before the results are opened: opening them for a
		// resume rewrites the file.
		var err error
		if manifest, err = checkResume(cfg.Out, manifest, hasResults(cfg.Out)); err != nil {
			return res, err
		}
	}
	w, kept, err := OpenResults(cfg.Out, cfg.Resume)
	if err != nil {
		return res, err
	}
	defer w.Close()
	if manifest != nil {
		if err := WriteManifest(cfg.Out, manifest); err != nil {
			return res, err
		}
	}
	jobs, total, skipped := plan(cfg, kept)
	res.Skipped = skipped
	// Every job is queued up front, so a worker that stops leaves its
	// share to the others without a feeder to unblock.
	queue := make(chan job, len(jobs))
	for _, j := range jobs {
		queue <- j
	}
	close(queue)
	var (
		mu       sync.Mutex
		records  = kept
		writeErr error
		prog     = Progress{Total: total, Skipped: res.Skipped, Endpoint: map[string]int{}}
		start    = time.Now()
		stopped  = map[string]bool{}
	)
	if cfg.Progress != nil {
		// The starting state, so a resumed run shows what it skipped.
		cfg.Progress(Progress{Total: total, Skipped: res.Skipped, Endpoint: map[string]int{}})
	}
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	isStopped := func(url string) bool {
		mu.Lock()
		defer mu.Unlock()
		return stopped[url]
	}
	var wg sync.WaitGroup
	for _, ep := range cfg.Endpoints {
		for i := 0; i < max(ep.Concurrency, 1); i++ {
			wg.Add(1)
			go func(url string) {
				defer wg.Done()
				for !isStopped(url) && runCtx.Err() == nil {
					j, more := <-queue
					if !more {
						return
					}
					recs, ok, runErr := runJob(runCtx, cfg.Driver, url, j)
					if !ok {
						continue // canceled mid-case: not written, runs again on resume
					}
					if err := w.WriteCase(recs); err != nil {
						mu.Lock()
						writeErr = err
						mu.Unlock()
						stop()
						continue
					}
					mu.Lock()
					records = append(records, recs...)
					prog.Done++
					prog.Endpoint[url]++
					if recs[0].Lenient.Failed() {
						prog.Failed++
					}
					if recs[len(recs)-1].Error != "" {
						prog.Errors++
					}
					if re := reach.FromError(runErr, "", url); re != nil && !stopped[url] {
						stopped[url] = true
						res.Stopped = append(res.Stopped, EndpointStop{URL: url, Err: re, After: prog.Endpoint[url]})
					}
					prog.Elapsed = time.Since(start)
					if cfg.Progress != nil {
						snapshot := prog
						snapshot.Endpoint = copyCounts(prog.Endpoint)
						cfg.Progress(snapshot)
					}
					mu.Unlock()
				}
			}(ep.URL)
		}
	}
	wg.Wait()
	res.Records, res.Done, res.Errors = records, prog.Done, prog.Errors
	res.NotRun = total - res.Done - res.Skipped
	res.Interrupted = ctx.Err() != nil && res.NotRun > 0
	if writeErr != nil {
		return res, writeErr
	}
	return res, nil
}

// plan lists the jobs of the matrix that are not already final in kept.
func plan(cfg RunConfig, kept []Record) (jobs []job, total, skipped int) {
	done := map[Key]bool{}
	for _, r := range kept {
		if r.Final {
			done[r.Key()] = true
		}
	}
	for _, cell := range cfg.Cells {
		for rep := 0; rep < max(cfg.Repeats, 1); rep++ {
			for _, c := range cfg.Suite.Cases {
				total++
				k := Key{Model: cell.Model, Format: cell.Format, Mode: cell.Mode, ID: c.ID, Repeat: rep}
				if done[k] {
					skipped++
					continue
				}
				jobs = append(jobs, job{cell: cell, c: c, repeat: rep})
			}
		}
	}
	return jobs, total, skipped
}

func copyCounts(m map[string]int) map[string]int {
	out := make(map[string]int, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// runJob runs one case and turns it into records, returning the driver's
// error too; ok is false when the run was canceled before the case
// finished.
func runJob(ctx context.Context, d Driver, endpoint string, j job) ([]Record, bool, error) {
	if ctx.Err() != nil {
		return nil, false, nil
	}
	run, err := d.RunCase(ctx, endpoint, j.cell, j.c)
	if ctx.Err() != nil {
		return nil, false, nil
	}
	base := Record{
		ID: j.c.ID, Model: j.cell.Model, Format: j.cell.Format, Mode: j.cell.Mode, Category: j.c.Category,
		Endpoint: endpoint, Repeat: j.repeat, FormatUsed: run.FormatUsed,
		Expected: j.c.Expect.Calls, ExpectNoCall: j.c.Expect.NoCall,
	}
	var recs []Record
	for i, a := range run.Attempts {
		r := base
		r.Attempt = i
		r.Raw, r.Strict, r.Lenient, r.SchemaErrors = a.Raw, a.Strict, a.Lenient, a.SchemaErrors
		r.FailureKind = a.Lenient.FailureKind()
		r.PromptTokens, r.GeneratedTokens, r.CachedTokens, r.CachedKnown = a.PromptTokens, a.GeneratedTokens, a.CachedTokens, a.CachedKnown
		r.setReuse(a)
		r.TTFTMillis, r.TotalMillis = millis(a.TTFT), millis(a.Total)
		r.StopReason = a.StopReason
		r.Verdict = JudgeAttempt(j.c.Expect, a)
		recs = append(recs, r)
	}
	if err != nil {
		// The driver reports the failed generation as the last attempt
		// (with what arrived); without one, a bare record keeps the case
		// final so resume does not repeat it.
		if len(recs) == 0 {
			recs = append(recs, base)
		}
		last := &recs[len(recs)-1]
		last.Error = err.Error()
		last.Verdict = VerdictError
	}
	last := &recs[len(recs)-1]
	last.Final = true
	last.Retries = last.Attempt
	last.Success = last.Error == "" && last.Verdict.Success()
	return recs, true, err
}

func millis(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// Native is the cell format that stands for the format the model's chat
// template writes calls in (its family's own). Results made before it had
// this name say "auto", which is parse's word for "guess the format".
const Native = "native"

// ServerFormat is the format of every server-mode cell: the server's own
// template renders the tools and its own parser reads the calls, so the
// --formats of a run do not apply to it (one cell per model).
const ServerFormat = "server"

// Formats are the formats a cell may name besides Native: those a prompt
// can be written in (render.Formats) and read back from (parse.Formats).
func Formats() []string {
	var out []string
	for _, f := range parse.Formats() {
		if f != "auto" && slices.Contains(render.Formats(), f) {
			out = append(out, f)
		}
	}
	return out
}

// ParseCells builds the matrix of models × formats × modes. Every value is
// checked before anything runs: a format must be Native or one of
// Formats(), a mode raw, chat or server, and no value may be given twice.
// Server mode makes one cell per model, of format ServerFormat, whatever
// the formats.
func ParseCells(models, formats, modes []string) ([]Cell, error) {
	if len(models) == 0 || len(formats) == 0 || len(modes) == 0 {
		return nil, inputError(nil, "give at least one model, format and mode")
	}
	known := append(Formats(), Native)
	checks := []struct {
		flag string
		vals []string
		ok   func(string) error
	}{
		{"--models", models, func(string) error { return nil }},
		{"--formats", formats, func(f string) error {
			if slices.Contains(known, f) {
				return nil
			}
			return inputError(nil, "--formats %q: want one of %s", f, strings.Join(known, ", "))
		}},
		{"--modes", modes, func(m string) error {
			if _, err := backend.ParseMode(m); err != nil {
				return inputError(nil, "--modes %q: want raw, chat or server", m)
			}
			return nil
		}},
	}
	for _, c := range checks {
		seen := map[string]bool{}
		for _, v := range c.vals {
			if err := c.ok(v); err != nil {
				return nil, err
			}
			if seen[v] {
				return nil, inputError(nil, "%s: %q given twice", c.flag, v)
			}
			seen[v] = true
		}
	}
	var cells []Cell
	for _, m := range models {
		for _, f := range formats {
			for _, mode := range modes {
				if mode != string(backend.ModeServer) {
					cells = append(cells, Cell{Model: m, Format: f, Mode: mode})
				}
			}
		}
		if slices.Contains(modes, string(backend.ModeServer)) {
			// The server chooses the format: one cell per model.
			cells = append(cells, Cell{Model: m, Format: ServerFormat, Mode: string(backend.ModeServer)})
		}
	}
	return cells, nil
}

package bench

import (
	"context"
	"errors"
	"slices"
	"testing"
)

// outcomeDriver answers each case by id: "retry-refused" misses the call
// on its first attempt and its retry is refused by the server; "cut" is
// cut by the token limit; every other case makes the expected call.
type outcomeDriver struct{}

func (outcomeDriver) RunCase(_ context.Context, _ string, cell Cell, c Case) (CaseRun, error) {
	prose := ParseResult{Content: "I would call f."}
	run := CaseRun{FormatUsed: cell.Format}
	switch c.ID {
	case "c1": // retry-refused
		run.Attempts = []AttemptRun{{Raw: prose.Content, Lenient: prose, Strict: prose}, {}}
		return run, errors.New("backend: ollama: server (HTTP 500): model runner crashed")
	case "c2": // cut
		run.Attempts = []AttemptRun{{Raw: "I would call", Lenient: ParseResult{Content: "I would call"}, StopReason: StopLength}}
		return run, nil
	}
	return (&scriptDriver{}).RunCase(context.Background(), "", cell, c)
}

// TestFailedRetryIsAnError: a case whose retry request failed at the
// server is an error, in no rate, even though its first attempt (a missed
// call) was judged; a case cut by the token limit is truncated, never a
// success or a missed call.
func TestFailedRetryIsAnError(t *testing.T) {
	cells, err := ParseCells([]string{"m"}, []string{"hermes"}, []string{"raw"})
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(context.Background(), RunConfig{Suite: testSuite(t), Cells: cells, Driver: outcomeDriver{}, Out: t.TempDir(),
		Endpoints: []Endpoint{{URL: "http://a"}}})
	if err != nil {
		t.Fatal(err)
	}
	s := Summarize(res.Records)
	if len(s.Groups) != 1 {
		t.Fatalf("%d groups", len(s.Groups))
	}
	g := s.Groups[0]
	if g.Errors != 1 || g.Cases != 3 || g.Verdicts["error"] != 1 || g.Verdicts["truncated"] != 1 || g.Verdicts["ok"] != 1 {
		t.Errorf("errors %d cases %d verdicts %v", g.Errors, g.Cases, g.Verdicts)
	}
	// c2 (truncated) and c3 (restraint, ok) are the measured cases.
	for name, r := range map[string]struct{ k, n int }{
		"first try": {g.FirstTry.K, g.FirstTry.N}, "within 1": {g.Within1.K, g.Within1.N},
		"within 3": {g.Within3.K, g.Within3.N}, "missed call": {g.MissedCall.K, g.MissedCall.N},
		"lenient": {g.LenientFailure.K, g.LenientFailure.N}, "truncated": {g.Truncated.K, g.Truncated.N},
	} {
		want := map[string]struct{ k, n int }{
			"first try": {1, 2}, "within 1": {1, 2}, "within 3": {1, 2}, "missed call": {0, 1}, "lenient": {0, 2}, "truncated": {1, 1}, // scriptDriver reports no stop reason
		}[name]
		if r != want {
			t.Errorf("%s: %d/%d, want %d/%d", name, r.k, r.n, want.k, want.n)
		}
	}
	if g.MeanRetries != 0 {
		t.Errorf("mean retries %v: the failed retry was counted", g.MeanRetries)
	}
}

// TestCompareAgainstServer: formats pair within a mode, and every format
// of a harness mode pairs with the server's parser of the same model (B,
// with both modes named); server mode never pairs with itself.
func TestCompareAgainstServer(t *testing.T) {
	groups := []Group{
		{Model: "m", Format: ServerFormat, Mode: "server"}, // FormatUsed is only set when it differs
		{Model: "m", Format: "hermes", Mode: "raw"},
		{Model: "m", Format: "xml", Mode: "raw"},
		{Model: "m", Format: "hermes", Mode: "chat"},
		{Model: "other", Format: "hermes", Mode: "raw"},
	}
	var got []string
	for _, c := range compareFormats(groups) {
		if c.Metric == "first_try_success" {
			got = append(got, c.ModeLabel()+": "+c.LabelA()+" vs "+c.LabelB())
		}
	}
	want := []string{
		"raw vs server: hermes (raw) vs server (server)",
		"raw vs server: xml (raw) vs server (server)",
		"chat vs server: hermes (chat) vs server (server)",
		"raw: hermes vs xml",
	}
	if !slices.Equal(got, want) {
		t.Errorf("pairs:\n got %q\nwant %q", got, want)
	}
}

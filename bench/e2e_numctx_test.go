package bench

import (
	"context"
	"strings"
	"testing"

	"github.com/toolharness/toolharness/internal/ollamatest"
)

// TestE2EBenchOneRunner: a bench run (what compare runs too) of prompts of
// several sizes, two formats and both raw and chat mode against one test
// Ollama, with no --num-ctx, sends one num_ctx for the model the whole
// run: Ollama starts its runner once (the warm-up) and never again, which
// it would at every change of num_ctx.
func TestE2EBenchOneRunner(t *testing.T) {
	srv := ollamatest.Start(t, ollamatest.WithOwnProcess()) // its own log
	suite := e2eSuite(t)
	cells, err := ParseCells([]string{srv.Model}, []string{"hermes", "xml"}, []string{"raw", "chat"})
	if err != nil {
		t.Fatal(err)
	}
	d, eps := e2eDriver(t, false, srv)
	res, err := Run(context.Background(), RunConfig{Suite: suite, Cells: cells, Repeats: 1, Driver: d, Endpoints: eps, Out: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if want := len(cells) * len(suite.Cases); res.Done != want || res.Errors != 0 {
		t.Fatalf("done %d of %d, %d errors", res.Done, want, res.Errors)
	}
	if n := strings.Count(srv.Log(), `msg="starting llama server"`); n != 1 {
		t.Errorf("Ollama started its runner %d times during the run, want once (num_ctx changed?)", n)
	}
}

package derive

import (
	"encoding/json"
	"flag"
	"path/filepath"
	"testing"

	"github.com/toolharness/toolharness/internal/golden"
)

var update = flag.Bool("update", false, "rewrite testdata goldens (requests.json; then re-run testdata/render_requests.py)")

// recordedRequests is every request the recorded renders answer: the probe
// set and the round-trip conversations in each input style.
func recordedRequests() []Probe {
	ps := Probes()
	ps = append(ps, roundTripProbes()...)
	return ps
}

// TestRequestsFile keeps testdata/requests.json (the input of
// testdata/render_requests.py) equal to the requests the tests make, so a
// change of the probes cannot silently replay stale renders.
func TestRequestsFile(t *testing.T) {
	b, err := json.MarshalIndent(recordedRequests(), "", " ")
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, *update, filepath.Join("testdata", "requests.json"), string(b)+"\n")
}

// TestRecordingsComplete: every recording answers every request, so a
// changed probe set without re-running render_requests.py fails here
// rather than as a puzzling derivation difference.
func TestRecordingsComplete(t *testing.T) {
	for _, rec := range loadRecordings(t) {
		for _, p := range recordedRequests() {
			if _, ok := rec.Renders[p.Name]; !ok {
				t.Errorf("%s: no render of %q: run python3 derive/testdata/render_requests.py", rec.ID, p.Name)
			}
		}
		if len(rec.Renders) != len(recordedRequests()) {
			t.Errorf("%s: %d renders for %d requests: run python3 derive/testdata/render_requests.py", rec.ID, len(rec.Renders), len(recordedRequests()))
		}
	}
}

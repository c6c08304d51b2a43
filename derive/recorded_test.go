package derive

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"testing"
)

// recording is one template's reference renders (testdata/renders/ID.json,
// made by testdata/render_requests.py with ../shared/templates/render.py).
type recording struct {
	ID            string            `json:"id"`
	File          string            `json:"file"`
	SpecialTokens map[string]string `json:"special_tokens"`
	Renders       map[string]struct {
		Text  *string `json:"text"`
		Error string  `json:"error"`
	} `json:"renders"`
}

// recordedRenderer replays a recording: it answers exactly the recorded
// requests (matched by content, not by name) and fails on any other.
type recordedRenderer struct {
	rec    *recording
	byBody map[string]string // request JSON -> probe name
}

func requestKey(r Request) string {
	b, _ := json.Marshal(r)
	return string(b)
}

var errTemplateRaised = errors.New("template raised")

func (rr recordedRenderer) Render(req Request) (string, error) {
	name, ok := rr.byBody[requestKey(req)]
	if !ok {
		return "", errors.New("derive test: request not recorded (run -update and testdata/render_requests.py)")
	}
	r, ok := rr.rec.Renders[name]
	if !ok {
		return "", errors.New("derive test: probe " + name + " missing from " + rr.rec.ID)
	}
	if r.Text == nil {
		return "", errors.Join(errTemplateRaised, errors.New(r.Error))
	}
	return *r.Text, nil
}

func loadRecordings(t testing.TB) []*recording {
	t.Helper()
	var files []string
	for _, dir := range []string{"renders", "renders-unseen"} {
		found, err := filepath.Glob(filepath.Join("testdata", dir, "*.json"))
		if err != nil || len(found) == 0 {
			t.Fatalf("no recorded renders in testdata/%s: %v", dir, err)
		}
		files = append(files, found...)
	}
	sort.Strings(files)
	var recs []*recording
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		rec := &recording{}
		if err := json.Unmarshal(b, rec); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		recs = append(recs, rec)
	}
	return recs
}

func newRecordedRenderer(rec *recording) recordedRenderer {
	rr := recordedRenderer{rec: rec, byBody: map[string]string{}}
	for _, p := range recordedRequests() {
		rr.byBody[requestKey(p.Request)] = p.Name
	}
	return rr
}

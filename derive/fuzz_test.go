package derive

import (
	"errors"
	"testing"
)

// splicedRenderer replays a recording but answers one probe with fuzzed
// text (or an error), so derivation meets renders no template wrote.
type splicedRenderer struct {
	recordedRenderer
	probe string
	text  string
}

func (s splicedRenderer) Render(r Request) (string, error) {
	if s.byBody[requestKey(r)] == s.probe {
		if s.text == "\x00error" {
			return "", errors.New("fuzz: raised")
		}
		return s.text, nil
	}
	return s.recordedRenderer.Render(r)
}

// FuzzDerive: derivation never panics, whatever a template renders, and
// what it returns is consistent (a call syntax only when calls were seen;
// a named format, a valid syntax or a note saying why not).
func FuzzDerive(f *testing.F) {
	ids := []string{"zai-org-GLM-4.5", "deepseek-r1-distill-qwen-32b", "qwen2.5-7b-instruct", "llama-cpp-lfm2", "functionary-medium-v3.2"}
	recs := map[string]recordedRenderer{}
	probes := Probes()
	for _, id := range ids {
		rec := loadRecording(f, id)
		recs[id] = newRecordedRenderer(rec)
		for i, p := range probes {
			if r, ok := rec.Renders[p.Name]; ok && r.Text != nil {
				f.Add(uint8(len(recs)-1), uint8(i), *r.Text)
			}
		}
	}
	f.Add(uint8(0), uint8(5), "\x00error")
	f.Fuzz(func(t *testing.T, which, probe uint8, text string) {
		r := recs[ids[int(which)%len(ids)]]
		res, err := Derive(splicedRenderer{r, probes[int(probe)%len(probes)].Name, text}, Tokens{EOS: "</s>"})
		if err != nil {
			return
		}
		if !res.WritesCalls && (res.Syntax.Body != 0 || res.Format != "") {
			t.Fatalf("a syntax without calls: %+v", res)
		}
		if res.WritesCalls && res.Format == "" && res.Syntax.Validate() != nil && len(res.Notes) == 0 {
			t.Fatalf("an invalid syntax without a note: %+v", res.Syntax)
		}
	})
}

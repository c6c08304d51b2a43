package parse

import (
	"bufio"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolharness/toolharness/chat"
)

// corpusDir is the repository's copy of the shared corpus (with its
// attribution README); tests read it from there so they run from a clean
// clone.
const corpusDir = "../testdata/corpus"

type corpusRecord struct {
	File   string
	Line   int
	Source string `json:"source"`
	Model  string `json:"model"`
	Raw    string `json:"raw"`
	// hanxen labels
	ToolNames []string `json:"tool_names"`
	Strategy  string   `json:"system_prompt_strategy"`
	// mikeveerman labels
	Backend      string `json:"backend"`
	HarnessTool  *bool  `json:"harness_tool_called"`
	HarnessName  string `json:"harness_tool_name"`
	HarnessValid *bool  `json:"harness_valid_args"`
}

func loadCorpus(t testing.TB) []corpusRecord {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(corpusDir, "*.jsonl"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no corpus files in %s (err %v): the corpus copy is part of the repository; restore testdata/corpus", corpusDir, err)
	}
	var out []corpusRecord
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(fh)
		sc.Buffer(make([]byte, 1<<20), 1<<24)
		n := 0
		for sc.Scan() {
			n++
			var r corpusRecord
			if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
				t.Fatalf("%s:%d: %v", f, n, err)
			}
			r.File, r.Line = filepath.Base(f), n
			out = append(out, r)
		}
		fh.Close()
		if err := sc.Err(); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// corpusTools returns the catalog of a corpus file.
func corpusTools(t testing.TB, file string) []chat.Tool {
	t.Helper()
	name := "mikeveerman_tools.json"
	if strings.HasPrefix(file, "hanxen") {
		name = "hanxen_tools.yaml"
	}
	tools, err := chat.ReadToolsFile(filepath.Join(corpusDir, name))
	if err != nil {
		t.Fatalf("corpus tools: %v", err)
	}
	return tools
}

// collect runs text through a parser in the given chunks.
func collect(t testing.TB, format string, opts Options, chunks []string) []Event {
	t.Helper()
	p, err := New(format, opts)
	if err != nil {
		t.Fatal(err)
	}
	return run(p, chunks)
}

// run feeds the chunks to p and closes it.
func run(p *Parser, chunks []string) []Event {
	var evs []Event
	emit := func(e Event) { evs = append(evs, e) }
	for _, c := range chunks {
		p.Feed(c, emit)
	}
	p.Close(emit)
	return evs
}

// merged joins adjacent text events of one part, the one way chunkings
// may differ.
func merged(evs []Event) []Event {
	var out []Event
	for _, e := range evs {
		if last := len(out) - 1; e.Type == EventText && last >= 0 && out[last].Type == EventText && out[last].Part == e.Part {
			out[len(out)-1].Text += e.Text
			continue
		}
		out = append(out, e)
	}
	return out
}

// randomChunks cuts s at random places.
func randomChunks(s string, seed uint64) []string {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	var out []string
	for len(s) > 0 {
		var n int
		switch r.IntN(4) {
		case 0:
			n = 1
		case 1:
			n = 1 + r.IntN(4)
		case 2:
			n = 1 + r.IntN(16)
		default:
			n = 1 + r.IntN(200)
		}
		n = min(n, len(s))
		out = append(out, s[:n])
		s = s[n:]
	}
	return out
}

// reconstruct puts the text back together from the events: content, the
// raw span of each block (once, calls of one block share it) and the raw
// bytes of errors. It must give back the input exactly.
func reconstruct(evs []Event) string {
	var b strings.Builder
	lastOff := -1
	for _, e := range evs {
		switch e.Type {
		case EventText:
			b.WriteString(e.Text)
		case EventCall:
			if e.Call.Offset != lastOff {
				b.WriteString(e.Call.Raw)
				lastOff = e.Call.Offset
			}
		case EventError:
			if e.Err.Raw != "" && e.Err.Offset != lastOff {
				b.WriteString(e.Err.Raw)
				lastOff = e.Err.Offset
			}
		}
	}
	return b.String()
}

package parse

import (
	"encoding/json"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/ollama/ollama/api"
	"github.com/ollama/ollama/model/parsers"
	"github.com/toolharness/toolharness/chat"
)

// benchInput builds about size bytes of model output in format: prose
// taken from the real corpus, with a call block after every paragraph.
func benchInput(tb testing.TB, format string, size int) string {
	var prose []string
	for _, r := range loadCorpus(tb) {
		if !strings.ContainsAny(r.Raw, "<{[`") && len(r.Raw) > 200 {
			prose = append(prose, r.Raw)
		}
	}
	if len(prose) == 0 {
		tb.Fatal("no prose records in the corpus")
	}
	call := map[string]string{
		"hermes":      "\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Antwerp\"}}\n</tool_call>\n",
		"qwen3-coder": "\n<tool_call>\n<function=get_weather>\n<parameter=city>\nAntwerp\n</parameter>\n</function>\n</tool_call>\n",
		"prose":       "",
	}[format]
	var b strings.Builder
	for i := 0; b.Len() < size; i++ {
		b.WriteString(prose[i%len(prose)])
		b.WriteString(call)
	}
	return b.String()[:size]
}

func chunksOf(s string, n int) []string {
	out := make([]string, 0, len(s)/n+1)
	for len(s) > 0 {
		k := min(n, len(s))
		out = append(out, s[:k])
		s = s[k:]
	}
	return out
}

func benchOurs(b *testing.B, format, in string, chunk int) {
	benchParser(b, format, in, chunk, corpusTools(b, "mikeveerman_raw.jsonl"))
}

func benchParser(b *testing.B, format, in string, chunk int, tools []chat.Tool) {
	p, err := New(format, Options{Tools: tools})
	if err != nil {
		b.Fatal(err)
	}
	if chunk <= 0 {
		chunk = len(in)
	}
	calls := 0
	emit := func(e Event) {
		if e.Type == EventCall {
			calls++
		}
	}
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := cpuTime()
	for range b.N {
		// Chunks are cut on the fly: a slice of them would be a large
		// GC root and make the cost look superlinear.
		for i := 0; i < len(in); i += chunk {
			p.Feed(in[i:min(i+chunk, len(in))], emit)
		}
		p.Close(emit)
	}
	reportCPU(b, cpu0, len(in))
	b.StopTimer()
	if calls == 0 && !strings.Contains(b.Name(), "Prose") && !strings.Contains(b.Name(), "soup") {
		b.Fatal("no calls parsed")
	}
}

func ollamaTools(b *testing.B, tools []chat.Tool) []api.Tool {
	data, err := json.Marshal(tools)
	if err != nil {
		b.Fatal(err)
	}
	var out []api.Tool
	if err := json.Unmarshal(data, &out); err != nil {
		b.Fatal(err)
	}
	return out
}

func benchOllamaTools(b *testing.B, name, in string, chunk int, ours []chat.Tool) {
	tools := ollamaTools(b, ours)
	if chunk <= 0 {
		chunk = len(in)
	}
	calls := 0
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := cpuTime()
	for range b.N {
		p := parsers.ParserForName(name)
		if p == nil {
			b.Fatalf("ollama has no parser %q", name)
		}
		p.Init(tools, nil, &api.ThinkValue{Value: false})
		for i := 0; i < len(in); i += chunk {
			end := min(i+chunk, len(in))
			_, _, cs, err := p.Add(in[i:end], end == len(in))
			if err != nil {
				b.Fatal(err)
			}
			calls += len(cs)
		}
	}
	reportCPU(b, cpu0, len(in))
	b.StopTimer()
	if calls == 0 {
		b.Fatal("ollama parsed no calls")
	}
}

const benchSize = 180 << 10

// reportCPU adds CPU-time figures (process user+system time, GC included)
// to a benchmark: on a shared machine they are steadier than wall time.
func reportCPU(b *testing.B, cpu0 int64, size int) {
	cpu := cpuTime() - cpu0
	if cpu0 == 0 || cpu <= 0 {
		return
	}
	perOp := float64(cpu) / float64(b.N)
	b.ReportMetric(perOp, "cpu-ns/op")
	b.ReportMetric(float64(size)/perOp*1e9/1e6, "cpu-MB/s")
}

// denseCalls is the number of calls of the call-dense inputs.
const denseCalls = 2000

// denseInput is output that is all calls: denseCalls calls back to back,
// with the arguments real agents pass (a path, a count, a flag, a list),
// varied so that no two calls are the same bytes.
func denseInput(format string) string {
	var b strings.Builder
	for i := range denseCalls {
		path := "src/pkg" + strconv.Itoa(i%37) + "/file_" + strconv.Itoa(i) + ".go"
		switch format {
		case "hermes":
			b.WriteString(`<tool_call>
{"name": "read_file", "arguments": {"path": "` + path + `", "limit": ` + strconv.Itoa(10+i%90) + `, "follow": true, "tags": ["a", "b` + strconv.Itoa(i%5) + `"]}}
</tool_call>
`)
		case "qwen3-coder":
			b.WriteString("<tool_call>\n<function=read_file>\n<parameter=path>\n" + path +
				"\n</parameter>\n<parameter=limit>\n" + strconv.Itoa(10+i%90) +
				"\n</parameter>\n<parameter=follow>\ntrue\n</parameter>\n<parameter=tags>\n[\"a\", \"b" + strconv.Itoa(i%5) +
				"\"]\n</parameter>\n</function>\n</tool_call>\n")
		}
	}
	return b.String()
}

// denseTools is the catalog of the call-dense inputs.
var denseTools = `[{"name":"read_file","description":"Read a file.","parameters":{"type":"object","properties":{
 "path":{"type":"string"},"limit":{"type":"integer"},"follow":{"type":"boolean"},"tags":{"type":"array","items":{"type":"string"}}},"required":["path"]}}]`

// BenchmarkVsOllama runs Ollama's qwen3 and qwen3-coder parsers and ours
// on the same inputs in the same run, in 4-byte chunks and whole: ~180 KB
// of corpus prose with a call after each paragraph, and (dense) 2,000
// calls back to back, where the per-call path is what costs.
func BenchmarkVsOllama(b *testing.B) {
	for _, c := range vsOllamaCases(b) {
		for _, chunk := range []int{4, 0} {
			name := "chunk4"
			if chunk == 0 {
				name = "whole"
			}
			b.Run("ours/"+c.ours+"/"+c.input+name, func(b *testing.B) { benchParser(b, c.ours, c.text, chunk, c.tools) })
			b.Run("ollama/"+c.ollama+"/"+c.input+name, func(b *testing.B) { benchOllamaTools(b, c.ollama, c.text, chunk, c.tools) })
		}
	}
}

// vsOllamaCase is an input that ours (format ours) and Ollama's parser
// (ollama) read side by side: input names it in the benchmark.
type vsOllamaCase struct {
	ours, ollama, input, text string
	tools                     []chat.Tool
}

// vsOllamaCases pairs hermes with Ollama's qwen3 parser and qwen3-coder
// with its qwen3-coder parser, each on corpus prose with calls and on
// call-dense output.
func vsOllamaCases(b *testing.B) []vsOllamaCase {
	var out []vsOllamaCase
	for _, c := range []struct{ ours, ollama string }{{"hermes", "qwen3"}, {"qwen3-coder", "qwen3-coder"}} {
		out = append(out,
			vsOllamaCase{c.ours, c.ollama, "", benchInput(b, c.ours, benchSize), corpusTools(b, "mikeveerman_raw.jsonl")},
			vsOllamaCase{c.ours, c.ollama, "dense/", denseInput(c.ours), mustTools(denseTools)})
	}
	return out
}

// BenchmarkLinear is a pair: the large input is 8× the small one; linear
// cost means ns/op grows about 8× (the target is at most 9×).
func BenchmarkLinear(b *testing.B) {
	for _, format := range []string{"hermes", "qwen3-coder", "auto"} {
		src := format
		if format == "auto" {
			src = "hermes"
		}
		// The large input is the small one repeated, so both have the
		// same mix of prose and calls.
		small := benchInput(b, src, benchSize/8)
		large := strings.Repeat(small, 8)
		b.Run(format+"/small", func(b *testing.B) { benchOurs(b, format, small, 4) })
		b.Run(format+"/large8x", func(b *testing.B) { benchOurs(b, format, large, 4) })
	}
}

// soup is adversarial input: markers, halves of markers, quotes and
// brackets in random order, so that blocks open and never close, values
// never end and tentative blocks are rejected all the time.
func soup(size int) string {
	pieces := []string{"<tool_call>", "</tool_call>", "{", "}", "[", "]", `"name": "a"`, "(", ")", "```", "\n", " ",
		"x", "'", `"`, `\`, "<|channel|>", "to=", "<|message|>", "[TOOL_CALLS]", "<function=", "<parameter=",
		"<invoke name=", "<parameter name=\"", "<function_calls>", ":", ",", "<get_weather>", "</get_weather>",
		"<city>", "<|python_tag|>", "[ARGS]", "json", "tool_code", "a(", "="}
	r := rand.New(rand.NewPCG(1, 2))
	var b strings.Builder
	for b.Len() < size {
		b.WriteString(pieces[r.IntN(len(pieces))])
	}
	return b.String()
}

// BenchmarkLinearSoup is the linear-cost pair on adversarial input; see
// soupPair for how the large input keeps the small one's mix.
func BenchmarkLinearSoup(b *testing.B) {
	for _, format := range []string{"auto", "qwen3-coder", "xml", "hermes"} {
		small, large := soupPair(b, format)
		b.Run(format+"/soup-small", func(b *testing.B) { benchOurs(b, format, small, 4) })
		b.Run(format+"/soup-large8x", func(b *testing.B) { benchOurs(b, format, large, 4) })
	}
}

// soupPair returns an adversarial input for format and one 8× its size
// made of the same mix. Repeating a random soup is not that: a block left
// open at its end runs on into the next copy, and the copies parse
// differently from the original. Nor is a soup 8× as long from the same
// generator, because soup blocks have heavy-tailed lengths (the bracket
// depth and quotes of a tentative JSON value are a random walk): the
// longer the soup, the larger the share of it inside blocks (hermes: 67%
// of 23 KB, 96% of 184 KB), and bytes inside a block cost more than
// text. So the small input is the soup cut where a parser fed it has no
// block open and nothing held back, and the large one is that unit
// repeated: every copy then starts in the same state and parses the same
// way. Where the soup has no such point in its second half (a block opened
// early never closes: xml and qwen3-coder have no closer in the piece
// list), both inputs are one open block to the end, the same mix at any
// length, and the large one is the same soup 8× as long.
func soupPair(tb testing.TB, format string) (small, large string) {
	s := soup(benchSize / 8)
	p, err := New(format, Options{Tools: corpusTools(tb, "mikeveerman_raw.jsonl")})
	if err != nil {
		tb.Fatal(err)
	}
	cut := 0
	emit := func(Event) {}
	for i := 0; i < len(s); i++ {
		p.Feed(s[i:i+1], emit)
		if !p.inBlock && p.held == "" && p.rs == rsNone && (!p.q.on || p.q.phase == qText) {
			cut = i + 1
		}
	}
	if cut >= len(s)/2 {
		return s[:cut], strings.Repeat(s[:cut], 8)
	}
	return s, soup(8 * len(s))
}

// BenchmarkProse feeds prose only in 4-byte chunks; allocs/op must be 0.
func BenchmarkProse(b *testing.B) {
	in := benchInput(b, "prose", benchSize)
	for _, format := range Formats() {
		b.Run(format, func(b *testing.B) { benchOurs(b, format, in, 4) })
	}
}

// TestNoAllocPerChunkOnProse checks the streaming hot path: feeding prose
// allocates nothing, whatever the format.
func TestNoAllocPerChunkOnProse(t *testing.T) {
	in := benchInput(t, "prose", 16<<10)
	chunks := chunksOf(in, 4)
	for _, format := range Formats() {
		p, err := New(format, Options{Tools: testTools})
		if err != nil {
			t.Fatal(err)
		}
		emit := func(Event) {}
		p.Feed(in, emit) // warm up buffers
		allocs := testing.AllocsPerRun(5, func() {
			for _, c := range chunks {
				p.Feed(c, emit)
			}
		})
		if allocs != 0 {
			t.Errorf("%s: %.0f allocations feeding %d prose chunks", format, allocs, len(chunks))
		}
	}
	for _, s := range fuzzSyntaxes() {
		p, err := NewSyntax(s, Options{Tools: testTools})
		if err != nil {
			t.Fatal(err)
		}
		emit := func(Event) {}
		p.Feed(in, emit)
		allocs := testing.AllocsPerRun(5, func() {
			for _, c := range chunks {
				p.Feed(c, emit)
			}
		})
		if allocs != 0 {
			t.Errorf("syntax %s: %.0f allocations feeding %d prose chunks", s.label(), allocs, len(chunks))
		}
	}
}

// TestMemoryBounded checks that what the parser keeps is bounded by the
// holdback plus the current call, not by the output length.
func TestMemoryBounded(t *testing.T) {
	prose := benchInput(t, "prose", 1<<20)
	call := `<tool_call>{"name": "read_file", "arguments": {"path": "` + strings.Repeat("x", 10000) + `"}}</tool_call>`
	p, err := New("hermes", Options{})
	if err != nil {
		t.Fatal(err)
	}
	emit := func(Event) {}
	for _, c := range chunksOf(prose, 7) {
		p.Feed(c, emit)
		if len(p.held) >= p.tab.maxLen {
			t.Fatalf("held %d bytes, more than a marker", len(p.held))
		}
	}
	if c := cap(p.b.buf); c != 0 {
		t.Fatalf("prose grew the block buffer to %d", c)
	}
	for range 3 {
		for _, c := range chunksOf(call+prose[:5000], 7) {
			p.Feed(c, emit)
		}
	}
	if c := cap(p.b.buf); c > 4*len(call) {
		t.Fatalf("block buffer %d bytes for calls of %d", c, len(call))
	}
}

// BenchmarkPairedWithOllama runs ours and Ollama's parser alternately, op by
// op, on the inputs of BenchmarkVsOllama in 4-byte chunks, and reports the
// wall time of each (ours-ns/op, ollama-ns/op) and their ratio (x). On a
// shared machine the speed drifts by tens of percent within seconds; run
// back to back, one benchmark can get the fast seconds and the other the
// slow ones, while alternate ops meet the same drift.
func BenchmarkPairedWithOllama(b *testing.B) {
	for _, in := range vsOllamaCases(b) {
		b.Run(in.ours+"/"+in.input+"chunk4", func(b *testing.B) { benchPaired(b, in, chunksOf(in.text, 4), false) })
	}
}

package parse

import (
	"bufio"
	"encoding/binary"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/ollama/ollama/api"
	"github.com/ollama/ollama/model/parsers"
)

// Real servers stream one token per chunk. The benchmarks below cut their
// inputs where a real vocabulary's pieces end: greedy longest match over
// the pieces of llama.cpp's models/ggml-vocab-qwen2.gguf and
// ggml-vocab-llama-bpe.gguf (no merges, so not the tokenizer's exact
// split, but pieces of the sizes a real tokenizer emits, 1 to about 12
// bytes). testdata/tokens/VOCAB.pieces holds the pieces the benchmark
// inputs use; regenerate them with
//
//	go test ./parse -run TestWritePieces -vocab-dir ~/.cache/toolharness/llamacpp/src/models
//
// (a piece set restricted to the pieces a greedy cut used cuts the same
// inputs the same way, so the small file stands for the whole vocabulary).
var vocabDir = flag.String("vocab-dir", "", "llama.cpp models/ directory: rewrite testdata/tokens/*.pieces from its ggml-vocab-*.gguf")

// benchVocabs are the vocabularies the token-chunk benchmarks cut with.
var benchVocabs = []string{"qwen2", "llama-bpe"}

// TestWritePieces rewrites the piece files from the GGUF vocabularies
// under -vocab-dir; without it, it checks that the piece files cut every
// benchmark input into pieces (the benchmarks' precondition).
func TestWritePieces(t *testing.T) {
	for _, vocab := range benchVocabs {
		if *vocabDir == "" {
			pieces := loadPieces(t, vocab)
			for _, in := range tokenBenchInputs(t) {
				if chunks := cutPieces(in.text, pieces); strings.Join(chunks, "") != in.text {
					t.Fatalf("%s: the %s cut loses bytes", vocab, in.name)
				}
			}
			continue
		}
		all, err := readGGUFTokens(filepath.Join(*vocabDir, "ggml-vocab-"+vocab+".gguf"))
		if err != nil {
			t.Fatal(err)
		}
		used := map[string]bool{}
		for _, in := range tokenBenchInputs(t) {
			for _, c := range cutPieces(in.text, all) {
				used[c] = true
			}
		}
		var lines []string
		for p := range used {
			lines = append(lines, strconv.Quote(p))
		}
		sort.Strings(lines)
		if err := os.WriteFile(filepath.Join("testdata", "tokens", vocab+".pieces"), []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// pieceSet is a vocabulary's pieces as bytes, by length; sorted holds
// cutPieces looks them up in order (a binary search costs the same
// instructions in every process, where a map's probes depend on its
// random seed: scripts/instructions.sh subtracts runs of two processes).
type pieceSet struct {
	pieces map[string]bool
	maxLen int
}

func loadPieces(tb testing.TB, vocab string) pieceSet {
	tb.Helper()
	f, err := os.Open(filepath.Join("testdata", "tokens", vocab+".pieces"))
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	ps := pieceSet{pieces: map[string]bool{}}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		p, err := strconv.Unquote(sc.Text())
		if err != nil {
			tb.Fatalf("%s.pieces: %v", vocab, err)
		}
		ps.add(p)
	}
	return ps
}

func (ps *pieceSet) add(p string) {
	ps.pieces[p] = true
	ps.maxLen = max(ps.maxLen, len(p))
}

// cutPieces cuts s greedily into the longest pieces of ps; a byte no
// piece starts with is a piece of its own (byte-level vocabularies have
// every byte).
func cutPieces(s string, ps pieceSet) []string {
	sorted := make([]string, 0, len(ps.pieces))
	for p := range ps.pieces {
		sorted = append(sorted, p)
	}
	sort.Strings(sorted)
	has := func(p string) bool {
		i := sort.SearchStrings(sorted, p)
		return i < len(sorted) && sorted[i] == p
	}
	out := make([]string, 0, len(s)/2)
	for len(s) > 0 {
		n := 1
		for k := min(ps.maxLen, len(s)); k > 1; k-- {
			if has(s[:k]) {
				n = k
				break
			}
		}
		out = append(out, s[:n])
		s = s[n:]
	}
	return out
}

// readGGUFTokens reads tokenizer.ggml.tokens of a GGUF file and decodes
// the byte-level BPE pieces (GPT-2's byte-to-character map) to bytes.
func readGGUFTokens(path string) (pieceSet, error) {
	f, err := os.Open(path)
	if err != nil {
		return pieceSet{}, err
	}
	defer f.Close()
	r := bufio.NewReader(f)
	var hdr struct {
		Magic   [4]byte
		Version uint32
		Tensors uint64
		KVs     uint64
	}
	if err := binary.Read(r, binary.LittleEndian, &hdr); err != nil || string(hdr.Magic[:]) != "GGUF" {
		return pieceSet{}, fmt.Errorf("%s: not a GGUF file", path)
	}
	str := func() (string, error) {
		var n uint64
		if err := binary.Read(r, binary.LittleEndian, &n); err != nil {
			return "", err
		}
		b := make([]byte, n)
		_, err := io.ReadFull(r, b)
		return string(b), err
	}
	sizes := map[uint32]int{0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}
	var skip func(typ uint32) error
	skip = func(typ uint32) error {
		switch typ {
		case 8:
			_, err := str()
			return err
		case 9:
			var et uint32
			var n uint64
			if err := binary.Read(r, binary.LittleEndian, &et); err != nil {
				return err
			}
			if err := binary.Read(r, binary.LittleEndian, &n); err != nil {
				return err
			}
			for range n {
				if err := skip(et); err != nil {
					return err
				}
			}
			return nil
		}
		_, err := r.Discard(sizes[typ])
		return err
	}
	byteOf := gpt2Bytes()
	for range hdr.KVs {
		key, err := str()
		if err != nil {
			return pieceSet{}, err
		}
		var typ uint32
		if err := binary.Read(r, binary.LittleEndian, &typ); err != nil {
			return pieceSet{}, err
		}
		if key != "tokenizer.ggml.tokens" {
			if err := skip(typ); err != nil {
				return pieceSet{}, err
			}
			continue
		}
		var et uint32
		var n uint64
		binary.Read(r, binary.LittleEndian, &et)
		binary.Read(r, binary.LittleEndian, &n)
		ps := pieceSet{pieces: map[string]bool{}}
		for range n {
			tok, err := str()
			if err != nil {
				return pieceSet{}, err
			}
			var b []byte
			for _, c := range tok {
				if v, ok := byteOf[c]; ok {
					b = append(b, v)
				} else {
					b = append(b, string(c)...) // an added token written as text
				}
			}
			ps.add(string(b))
		}
		return ps, nil
	}
	return pieceSet{}, fmt.Errorf("%s: no tokenizer.ggml.tokens", path)
}

// gpt2Bytes is the inverse of GPT-2's bytes_to_unicode.
func gpt2Bytes() map[rune]byte {
	out := map[rune]byte{}
	printable := func(b int) bool { return b >= '!' && b <= '~' || b >= 0xA1 && b <= 0xAC || b >= 0xAE && b <= 0xFF }
	n := 0
	for b := range 256 {
		if printable(b) {
			out[rune(b)] = byte(b)
		} else {
			out[rune(256+n)] = byte(b)
			n++
		}
	}
	return out
}

// tokenBenchInput is one input of the agent-shaped parse benchmarks.
type tokenBenchInput struct {
	name string
	vsOllamaCase
}

func tokenBenchInputs(tb testing.TB) []tokenBenchInput {
	b, ok := tb.(*testing.B)
	if !ok {
		b = &testing.B{}
	}
	var out []tokenBenchInput
	for _, c := range vsOllamaCases(b) {
		name := c.ours + "/prose"
		if c.input != "" {
			name = c.ours + "/dense"
		}
		out = append(out, tokenBenchInput{name: name, vsOllamaCase: c})
	}
	return out
}

// BenchmarkAgentParse measures parsing the way the agent parses: a fresh
// parser for every generation, fed chunk by chunk, ours and Ollama's
// alternately op by op on the same chunks (x is how many times faster
// ours is; ours-allocs/op is our parser's allocations per parse,
// construction included). Chunks are a real vocabulary's pieces
// (tokens-qwen2, tokens-llama-bpe), single bytes, or the whole input.
func BenchmarkAgentParse(b *testing.B) {
	for _, in := range tokenBenchInputs(b) {
		// Each cut is made for its own run, and benchPaired keeps it
		// as a feedList: no collection scans a string header per
		// chunk, in its run or the others.
		cuts := map[string]func() []string{
			"bytes1": func() []string { return chunksOf(in.text, 1) },
			"whole":  func() []string { return []string{in.text} },
		}
		for _, vocab := range benchVocabs {
			cuts["tokens-"+vocab] = func() []string { return cutPieces(in.text, loadPieces(b, vocab)) }
		}
		for _, cut := range []string{"tokens-qwen2", "tokens-llama-bpe", "bytes1", "whole"} {
			b.Run(in.name+"/"+cut, func(b *testing.B) { benchPaired(b, in.vsOllamaCase, cuts[cut](), true) })
		}
	}
}

// feedList is a cut as the timed loops read it. A []string of the chunks
// would be a pointer per chunk (116,000 in a dense input's token cut,
// 300,000 in single bytes), which every collection during the timed ops
// would scan: the agent holds no such list, each token going to the
// parser as it arrives. A feedList's chunks are string headers whose
// pointer is a uintptr, which the collector does not scan; text keeps the
// bytes they point into alive (and the collector does not move them).
// Read as strings in place, they cost the loops what a []string did.
type feedList struct {
	text   string
	chunks []chunkHeader
}

// chunkHeader is a string header with its pointer as a uintptr.
type chunkHeader struct {
	p uintptr
	n int
}

// feedListOf returns chunks, which hold every byte of one text in order,
// as a feedList.
func feedListOf(chunks []string) feedList {
	f := feedList{text: strings.Join(chunks, ""), chunks: make([]chunkHeader, len(chunks))}
	at := uintptr(unsafe.Pointer(unsafe.StringData(f.text)))
	for i, c := range chunks {
		f.chunks[i] = chunkHeader{at, len(c)}
		at += uintptr(len(c))
	}
	return f
}

// chunk returns the chunk c holds, in place.
func chunk(c *chunkHeader) string {
	return *(*string)(unsafe.Pointer(c))
}

// benchPaired runs ours and Ollama's parser alternately, op by op, on the
// same chunks; fresh builds our parser in every op (as the agent does),
// else once, reused across ops. Ollama's is built in every op.
func benchPaired(b *testing.B, in vsOllamaCase, chunks []string, fresh bool) {
	list := feedListOf(chunks)
	chunks = nil
	tools := ollamaTools(b, in.tools)
	ours, theirs := 0, 0
	emit := func(e Event) {
		if e.Type == EventCall {
			ours++
		}
	}
	// As the agent does: the catalog read once, a parser per generation.
	opts := Options{Tools: in.tools, Catalog: NewCatalog(in.tools)}
	newOurs := func() *Parser {
		p, err := New(in.ours, opts)
		if err != nil {
			b.Fatal(err)
		}
		return p
	}
	reused := newOurs()
	var tOurs, tTheirs time.Duration
	var mallocs uint64
	var ms runtime.MemStats
	b.ResetTimer()
	for range b.N {
		runtime.ReadMemStats(&ms)
		m0 := ms.Mallocs
		t0 := time.Now()
		p := reused
		if fresh {
			p = newOurs()
		}
		feedOurs(p, list.chunks, emit)
		t1 := time.Now()
		runtime.ReadMemStats(&ms)
		mallocs += ms.Mallocs - m0
		t2 := time.Now()
		op := parsers.ParserForName(in.ollama)
		op.Init(tools, nil, &api.ThinkValue{Value: false})
		n, err := feedOllama(op, list.chunks)
		t3 := time.Now()
		if err != nil {
			b.Fatal(err)
		}
		theirs += n
		tOurs += t1.Sub(t0)
		tTheirs += t3.Sub(t2)
	}
	b.StopTimer()
	if ours != theirs || ours == 0 {
		b.Fatalf("%d calls parsed by ours, %d by Ollama's", ours, theirs)
	}
	b.ReportMetric(float64(tOurs.Nanoseconds())/float64(b.N), "ours-ns/op")
	b.ReportMetric(float64(tTheirs.Nanoseconds())/float64(b.N), "ollama-ns/op")
	b.ReportMetric(float64(tTheirs)/float64(tOurs), "x")
	b.ReportMetric(float64(mallocs)/float64(b.N), "ours-allocs/op")
	b.ReportMetric(float64(len(in.text))/float64(len(list.chunks)), "bytes/chunk")
}

// feedOurs and feedOllama are the agent's loop over a generation's chunks,
// each in a function of its own that is not inlined: a value live across
// a call is reloaded after it, so a loop inside the benchmark reloaded
// the benchmark's own values at every chunk, its timers and counters
// among them, in both parsers' times.
//
//go:noinline
func feedOurs(p *Parser, chunks []chunkHeader, emit func(Event)) {
	for i := range chunks {
		p.Feed(chunk(&chunks[i]), emit)
	}
	p.Close(emit)
}

// feedOllama returns how many calls Ollama's parser op returned.
//
//go:noinline
func feedOllama(op parsers.Parser, chunks []chunkHeader) (calls int, err error) {
	for i := range chunks {
		_, _, cs, err := op.Add(chunk(&chunks[i]), i == len(chunks)-1)
		if err != nil {
			return calls, err
		}
		calls += len(cs)
	}
	return calls, nil
}

// BenchmarkAgentSide is one side of BenchmarkAgentParse alone (ours or
// Ollama's, a fresh parser per op, qwen2 pieces), for counting
// instructions with scripts/instructions.sh, where the paired run's
// interleaving would mix the two.
func BenchmarkAgentSide(b *testing.B) {
	for _, in := range tokenBenchInputs(b) {
		var list feedList
		cut := func() {
			if list.chunks == nil {
				list = feedListOf(cutPieces(in.text, loadPieces(b, "qwen2")))
			}
		}
		b.Run("ours/"+in.name, func(b *testing.B) {
			cut()
			calls := 0
			emit := func(e Event) {
				if e.Type == EventCall {
					calls++
				}
			}
			// As the agent does: the catalog read once, a parser per
			// generation.
			opts := Options{Tools: in.tools, Catalog: NewCatalog(in.tools)}
			b.ReportAllocs()
			for range b.N {
				p, err := New(in.ours, opts)
				if err != nil {
					b.Fatal(err)
				}
				feedOurs(p, list.chunks, emit)
			}
			if calls == 0 {
				b.Fatal("no call parsed")
			}
		})
		b.Run("ollama/"+in.name, func(b *testing.B) {
			cut()
			tools := ollamaTools(b, in.tools)
			calls := 0
			b.ReportAllocs()
			for range b.N {
				op := parsers.ParserForName(in.ollama)
				op.Init(tools, nil, &api.ThinkValue{Value: false})
				n, err := feedOllama(op, list.chunks)
				if err != nil {
					b.Fatal(err)
				}
				calls += n
			}
			if calls == 0 {
				b.Fatal("no call parsed")
			}
		})
	}
}

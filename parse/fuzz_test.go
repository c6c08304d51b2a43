package parse

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/toolharness/toolharness/chat"
)

// fuzzSeeds adds every corpus record and a few hand-written blocks of each
// format, so the fuzzer starts from what real models write.
func fuzzSeeds(f testing.TB, add func(text string)) {
	for _, r := range loadCorpus(f) {
		add(r.Raw)
	}
	for _, c := range formatCases {
		add(c.in)
	}
	for _, c := range allFamilyCases() {
		add(c.in)
	}
	add("<think>quoting {\"name\": \"a\", \"arguments\": {}}</think>\n<tool_call>{\"name\": \"b\", \"arguments\": {}}</tool_call>")
	add(" <think>[f(x=1)] </thi")
	add("plan [f(x=1)]</think><function_calls><invoke name=\"a\"></invoke></function_calls>")
	for _, c := range allPartCases() {
		add(c.in)
	}
	cases, _ := loadFidelity(f)
	for _, c := range cases {
		add(c.Raw)
	}
	fuzzSyntaxSeeds(add)
}

// fuzzSyntaxSeeds adds the inputs written for syntaxes and the assistant
// turns of the template renders.
func fuzzSyntaxSeeds(add func(text string)) {
	for _, c := range syntaxCases {
		add(c.in)
	}
	for _, fx := range syntaxFixtures {
		if data, err := os.ReadFile(filepath.Join("testdata", "syntax", fx.id, "two_calls.txt")); err == nil {
			s := string(data)
			add(s[strings.LastIndex(s, "END_OF_USER_TURN")+1:])
		}
	}
}

// fuzzSyntaxes are the syntaxes FuzzChunkInvariance runs besides the
// named formats.
func fuzzSyntaxes() []Syntax {
	out := []Syntax{kimiSyntax, lfm2Syntax, functionary32Syntax}
	for _, fx := range syntaxFixtures {
		out = append(out, fx.syn)
	}
	// The shapes only derived syntaxes have (syntax_test.go).
	return append(out, apertusSyntax, dsmlSyntax, gemma4Syntax, lfm2JSONSyntax, llamaBareSyntax)
}

// fuzzParser picks the parser a fuzz input runs: a named format, or with
// mode's high bit a syntax chosen by seed. It also gives the reasoning
// blocks the parser splits off (thinkMarkers).
func fuzzParser(t *testing.T, mode uint8, seed uint64, opts Options) (string, [][2]string, func() *Parser) {
	if mode&0x80 != 0 {
		syns := fuzzSyntaxes()
		s := syns[int(seed>>48)%len(syns)]
		pairs := thinkMarkers("")
		if s.ReasoningOpen != "" {
			pairs = [][2]string{{s.ReasoningOpen, s.ReasoningClose}}
		}
		return "syntax " + s.label(), pairs, func() *Parser {
			p, err := NewSyntax(s, opts)
			if err != nil {
				t.Fatal(err)
			}
			return p
		}
	}
	formats := Formats()
	// The seed's top byte shifts the choice, so that every format can
	// run with any flags (fuzzMode).
	format := formats[(int(mode)+int(seed>>56))%len(formats)]
	return format, thinkMarkers(format), func() *Parser {
		p, err := New(format, opts)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
}

// hasThinkTool: a tool named think makes <think> its tag (tags, auto),
// not a reasoning block.
func hasThinkTool(tools []chat.Tool) bool {
	for _, t := range tools {
		if t.Name == "think" {
			return true
		}
	}
	return false
}

// fuzzMode gives the mode and seed that run a named format with flags
// (0x10 strict, 0x20 the catalog, 0x40 ThinkOpen) and chunking seed k.
func fuzzMode(format string, flags uint8, k uint64) (uint8, uint64) {
	i, n := slices.Index(Formats(), format), len(Formats())
	shift := ((i-int(flags))%n + n) % n
	return flags, uint64(shift)<<56 | k&(1<<48-1)
}

// fuzzSyntaxMode gives the mode and seed that run syn, one of
// fuzzSyntaxes, with flags and chunking seed k.
func fuzzSyntaxMode(f *testing.F, syn Syntax, flags uint8, k uint64) (uint8, uint64) {
	i := slices.IndexFunc(fuzzSyntaxes(), func(s Syntax) bool { return cmp.Equal(s, syn) })
	if i < 0 {
		f.Fatalf("syntax %+v is not among fuzzSyntaxes", syn)
	}
	return flags | 0x80, uint64(i)<<48 | k&(1<<48-1)
}

func fuzzTools(f *testing.F) []chat.Tool {
	return corpusTools(f, "mikeveerman_raw.jsonl")
}

// FuzzChunkInvariance checks that every chunking gives the events of a
// one-shot parse (text of one part merged: the parts are compared too),
// that the events give back every byte, that nothing inside a leading
// reasoning block is taken as a call or is content, and that no call
// follows reasoning text but a harmony header.
func FuzzChunkInvariance(f *testing.F) {
	fuzzSeeds(f, func(s string) { f.Add(s, uint64(len(s)), uint8(len(s))) })
	// Every syntax on the inputs written for syntaxes, with the catalog,
	// strict and lenient.
	var synInputs []string
	fuzzSyntaxSeeds(func(s string) { synInputs = append(synInputs, s) })
	for i := range fuzzSyntaxes() {
		for k, in := range synInputs {
			f.Add(in, uint64(i)<<48|uint64(k), uint8(0xa0|(k&1)<<4))
		}
	}
	// The part cases in each of their formats, strict and lenient, with
	// and without the catalog.
	for k, c := range allPartCases() {
		for _, format := range c.formats {
			for _, flags := range []uint8{0x00, 0x10, 0x20, 0x30} {
				if c.thinkOpen {
					flags |= 0x40
				}
				mode, seed := fuzzMode(format, flags, uint64(k))
				f.Add(c.in, seed, mode)
			}
		}
	}
	// The family cases in each of their formats, strict and lenient,
	// with the catalog.
	for k, c := range allFamilyCases() {
		for _, format := range c.formats {
			for _, flags := range []uint8{0x20, 0x30} {
				mode, seed := fuzzMode(format, flags, uint64(k))
				f.Add(c.in, seed, mode)
			}
		}
	}
	// Call-dense output in the formats the quick cycle reads, with and
	// without the catalog.
	for k, in := range []string{quickBase, denseInput("hermes")[:1200]} {
		for _, format := range []string{"hermes", "auto"} {
			for _, flags := range []uint8{0x00, 0x20} {
				mode, seed := fuzzMode(format, flags, uint64(k))
				f.Add(in, seed, mode)
			}
		}
	}
	// The same in the framing the qwen3-coder cycle reads (quickxml.go).
	for k, in := range []string{qxBase, denseInput("qwen3-coder")[:1200]} {
		for _, format := range []string{"qwen3-coder", "auto"} {
			for _, flags := range []uint8{0x00, 0x20} {
				mode, seed := fuzzMode(format, flags, uint64(k))
				f.Add(in, seed, mode)
			}
		}
	}
	// Issue 23's class cases in each of their formats, strict and
	// lenient, with and without the catalog.
	fidelity, _ := loadFidelity(f)
	for k, c := range fidelity {
		for _, format := range c.Formats {
			for _, flags := range []uint8{0x00, 0x10, 0x20, 0x30} {
				mode, seed := fuzzMode(format, flags, uint64(k))
				if name, ok := strings.CutPrefix(format, "syntax:"); ok {
					mode, seed = fuzzSyntaxMode(f, fidelitySyntaxes[name], flags, uint64(k))
				}
				f.Add(c.Raw, seed, mode)
			}
		}
	}
	tools := fuzzTools(f)
	fixture := fixtureTools(f)
	f.Fuzz(func(t *testing.T, text string, seed uint64, mode uint8) {
		opts := Options{Strict: mode&0x10 != 0, ThinkOpen: mode&0x40 != 0}
		if mode&0x20 != 0 {
			opts.Tools = tools
			if mode&0x80 != 0 {
				opts.Tools = fixture
			}
		}
		format, thinks, newParser := fuzzParser(t, mode, seed, opts)
		whole := merged(run(newParser(), []string{text}))
		if got := reconstruct(whole); got != text {
			t.Fatalf("%s %+v: bytes lost or added:\n%s", format, opts.Strict, cmp.Diff(text, got))
		}
		checkReasoning(t, whole, text, opts.ThinkOpen, thinks)
		if !hasThinkTool(opts.Tools) {
			checkParts(t, whole, text, opts.ThinkOpen, thinks)
		}
		checkNoCallInReasoning(t, whole)
		for _, e := range whole {
			if opts.Strict && e.Type == EventCall && len(e.Call.Repairs) > 0 {
				t.Fatalf("%s strict: call %s repaired %v", format, e.Call.Name, e.Call.Repairs)
			}
		}
		chunked := merged(run(newParser(), randomChunks(text, seed)))
		if d := cmp.Diff(whole, chunked); d != "" {
			t.Fatalf("%s strict=%v tools=%v think_open=%v: chunked events differ (-whole +chunked):\n%s", format, opts.Strict, opts.Tools != nil, opts.ThinkOpen, d)
		}
		// The quick cycle (quick.go) is a shortcut, never a change.
		general := newParser()
		general.noQuick = true
		if d := cmp.Diff(merged(run(general, []string{text})), whole); d != "" {
			t.Fatalf("%s strict=%v tools=%v: the quick cycle changed the events (-general +quick):\n%s", format, opts.Strict, opts.Tools != nil, d)
		}
	})
}

// FuzzNoPanic feeds arbitrary text to every format, with and without a
// catalog, strict and lenient, byte by byte and whole.
func FuzzNoPanic(f *testing.F) {
	fuzzSeeds(f, func(s string) { f.Add(s) })
	tools := fuzzTools(f)
	f.Fuzz(func(t *testing.T, text string) {
		for _, format := range Formats() {
			for _, opts := range []Options{{}, {Strict: true}, {Tools: tools}, {ThinkOpen: true}} {
				p, err := New(format, opts)
				if err != nil {
					t.Fatal(err)
				}
				emit := func(e Event) {
					if e.Type == EventError && (e.Err == nil || e.Err.Kind == "") {
						t.Fatalf("%s: error event without a kind", format)
					}
				}
				for i := 0; i < len(text); i++ {
					p.Feed(text[i:i+1], emit)
				}
				p.Close(emit)
			}
		}
		for _, s := range fuzzSyntaxes() {
			for _, opts := range []Options{{}, {Strict: true}, {Tools: tools}} {
				p, err := NewSyntax(s, opts)
				if err != nil {
					t.Fatal(err)
				}
				emit := func(e Event) {
					if e.Type == EventError && (e.Err == nil || e.Err.Kind == "") {
						t.Fatalf("%s: error event without a kind", s.label())
					}
				}
				for i := 0; i < len(text); i++ {
					p.Feed(text[i:i+1], emit)
				}
				p.Close(emit)
			}
		}
	})
}

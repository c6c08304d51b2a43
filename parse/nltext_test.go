package parse

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestNewlineLaneMatchesGeneral: Feed's newline lane (nlText) and its
// prose lane (lane: classOf, nlProse) give the
// very events the general path and the quick cycle give, text events
// split alike, on prose full of newlines next to turn markers and calls,
// in every chunking from 1 to 9 bytes, random ones and the token pieces
// of a real vocabulary.
func TestNewlineLaneMatchesGeneral(t *testing.T) {
	lines := "One.\nTwo\n\nThree\n\n\n#4\nHu\nUs\n" +
		quickCall("read_file", `{"path": "a.go"}`) + "\nHuman\nand\n" +
		quickCall("read_file", `{"path": "b.go"}`) + "\n\nUser says\n\n" +
		quickCall("read_file", `{"path": "c.go"}`) + "\n"
	ins := []string{
		lines,
		lines + "\n### Instruction:\nmore\n",
		lines + "\nHuman: again\n" + quickCall("read_file", `{"path": "d.go"}`),
		"\n\n\n\nUser:\n",
		"a\n<tool_call>\n{\"name\": \"read_file\", \"arguments\": {}}\n</tool_call>\n\nHuman:",
		"<think>\nwhy\n</think>\n\nso\n\n" + lines,
		// Prose that stops the quick cycles (a newline before a turn
		// marker's second byte), between calls they take again.
		"One.\n\nHere\n" + qxCall("read_file", "path", "a.go") + "\n\nHuman\nand\n\nHello\n" +
			qxCall("read_file", "path", "b.go") + "\n\nUser says\n\n" + qxCall("read_file", "path", "c.go") + "\n",
		benchInput(t, "hermes", 6000),
		benchInput(t, "qwen3-coder", 6000),
	}
	pieces := loadPieces(t, "qwen2")
	opts := []Options{{}, {Tools: testTools}, {Strict: true}, {TurnMarkers: []string{"\n\nHuman:", "\nAssistant:"}}}
	for _, format := range []string{"hermes", "qwen3-coder", "json", "xml", "pythonic", "harmony", "auto", "glm4"} {
		for _, o := range opts {
			for k, in := range ins {
				cuts := [][]string{cutPieces(in, pieces), randomChunks(in, uint64(k)), {in}}
				for n := 1; n <= 9 && len(in) < 1000; n++ {
					cuts = append(cuts, chunked(in, n))
				}
				for _, chunks := range cuts {
					p, err := New(format, o)
					if err != nil {
						t.Fatal(err)
					}
					want := run(p, chunks)
					p, _ = New(format, o)
					p.noNLText = true
					if d := cmp.Diff(run(p, chunks), want); d != "" {
						t.Fatalf("%s %+v input %d in %d chunks (-general +lane):\n%s", format, o, k, len(chunks), d)
					}
					// Feed's prose lane (lane, classOf, nlProse) off
					// too: every chunk goes to the general path or
					// the quick cycle's.
					p, _ = New(format, o)
					p.noNLText, p.noLane = true, true
					if d := cmp.Diff(run(p, chunks), want); d != "" {
						t.Fatalf("%s %+v input %d in %d chunks, no prose lane (-general +lanes):\n%s", format, o, k, len(chunks), d)
					}
				}
			}
		}
	}
}

// TestNewlineLaneTaken: the lane does take the newline chunks of prose,
// in the general path and in the quick cycle (else the test above
// compares the general path with itself).
func TestNewlineLaneTaken(t *testing.T) {
	pieces := loadPieces(t, "qwen2")
	for _, format := range []string{"hermes", "qwen3-coder"} {
		in := benchInput(t, format, 6000)
		chunks := cutPieces(in, pieces)
		nl := 0
		for _, c := range chunks {
			if strings.Contains(c, "\n") && !strings.ContainsAny(c, "<{[`") {
				nl++
			}
		}
		p, err := New(format, Options{})
		if err != nil {
			t.Fatal(err)
		}
		run(p, chunks)
		if p.nlChunks < nl/2 {
			t.Errorf("%s: the lane took %d of the %d chunks with a newline and no other marker byte", format, p.nlChunks, nl)
		}
	}
}

// TestClassOf: classOf, which reads short chunks without a loop, gives the
// OR of the classes of every byte, for every table (each format, strict
// and lenient, and a template's turn markers), on strings of 0 to 40
// bytes with a marker's first byte, a newline or both at every position.
func TestClassOf(t *testing.T) {
	for _, format := range Formats() {
		for _, o := range []Options{{}, {Strict: true}, {Tools: testTools}, {TurnMarkers: []string{"\n\nHuman:"}}} {
			p, err := New(format, o)
			if err != nil {
				t.Fatal(err)
			}
			for _, tab := range []*table{p.ctab, p.htab} {
				if tab == nil {
					continue
				}
				var specials []byte
				for c := range 256 {
					if tab.first[c] {
						specials = append(specials, byte(c))
					}
				}
				specials = append(specials, '\n')
				for n := 0; n <= 40; n++ {
					for i := -1; i < n; i++ {
						for _, c := range specials {
							s := []byte(strings.Repeat("ab cd", 9)[:n])
							if i >= 0 {
								s[i] = c
							}
							var want uint8
							for _, b := range s {
								want |= tab.cls[b]
							}
							if got := tab.classOf(string(s)); got != want {
								t.Fatalf("%s %+v: classOf(%q) = %d, want %d", format, o, s, got, want)
							}
							wantAny := false
							for j, b := range s {
								if tab.fast[b] || tab.first[b] && (j+1 == len(s) || tab.nlNext[s[j+1]]) {
									wantAny = true
								}
							}
							if got := tab.anyFirst(string(s)); got != wantAny {
								t.Fatalf("%s %+v: anyFirst(%q) = %v, want %v", format, o, s, got, wantAny)
							}
						}
					}
				}
			}
		}
	}
}

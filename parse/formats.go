package parse

import (
	"fmt"
	"sort"
	"strings"
	"unsafe"

	"github.com/toolharness/toolharness/chat"
)

// blockKind says how a block's end is found while it streams.
type blockKind uint8

const (
	kTag     blockKind = iota // ends at a closing marker
	kValue                    // a bare JSON value opened by its first byte ({ or [)
	kBracket                  // '[': a JSON list of calls or a pythonic list
	kFence                    // ``` fenced block
	kHarmony                  // <|channel|> header <|message|> body <|call|>
	kPrefix                   // a marker followed by one JSON value (<|python_tag|>, [TOOL_CALLS])
	kBare                     // no marker: a call at the start of the turn (bare.go)
	kFrame                    // no block: a marker that frames the reply's parts (parts.go)
	kTurn                     // no block: a marker of another turn, which ends this one (turn.go)
)

// decoder says how a finished block's content is read.
type decoder uint8

const (
	dJSON      decoder = iota // JSON call objects
	dXML                      // <invoke name=…><parameter name=…>
	dQwenCoder                // <function=…><parameter=…>
	dTags                     // <param>value</param> children of a tool tag
	dPythonic                 // [f(a=1), g()]
	dHarmony                  // header with to=functions.T, JSON body
	dToolCall                 // <tool_call> content: JSON, qwen3-coder or pythonic, by shape
	dMistral                  // [TOOL_CALLS] list, object or name[ARGS]{…}
	dFence                    // fence content: JSON or pythonic
	dSyntax                   // a Syntax's call or section (decode_syntax.go)
	dNameLine                 // name\n{…} (GLM-4)
	dBare                     // auto's bare call: Python or a GLM-4 name line, by shape
)

// opener is one marker that opens a call block in a format.
type opener struct {
	marker string
	kind   blockKind
	closer string
	// trailer is a closing marker accepted right after a bare value (the
	// model forgot the opening tag but wrote the closing one).
	trailer string
	// first lists the bytes a tentative tag block's content may start with.
	first string
	dec   decoder
	tool  string // tags: the tool the marker names
	// repair is recorded on every call read through this opener.
	repair repairs
	// tentative blocks are content unless they turn out to hold a call.
	tentative bool
	// reopen: a repeat of the marker before the closer ends the block.
	reopen bool
	// syn is the syntax of a dSyntax opener; section says the marker
	// opens its call section rather than one call.
	syn     *synSpec
	section bool
	// multi: further values may follow the first one of a kPrefix
	// block (JSON objects back to back), separated by whitespace.
	multi bool
	// markerB and closerB are marker and closer as bytes, made once by
	// newTable so that looking for them in a block converts nothing.
	markerB, closerB []byte
}

// table is the compiled opener set of one parser.
type table struct {
	ops     []opener
	byFirst [256][]int
	// first marks the bytes a marker can start with; fast the same but
	// a newline, which anyFirst leaves to nlSafe.
	first, fast [256]bool
	maxLen      int
	// nlNext marks the second bytes of the markers that start with a
	// newline, nl (a newline) their first: the quick cycle reads a
	// newline before any other byte as text.
	nlNext [256]bool
	nl     string
	// cls holds each byte's class (cFast, cNL), from first and fast.
	cls [256]uint8
}

// Byte classes of a table (cls): a byte a marker starts with, and a
// newline that starts only turn markers (which nlSafe or nlProse decide).
const (
	cFast uint8 = 1 << iota
	cNL
)

// anyFirst reports whether s holds a byte a marker starts with, for the
// fast skip over prose: a newline counts only where it may start a turn
// marker (nlSafe).
func (t *table) anyFirst(s string) bool {
	m := t.classOf(s)
	return m != 0 && (m&cFast != 0 || !t.nlSafe(s))
}

// classOf is the OR of the classes of s's bytes. Streamed chunks are a
// few bytes, so it reads them without a loop where it can, and a longer
// chunk as eight-byte blocks and the eight bytes it ends with, which
// overlap the last block: no loop whose count is the chunk's length, whose
// exit is mispredicted once a chunk.
//
// Up to eight bytes are read without a branch on their number: a prose
// token's length is as good as random, and a branch on it is mispredicted
// on about a third of the chunks. The eight positions are every byte of
// 1 to 8 bytes (for n = 8 each is one), and each is below n: read through
// a pointer, with no bounds check the compiler cannot see is never taken.
// Positions i*n/8 (i = 0..7) would be as well; these take fewer shifts
// and multiplies (13 ALU instructions rather than 15 in Feed on amd64).
// TestClassOf and TestProseLaneEveryCut put a marker at every position.
// (Written here, not as a function of its own: nlText asks for it on the
// chunk after every held newline, and the second call was 0.6% of the
// hermes prose benchmark's instructions.)
func (t *table) classOf(s string) uint8 {
	n := len(s)
	c := &t.cls
	if n <= 8 {
		if n == 0 {
			return 0
		}
		p := unsafe.Pointer(unsafe.StringData(s))
		at := func(i int) byte { return *(*byte)(unsafe.Add(p, i)) }
		h, q := n>>1, n>>2
		return c[at(0)] | c[at(n-1)] | c[at(h)] | c[at((n+1)>>2)] |
			c[at((n+1)>>1-1)] | c[at((n+4)>>3)] | c[at(n-1-q)] | c[at(h+q)]
	}
	var m uint8
	for i := 0; n-i > 8; i += 8 {
		w := s[i : i+8]
		m |= c[w[0]] | c[w[1]] | c[w[2]] | c[w[3]] | c[w[4]] | c[w[5]] | c[w[6]] | c[w[7]]
	}
	w := s[n-8:]
	return m | c[w[0]] | c[w[1]] | c[w[2]] | c[w[3]] | c[w[4]] | c[w[5]] | c[w[6]] | c[w[7]]
}

// classify fills cls from first, fast and nl, once the table is built.
func (t *table) classify() {
	for b := range 256 {
		switch {
		case t.fast[b]:
			t.cls[b] = cFast
		case t.first[b]:
			t.cls[b] = cNL
		}
	}
}

// nlSafe reports whether no newline in s may start a marker: each is
// followed, in s, by a byte no turn marker has second.
func (t *table) nlSafe(s string) bool {
	for {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			return true
		}
		if i+1 == len(s) || t.nlNext[s[i+1]] {
			return false
		}
		s = s[i+1:]
	}
}

func newTable(ops []opener) *table {
	t := &table{}
	seen := map[string]bool{}
	for _, op := range ops {
		if seen[op.marker] {
			continue
		}
		seen[op.marker] = true
		t.ops = append(t.ops, op)
	}
	for i, op := range t.ops {
		t.ops[i].markerB, t.ops[i].closerB = []byte(op.marker), []byte(op.closer)
		t.byFirst[op.marker[0]] = append(t.byFirst[op.marker[0]], i)
		t.first[op.marker[0]] = true
		t.fast[op.marker[0]] = true
		if op.marker[0] == '\n' && len(op.marker) > 1 {
			t.nlNext[op.marker[1]], t.nl = true, op.marker[:1]
		}
		if len(op.marker) > t.maxLen {
			t.maxLen = len(op.marker)
		}
	}
	if t.nl != "" {
		t.fast['\n'] = false
		for _, op := range t.ops {
			if op.marker == "\n" {
				// A marker that is a newline alone: every newline counts.
				t.fast['\n'], t.nl = true, ""
			}
		}
	}
	t.classify()
	return t
}

var formatNames = []string{"xml", "hermes", "json", "mistral", "qwen3-coder", "pythonic", "harmony", "tags", "glm4", "glm45",
	"deepseek", "kimi-k2", "functionary", "functiongemma", "minimax-m2", "seed-oss", "auto"}

// Formats returns the format names, as accepted by New and the CLI.
func Formats() []string { return append([]string(nil), formatNames...) }

// StopSequences returns the strings that end generation right after a call
// block in format, for the backend to pass to the server. The parser
// accepts a block whose closing marker was removed by one of them. Formats
// whose calls end structurally (json, pythonic, tags) have none.
func StopSequences(format string) []string {
	switch format {
	case "xml":
		return []string{"</function_calls>"}
	case "hermes", "qwen3-coder", "glm45":
		return []string{"</tool_call>"}
	case "mistral":
		return []string{"</s>"}
	case "harmony":
		return []string{"<|call|>"}
	case "json":
		return []string{"<|eom_id|>"}
	case "deepseek":
		return []string{"<｜tool▁calls▁end｜>", "</｜DSML｜function_calls>"}
	case "kimi-k2":
		return []string{"<|tool_calls_section_end|>"}
	case "minimax-m2":
		return []string{"</minimax:tool_call>"}
	case "seed-oss":
		return []string{"</seed:tool_call>"}
	case "functiongemma":
		// What the model writes after its calls: stopping there keeps
		// parallel calls, which stopping at <end_function_call> would cut.
		return []string{"<start_function_response>"}
	}
	return nil
}

// ErrUnknownFormat is returned by New for a format name not in Formats.
var ErrUnknownFormat = fmt.Errorf("parse: unknown format")

func openers(format string, tools []chat.Tool, strict bool) ([]opener, error) {
	lenient := !strict
	var ops []opener
	add := func(ok bool, o ...opener) {
		if ok {
			ops = append(ops, o...)
		}
	}
	c := sharedOpeners(lenient)
	switch format {
	case "hermes":
		ops = append(ops, c.hermesTag)
		add(lenient, c.wrappers...)
		add(lenient, c.fence, bareObject("</tool_call>"),
			opener{marker: "[", kind: kBracket, dec: dJSON, tentative: true, repair: rMissingOpenTag, trailer: "</tool_call>"})
	case "json":
		ops = append(ops,
			opener{marker: "<|python_tag|>", kind: kPrefix, dec: dJSON, tentative: true},
			opener{marker: "{", kind: kValue, dec: dJSON, tentative: true},
			c.granite)
		add(lenient, c.fence, opener{marker: "[", kind: kBracket, dec: dJSON, tentative: true})
		// Strict, a list of call objects is claimed as a block (and is
		// an error there), so that its objects are not taken one by one
		// with the brackets left in the content.
		add(!lenient, opener{marker: "[", kind: kValue, dec: dJSON, tentative: true})
		t := c.hermesTag
		t.repair = rWrapperTag
		add(lenient, t)
		add(lenient, c.wrappers...)
	case "mistral":
		ops = append(ops, opener{marker: "[TOOL_CALLS]", kind: kPrefix, dec: dMistral, tentative: true})
		add(lenient, c.fence, bareObject(""),
			opener{marker: "[", kind: kBracket, dec: dJSON, tentative: true, repair: rMissingOpenTag})
	case "xml":
		ops = append(ops, opener{marker: "<function_calls>", kind: kTag, closer: "</function_calls>", dec: dXML, reopen: lenient})
		add(lenient, opener{marker: "<invoke name=", kind: kTag, closer: "</invoke>", dec: dXML, repair: rMissingOpenTag, trailer: "</function_calls>"})
	case "qwen3-coder":
		t := c.hermesTag
		t.dec = dQwenCoder
		if lenient {
			t.dec = dToolCall
		}
		ops = append(ops, t)
		add(lenient, opener{marker: "<function=", kind: kTag, closer: "</function>", dec: dQwenCoder, repair: rMissingOpenTag, trailer: "</tool_call>"})
	case "pythonic":
		ops = append(ops, opener{marker: "[", kind: kBracket, dec: dPythonic, tentative: true})
		add(lenient, c.fence)
		ops = append(ops, familyOpeners(format, lenient)...)
	case "harmony":
		ops = append(ops, c.harmony...)
		ops = append(ops, harmonyFrames...)
	case "glm45":
		ops = append(ops, newSynSpec(glm45Syntax).openers(lenient)...)
	case "glm4":
		// Calls are bare (bare.go); a fenced one is a repair.
		add(lenient, c.fence)
	case "tags":
		ops = append(ops, tagOpeners(tools)...)
	case "deepseek", "kimi-k2", "functionary", "functiongemma", "minimax-m2", "seed-oss":
		ops = append(ops, familyOpeners(format, lenient)...)
	case "auto":
		ops = append(ops,
			opener{marker: "<function_calls>", kind: kTag, closer: "</function_calls>", dec: dXML, reopen: lenient},
			opener{marker: "<tool_call>", kind: kTag, closer: "</tool_call>", dec: dToolCall, reopen: lenient},
			c.harmony[0], c.harmony[1],
			opener{marker: "[TOOL_CALLS]", kind: kPrefix, dec: dMistral, tentative: true},
			opener{marker: "<|python_tag|>", kind: kPrefix, dec: dJSON, tentative: true},
			opener{marker: "[", kind: kBracket, dec: dPythonic, tentative: true},
			opener{marker: "{", kind: kValue, dec: dJSON, tentative: true},
		)
		ops = append(ops, harmonyFrames...)
		ops = append(ops, tagOpeners(tools)...)
		add(lenient, c.wrappers...)
		add(lenient, c.fence,
			opener{marker: "<function=", kind: kTag, closer: "</function>", dec: dQwenCoder, repair: rMissingOpenTag, trailer: "</tool_call>"},
			opener{marker: "<invoke name=", kind: kTag, closer: "</invoke>", dec: dXML, repair: rMissingOpenTag, trailer: "</function_calls>"})
		// The families' markers are their own special tokens (and
		// functionary's >>> is tentative, its name written tight).
		// Last, so that a marker auto already has keeps its opener.
		ops = append(ops, familyOpeners(format, lenient)...)
	default:
		return nil, fmt.Errorf("%w %q (known: %s)", ErrUnknownFormat, format, strings.Join(formatNames, ", "))
	}
	return ops, nil
}

// commonOpeners are the openers several formats take.
type commonOpeners struct {
	fence, hermesTag, granite opener
	wrappers, harmony         []opener
}

func sharedOpeners(lenient bool) commonOpeners {
	var c commonOpeners
	c.fence = opener{marker: "```", kind: kFence, closer: "```", dec: dFence, repair: rCodeFence, tentative: true}
	c.hermesTag = opener{marker: "<tool_call>", kind: kTag, closer: "</tool_call>", dec: dJSON, reopen: lenient}
	if lenient {
		c.hermesTag.dec = dToolCall
	}
	// Granite function-calling models write every call as
	// "<function_call> {…}" and never close it: a repeat of the marker
	// ends the block (reopen), as does what follows a complete value.
	// (Not <tools>: Qwen2.5-Coder closes it, after one brace too many.)
	c.wrappers = []opener{
		{marker: "<function_call>", kind: kTag, closer: "</function_call>", first: "{[", dec: dJSON, repair: rWrapperTag, tentative: true, reopen: true},
		{marker: "<tools>", kind: kTag, closer: "</tools>", first: "{[", dec: dJSON, repair: rWrapperTag, tentative: true},
	}
	// Granite 3.x's own marker, followed by a JSON list of calls.
	c.granite = opener{marker: "<|tool_call|>", kind: kPrefix, dec: dJSON, tentative: true}
	if lenient {
		c.granite.repair = rWrapperTag
	}
	c.harmony = []opener{
		{marker: "<|channel|>", kind: kHarmony, closer: "<|call|>", dec: dHarmony, tentative: true},
		// gpt-oss's own rendering of a call in history puts the
		// recipient in the header: <|start|>assistant to=functions.T<|channel|>…
		{marker: "<|start|>", kind: kHarmony, closer: "<|call|>", dec: dHarmony, tentative: true},
	}
	return c
}

// bareObject opens a call object written without its opening marker.
func bareObject(trailer string) opener {
	return opener{marker: "{", kind: kValue, trailer: trailer, dec: dJSON, tentative: true, repair: rMissingOpenTag}
}

// tagOpeners gives one opener per registered tool for the tags format.
func tagOpeners(tools []chat.Tool) []opener {
	names := make([]string, 0, len(tools))
	for _, t := range tools {
		if t.Name != "" && !strings.ContainsAny(t.Name, "<> \t\n/") {
			names = append(names, t.Name)
		}
	}
	sort.Strings(names)
	ops := make([]opener, 0, len(names))
	for _, n := range names {
		ops = append(ops, opener{marker: "<" + n + ">", kind: kTag, closer: "</" + n + ">", first: "<", dec: dTags, tool: n, tentative: true})
	}
	return ops
}

package parse

import (
	"strconv"
	"unsafe"
)

// Parser is a streaming parser for one format. See the package
// documentation for the event contract.
type Parser struct {
	format string
	opts   Options
	tab    *table
	tools  map[string]*toolSchema

	// held is a suffix of the text seen so far that is a prefix of a
	// marker. It is always a substring of the marker itself, so releasing
	// it as text allocates nothing.
	held string
	// pos is the offset, in the turn's text, just after everything fed so
	// far (held bytes and block bytes included).
	pos     int
	inBlock bool
	b       block
	ncalls  int
	win     []byte
	// emit is the emit of the Feed or Close call in progress, for the
	// paths that do not take it as an argument; it is left set after
	// the call: clearing it was a pointer write, which costs a write
	// barrier while the GC marks, on every call's path.
	emit func(Event)

	// rs is the turn's stand with respect to a leading reasoning block
	// (reasoning.go), rs0 the state a turn starts in, and rheld the
	// prefix of a reasoning marker held back while rs is not rsNone.
	rs, rs0 reasoningState
	rheld   string

	// pieces counts the text events emitted directly since the last
	// flush; pend gathers text after them (see text), all of pendPart.
	pieces   int
	pend     []byte
	pendPart Part
	// part is the part of the reply that text the scanner passes on is
	// (parts.go); hpart the part of the harmony message whose header is
	// being read.
	part, hpart Part

	// bareOp is the format's opener of calls written without a marker
	// (bare.go), nil if it has none; bare says one may still start.
	bareOp *opener
	bare   bool

	glm *synSpec

	// ended: the turn ended at a marker of another turn (turn.go);
	// what follows is PartOverrun text.
	ended bool

	// fenced: a code fence gave this turn's calls. What follows is the
	// model explaining or writing code (DeepSeek Coder writes pages of
	// it, repeating the call), so tentative blocks after it stay text.
	fenced bool

	// thinks are the reasoning blocks a turn may start with (their
	// markers), think the one opened (reasoning.go).
	thinks [][2]string
	think  [2]string
	// tab is ctab, every opener, or htab outside content (setPart).
	ctab, htab *table

	// lastID is the ID of call lastIDn, the last one past callIDs
	// (callID).
	lastID  string
	lastIDn int
	// scratch holds the calls of the block being finished.
	scratch []dcall
	// arena holds the Raw text and arguments of emitted calls.
	arena arena

	// q is the quick cycle (quick.go); noQuick keeps it off (tests
	// compare it with the general path). drop: the general path is
	// to leave out the next call start of call dropN, which quick sent.
	// quickCalls counts the calls quick emitted (tests, profiles).
	q          quick
	noQuick    bool
	quickCalls int
	drop       bool
	dropN      int
	// qx is the qwen3-coder quick cycle (quickxml.go).
	qx quickXML

	// noNLText keeps Feed's newline lane (nlText) off, for tests that
	// compare it with the general path; nlChunks counts the chunks the
	// lane took (tests).
	noNLText bool
	nlChunks int

	// lane: the next chunk may take Feed's prose lane (proseLane);
	// noLane keeps it off, and every chunk of prose goes to the general
	// path or the quick cycle's (tests compare the two).
	lane, noLane bool
}

// glm45 is the GLM-4.5 syntax, prepared on first use (auto reads
// <tool_call> content in it).
func (p *Parser) glm45() *synSpec {
	if p.glm == nil {
		p.glm = newSynSpec(glm45Syntax)
	}
	return p.glm
}

// New returns a parser for format (one of Formats).
func New(format string, opts Options) (*Parser, error) {
	if c := sharedTables(format, opts); c != nil {
		return newParser(format, opts, c), nil
	}
	ops, err := openers(format, opts.Tools, opts.Strict)
	if err != nil {
		return nil, err
	}
	return newParser(format, opts, compile(format, ops, opts)), nil
}

// newParser returns a parser reading with c, which it shares and never
// writes.
func newParser(format string, opts Options, c *compiled) *Parser {
	p := &Parser{format: format, opts: opts, tab: c.tab}
	p.ctab, p.htab = p.tab, c.htab
	switch {
	case opts.Catalog != nil:
		p.tools = opts.Catalog.tools
	case len(opts.Tools) > 0:
		// Decoded lazily, by this parser alone: a parser made once pays
		// only for the tools its output calls.
		p.tools = make(map[string]*toolSchema, len(opts.Tools))
		for _, t := range opts.Tools {
			p.tools[t.Name] = &toolSchema{name: t.Name, raw: t.Parameters}
		}
	}
	p.win = make([]byte, 0, 2*p.tab.maxLen)
	p.useThinks(c.thinks, reasoningPairs(format), opts)
	p.bareOp = c.bareOp
	p.bare = p.bareOp != nil
	p.lane = p.proseLane()
	return p
}

// Format returns the parser's format name.
func (p *Parser) Format() string { return p.format }

// Reset forgets everything fed so far, for a new turn.
func (p *Parser) Reset() {
	p.held, p.pos, p.inBlock, p.ncalls = "", 0, false, 0
	p.rs, p.rheld = p.rs0, ""
	p.pend, p.pieces = p.pend[:0], 0
	p.newMessage()
	p.bare = p.bareOp != nil
	p.fenced, p.ended = false, false
	p.b.reset(nil, 0)
	p.q = quick{}
	p.qx = quickXML{}
	p.drop = false
	p.lane = p.proseLane()
}

// proseLane says whether the next chunk may take Feed's prose lane: the
// state in which feedChunk would take a chunk without marker bytes as
// text at once. Only Feed, Close, Reset and New change that state.
func (p *Parser) proseLane() bool {
	if p.held != "" || p.b.inValue || p.noLane {
		return false
	}
	if p.q.on {
		return p.q.phase == qText
	}
	if p.qx.on {
		return p.qx.phase == qxText
	}
	return !p.ended && !p.inBlock && !p.bare && p.rs == rsNone
}

// feedChunk is Feed for a chunk its lanes did not take, outside the
// quick cycle and a confirmed block's lane.
func (p *Parser) feedChunk(chunk string, emit func(Event)) {
	if p.held != "" && p.extendHeld(chunk) {
		return
	}
	if p.rs != rsNone {
		p.emit = emit
		p.feedReasoning(chunk, false)
		p.flushText()
		return
	}
	// Fast path for prose: no marker byte in the chunk and nothing held;
	// else newlines alone (nlText).
	if !p.inBlock && !p.bare {
		if p.held == "" {
			if m := p.tab.classOf(chunk); m == 0 && !p.noLane {
				p.pos += len(chunk)
				if chunk != "" {
					emit(Event{Type: EventText, Part: p.part, Text: chunk})
				}
				return
			} else if m == cNL && !p.noLane && p.nlProse(chunk, emit) {
				return
			}
		} else if p.nlText(chunk, emit) {
			return
		}
	}
	p.emit = emit
	p.feed(chunk, false)
	p.flushText()
}

// Close ends the stream: held-back text is released, an open block is
// finished (accepted if its closing marker was only removed by a stop
// sequence, a truncated error otherwise). The parser is then reset.
func (p *Parser) Close(emit func(Event)) {
	p.emit = emit
	p.quickStop()
	p.qxStop()
	p.b.inValue = false
	if p.rs != rsNone {
		p.feedReasoning("", true)
	}
	for p.held != "" || p.inBlock {
		p.feed("", true)
		if p.inBlock {
			p.blockEOF()
		}
	}
	p.flushText()
	p.Reset()
}

// directPieces is how many pieces of text one Feed emits as they are,
// without copying; text after them is gathered into one event. Prose
// comes in one to three pieces per chunk (held bytes, the chunk, a
// rejected marker byte), so it is never copied; a run of bytes that each
// start a block and are each turned back into text (1 MB of '[') gives a
// handful of events instead of one per byte.
const directPieces = 3

// text emits s as text of the current part (textAs).
func (p *Parser) text(s string) { p.textAs(s, p.part) }

// flushText emits the gathered text; it runs before every other event
// and at the end of Feed and Close.
func (p *Parser) flushText() {
	if len(p.pend) > 0 {
		p.flushPend()
	}
	p.pieces = 0
}

// flushPend emits the gathered text, which is of one part.
func (p *Parser) flushPend() {
	if len(p.pend) > 0 {
		p.emit(Event{Type: EventText, Part: p.pendPart, Text: string(p.pend)})
		p.pend = p.pend[:0]
		if cap(p.pend) > 64<<10 {
			p.pend = nil
		}
	}
}

// event emits a call, call start or error, after the text before it.
func (p *Parser) event(e Event) {
	if p.drop {
		// quickStop fed the general path a block whose call start
		// quick had sent.
		if p.ncalls != p.dropN {
			p.drop = false
		} else if e.Type == EventCallStart {
			p.drop = false
			return
		}
	}
	p.flushText()
	p.emit(e)
}

// feed processes s; eof means nothing follows it.
func (p *Parser) feed(s string, eof bool) {
	for {
		switch {
		case p.inBlock:
			if s == "" {
				return
			}
			s = p.blockFeed(s)
		case p.held != "":
			if s == "" && !eof {
				return
			}
			s = p.resumeHeld(s, eof)
		default:
			if s == "" {
				return
			}
			if p.ended {
				p.pos += len(s)
				p.textAs(s, PartOverrun)
				return
			}
			if p.q.on {
				// A block finished in this feed started the quick
				// cycle (learnQuick): it reads what follows.
				if !eof {
					p.quickFeed(s)
					return
				}
				p.q.on = false
			}
			if p.qx.on {
				// The same for the qwen3-coder cycle (quickxml.go).
				if !eof {
					p.qxFeed(s)
					return
				}
				p.qx.on = false
			}
			if p.bare {
				var opened bool
				if s, opened = p.startBare(s); opened || s == "" {
					continue
				}
			}
			s = p.prose(s, eof)
		}
	}
}

// prose scans s (with nothing held) for the earliest marker.
func (p *Parser) prose(s string, eof bool) string {
	i, op, partial := scan(p.tab, s, len(s), eof)
	if i < 0 {
		p.pos += len(s)
		p.text(s)
		return ""
	}
	p.text(s[:i])
	if partial {
		p.held = p.tab.ops[op].marker[:len(s)-i]
		p.pos += len(s)
		return ""
	}
	p.pos += i
	p.open(op)
	return s[i+len(p.tab.ops[op].marker):]
}

// resumeHeld joins the held bytes with the start of s in a small window
// and decides whether a marker starts inside the held bytes.
func (p *Parser) resumeHeld(s string, eof bool) string {
	h := p.held
	p.held = ""
	hstart := p.pos - len(h)
	take := len(s)
	if take > p.tab.maxLen {
		take = p.tab.maxLen
	}
	w := append(append(p.win[:0], h...), s[:take]...)
	i, op, partial := scan(p.tab, w, len(h), eof && take == len(s))
	if i < 0 {
		p.text(h)
		return s
	}
	p.text(h[:i])
	m := p.tab.ops[op].marker
	if partial {
		p.held = m[:len(w)-i]
		p.pos += len(s)
		return ""
	}
	p.pos = hstart + i
	p.open(op)
	// p.pos is now just after the marker.
	over := i + len(m) - len(h)
	if over >= 0 {
		return s[over:]
	}
	// The marker ended inside the held bytes (a shorter marker won once
	// a longer one failed): what follows it is fed first.
	p.feed(h[i+len(m):], eof && s == "")
	return s
}

// scan finds the earliest position below limit where a marker starts in s.
// A marker that runs past the end of s is partial (unless eof), and a
// partial candidate wins over a shorter full one at the same position,
// because the longer marker may still complete.
func scan[T string | []byte](t *table, s T, limit int, eof bool) (pos, op int, partial bool) {
	for i := 0; i < limit; i++ {
		if !t.first[s[i]] {
			continue
		}
		cands := t.byFirst[s[i]]
		best, bestLen, part := -1, 0, -1
		for _, k := range cands {
			m := t.ops[k].marker
			avail := len(s) - i
			if avail >= len(m) {
				if string(s[i:i+len(m)]) == m && len(m) > bestLen {
					best, bestLen = k, len(m)
				}
			} else if !eof && string(s[i:]) == m[:avail] {
				part = k
			}
		}
		if part >= 0 {
			return i, part, true
		}
		if best >= 0 {
			return i, best, false
		}
	}
	return -1, -1, false
}

func (p *Parser) open(op int) {
	o := &p.tab.ops[op]
	switch o.kind {
	case kFrame:
		p.pos += len(o.marker)
		p.frame(o.marker)
		return
	case kTurn:
		p.endTurn(o.marker)
		return
	case kHarmony:
		// A new harmony message: the one before it ended.
		p.newMessage()
	}
	p.inBlock = true
	p.b.reset(o, p.pos)
	p.b.ar = &p.arena
	p.b.keys, p.b.fast = p.fastKeys(o)
	p.b.buf = append(p.b.buf, o.marker...)
	if !o.tentative {
		p.b.confirmed, p.b.vstart = true, len(o.marker)
		if o.syn != nil && o.kind == kPrefix {
			p.b.confirmed = false
		}
	}
	p.pos += len(o.marker)
}

// callIDs are the first IDs, built once so that emitting a call does not
// format its ID.
var callIDs = func() (ids [64]string) {
	for i := range ids {
		ids[i] = "call_" + strconv.Itoa(i)
	}
	return ids
}()

func (p *Parser) callID(n int) string {
	if n < len(callIDs) {
		return callIDs[n]
	}
	// The call start and the call ask for the same ID: the last one is
	// kept.
	if p.lastID != "" && p.lastIDn == n {
		return p.lastID
	}
	// Formatted into the arena, as Raw is: a fresh parser per generation
	// would otherwise allocate one string per call past callIDs (2,000
	// of a call-dense parse's 2,035 allocations). Not kept beyond the
	// last: kept IDs would pin the arena chunks they were written in.
	// Appended in place, as arena.str does: the room holds "call_" and
	// any int's digits.
	a := &p.arena
	a.room(24)
	end := len(a.buf)
	if p.lastID != "" && p.lastIDn == n-1 && p.lastID[len(p.lastID)-1] != '9' {
		// The ID after the last one, its last digit one up: calls ask
		// for IDs in order.
		a.buf = append(a.buf, p.lastID...)
		a.buf[len(a.buf)-1]++
	} else {
		a.buf = strconv.AppendInt(append(a.buf, "call_"...), int64(n), 10)
	}
	p.lastID, p.lastIDn = unsafe.String(&a.buf[end], len(a.buf)-end), n
	return p.lastID
}

// acceptable reports whether a repaired or tentative block naming name
// may be taken as a call: it names a registered tool, or there is no
// catalog.
func (p *Parser) acceptable(name string) bool {
	if name == "" {
		return false
	}
	if p.tools == nil {
		return true
	}
	_, ok := p.tools[name]
	return ok
}

package parse

import (
	"bytes"
	"fmt"
	"strings"
)

// Parts of the reply. Every byte the model wrote stays in the events (the
// agent re-renders the turn from the exact output), but a front end shows
// the answer, not gpt-oss's <|channel|>analysis<|message|>… or a leading
// <think> block: servers split those off (Ollama's thinking, vLLM's and
// llama.cpp's reasoning_content), and so does the parser, by saying which
// part of the reply each text event is.

// Part says what part of the reply the bytes of a text event are.
type Part uint8

const (
	// PartContent is the answer, what a server returns as the message's
	// content. It is the zero value: a consumer that ignores parts sees
	// every text event as before.
	PartContent Part = iota
	// PartReasoning is the model's reasoning: the inside of a leading
	// reasoning block (<think>, Seed-OSS's <seed:think>, Magistral's
	// [THINK]; or of the block the prompt opened, ThinkOpen), and
	// harmony's analysis channel.
	PartReasoning
	// PartFraming is the markup that frames the parts: a reasoning
	// block's markers, harmony's <|start|>assistant, <|channel|>X<|message|>,
	// <|end|>, <|return|> and a <|call|> outside a call.
	PartFraming
	// PartOverrun is what the model wrote after its turn ended at a
	// marker of another turn (turn.go): an invented turn, not the
	// answer.
	PartOverrun
)

// String returns the name used in JSON ("content", "reasoning",
// "framing", "overrun").
func (p Part) String() string {
	switch p {
	case PartContent:
		return "content"
	case PartReasoning:
		return "reasoning"
	case PartFraming:
		return "framing"
	case PartOverrun:
		return "overrun"
	}
	return fmt.Sprintf("part(%d)", uint8(p))
}

// MarshalText writes the part's name, so that JSON shows
// "part":"reasoning" (and, with omitempty, nothing for content).
func (p Part) MarshalText() ([]byte, error) {
	if p > PartOverrun {
		return nil, fmt.Errorf("parse: unknown part %d", uint8(p))
	}
	return []byte(p.String()), nil
}

// UnmarshalText reads a part's name, for tools that read traces back.
func (p *Part) UnmarshalText(b []byte) error {
	for q := PartContent; q <= PartOverrun; q++ {
		if string(b) == q.String() {
			*p = q
			return nil
		}
	}
	return fmt.Errorf("parse: unknown part %q (want content, reasoning, framing or overrun)", b)
}

// Answer returns the answer of a turn: the text of its content events,
// concatenated, without reasoning or framing.
func Answer(evs []Event) string { return partText(evs, PartContent) }

// Reasoning returns the reasoning of a turn: the text of its reasoning
// events, concatenated.
func Reasoning(evs []Event) string { return partText(evs, PartReasoning) }

func partText(evs []Event, part Part) string {
	var b strings.Builder
	for _, e := range evs {
		if e.Type == EventText && e.Part == part {
			b.WriteString(e.Text)
		}
	}
	return b.String()
}

// textAs emits s as text of the given part. Text of one part is
// coalesced (see text); framing is always gathered, so that a harmony
// header read as <|channel|>, analysis and <|message|> is one event. It
// is a few bytes, and only there is anything copied.
func (p *Parser) textAs(s string, part Part) {
	if s == "" {
		return
	}
	if len(p.pend) > 0 && p.pendPart != part {
		p.flushPend()
	}
	if part != PartFraming && p.pieces < directPieces && len(p.pend) == 0 {
		p.pieces++
		p.emit(Event{Type: EventText, Part: part, Text: s})
		return
	}
	p.pend = append(p.pend, s...)
	p.pendPart = part
}

// Harmony (gpt-oss) writes every message as <|start|>assistant
// <|channel|>C<|message|>…<|end|>, the last one ending in <|return|>
// (or <|call|> for a call, whose header names the recipient: those are
// call blocks). The analysis channel is reasoning; final, and commentary
// without a recipient (a preamble to calls), are content. The headers are
// tentative blocks that are turned back into text when they name no
// recipient (rejectText), and the end markers are markers of their own
// that only frame (kFrame openers): the parts follow from what the
// scanner meets, so they are the same for every chunking.

// harmonyFrames are the harmony markers that end a header or a message.
var harmonyFrames = []opener{
	{marker: "<|message|>", kind: kFrame},
	{marker: "<|end|>", kind: kFrame},
	{marker: "<|return|>", kind: kFrame},
	{marker: "<|call|>", kind: kFrame},
}

// frame emits a kFrame marker and moves to the part that follows it.
func (p *Parser) frame(m string) {
	p.textAs(m, PartFraming)
	if m == "<|message|>" {
		h := p.hpart
		p.hpart = PartContent
		p.setPart(h)
		return
	}
	p.setPart(PartContent)
}

// newMessage starts a reply or a harmony message: its text is content.
func (p *Parser) newMessage() {
	p.setPart(PartContent)
	p.hpart = PartContent
}

// setPart says what part of the reply the text the scanner passes on is.
// Outside the content (in an analysis message, or a header that named no
// recipient) the scanner looks for the harmony markers alone: a call the
// model quotes while reasoning (<|channel|>analysis<|message|>I could
// call <tool_call>{…}</tool_call>…) is reasoning, as inside a leading
// <think> block, since servers split the reasoning off before they look
// for calls. The harmony markers go on framing it: they are the special
// tokens that end the message.
func (p *Parser) setPart(part Part) {
	p.part = part
	if p.htab != nil {
		p.tab = p.ctab
		if part != PartContent {
			p.tab = p.htab
		}
	}
}

// harmonyTable is t with only its harmony markers to scan for, or nil
// when t has none or nothing else (the harmony format). It shares t's
// openers, so that an opener's index is the same in both: the scanner's
// callers read the opener of an index after open may have switched the
// table.
func harmonyTable(t *table) *table {
	n := 0
	for _, op := range t.ops {
		if op.kind == kHarmony || op.kind == kFrame {
			n++
		}
	}
	if n == 0 || n == len(t.ops) {
		return nil
	}
	h := &table{ops: t.ops, maxLen: t.maxLen}
	for i, op := range t.ops {
		if op.kind == kHarmony || op.kind == kFrame {
			c := op.marker[0]
			h.byFirst[c] = append(h.byFirst[c], i)
			h.first[c], h.fast[c] = true, true
		}
	}
	h.classify()
	return h
}

// rejectText emits s, the start of a rejected block's marker that is text
// for sure (eof: nothing follows the block's bytes). A harmony header
// that is no call is framing up to its <|message|>, which opens a message
// of the header's channel.
func (p *Parser) rejectText(s string, eof bool) {
	b := &p.b
	if b.op.kind != kHarmony {
		p.text(s)
		return
	}
	p.textAs(s, PartFraming)
	m := b.op.marker
	end := harmonyHeaderEnd(b.buf, len(m))
	switch {
	case end < 0 && !eof:
		// No header after all: what follows is text.
		p.setPart(PartContent)
	default:
		// A header, or one cut off by the end of the output.
		p.setPart(PartFraming)
		if m == harmonyChannel {
			h := b.buf[len(m):]
			if end >= 0 {
				h = b.buf[len(m) : end-len(harmonyMessage)]
			}
			p.hpart = channelPart(h)
		}
	}
}

const harmonyChannel = "<|channel|>"

// harmonyHeaderEnd is where a harmony header that starts at buf[from]
// ends (after its <|message|>), or -1 when it does not end within the
// bytes harmony looks at: the same answer for every chunking, since buf
// then holds at least those bytes.
func harmonyHeaderEnd(buf []byte, from int) int {
	w := buf[from:min(len(buf), harmonyHeaderMax)]
	k := bytes.Index(w, harmonyMessage)
	if k < 0 {
		return -1
	}
	return from + k + len(harmonyMessage)
}

// channelPart is the part of the message a header opens: reasoning for
// the analysis channel, content for every other.
func channelPart(header []byte) Part {
	name := header
	if e := bytes.IndexAny(name, " \t\n<"); e >= 0 {
		name = name[:e]
	}
	if string(name) == "analysis" {
		return PartReasoning
	}
	return PartContent
}

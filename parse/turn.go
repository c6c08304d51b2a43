package parse

import (
	"fmt"
	"strings"
)

// The invented-turn guard. A model that is not stopped where its turn
// ends may go on writing the next turns itself (an invented user
// question, then another answer with more calls: a 6.7B coder model did
// so in most of its answers in one public benchmark's results). What it
// writes there is not this turn's: the parser ends the turn at the first
// marker of another turn, with an EventEndTurn (error kind
// overran_turn), and the rest of the output is PartOverrun text, never
// calls.

// TurnMarkers are the markers of another turn the parser ends the turn
// at, whatever the format: the role headers of the common chat
// templates, and the plain-text ones (at the start of a line) of
// instruction-tuned and base models. Options.TurnMarkers adds a
// template's own.
func TurnMarkers() []string { return append([]string(nil), turnMarkers...) }

var turnMarkers = []string{
	"<|im_start|>user", "<|im_start|>system", "<|start|>user", "<|start_header_id|>user",
	"\n### Instruction", "\n### Response", "\nHuman:", "\nUser:",
}

// StopStrings are the plain-text turn markers, for a backend to stop
// generation at: the special-token headers end generation with the
// template's own stop tokens already.
func StopStrings() []string {
	var out []string
	for _, m := range turnMarkers {
		if m[0] == '\n' {
			out = append(out, m)
		}
	}
	return out
}

// turnOpeners are the openers of the turn markers and of extra (a
// template's own role headers).
func turnOpeners(extra []string) []opener {
	ops := make([]opener, 0, len(turnMarkers)+len(extra))
	for _, m := range append(append([]string(nil), turnMarkers...), extra...) {
		if strings.TrimSpace(m) != "" {
			ops = append(ops, opener{marker: m, kind: kTurn})
		}
	}
	return ops
}

// endTurn ends the turn at the turn marker that starts at p.pos: a
// newline before a plain-text marker stays in the answer, the marker and
// everything after it are PartOverrun text.
func (p *Parser) endTurn(marker string) {
	if marker[0] == '\n' {
		p.text("\n")
		p.pos++
		marker = marker[1:]
	}
	p.event(Event{Type: EventEndTurn, Err: &Error{Kind: KindOverranTurn, Offset: p.pos,
		Message: fmt.Sprintf("the reply went on past its turn: %q starts another turn; end the turn after the calls", marker)}})
	p.ended = true
	p.textAs(marker, PartOverrun)
	p.pos += len(marker)
}

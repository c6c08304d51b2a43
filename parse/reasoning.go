package parse

import "strings"

// Reasoning blocks. A thinking model writes <think>…</think> before its
// answer, and in that reasoning it often quotes the call it is about to
// make ("the syntax would be {"name": "get_weather", …}"). Servers split
// the reasoning off before they look for calls (vLLM's reasoning parsers,
// Ollama's thinking), so a quoted call is never executed; the parsers do
// the same. The reasoning bytes are emitted as text (nothing is lost, and
// the agent re-renders the turn from the exact output) of PartReasoning,
// the block's markers as PartFraming, but they are never scanned for call
// markers.
//
// Only a block at the start of the output counts (after optional
// whitespace): that is where every thinking template puts it, and a
// <think> later in the answer is prose. With Options.ThinkOpen the prompt
// already opened the block (Qwen3 "Thinking-2507" and DeepSeek-R1
// templates end the generation prompt with "<think>\n"), so the output
// starts inside it and the reasoning ends at the first bare </think>.
// Without that option a bare </think> is ordinary text: recognising it
// after the fact would mean holding back the whole output until it
// arrives, which streaming cannot afford, and only the caller that
// rendered the prompt knows whether the block was opened there.

const (
	thinkOpen  = "<think>"
	thinkClose = "</think>"
)

// reasoningState says where the parser stands with respect to a leading
// reasoning block.
type reasoningState uint8

const (
	rsNone  reasoningState = iota // no block possible any more: scan for calls
	rsStart                       // only whitespace so far: a block may open
	rsIn                          // inside the block, until </think>
)

// initialReasoning is the state a turn starts in.
func initialReasoning(t *table, opts Options, open string) reasoningState {
	for _, o := range t.ops {
		if o.marker == open {
			// A registered tool named "think" in the tags format: its
			// tag is a call, not reasoning.
			return rsNone
		}
	}
	if opts.ThinkOpen {
		return rsIn
	}
	return rsStart
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// textAt emits s as text of part and advances the offset past it.
func (p *Parser) textAt(s string, part Part) {
	p.pos += len(s)
	p.textAs(s, part)
}

// feedReasoning handles s while a reasoning block is possible or open;
// what follows the block goes to the call scanner. The bytes held back
// (p.rheld, a prefix of <think> or </think>) are not counted in p.pos
// until they are released.
func (p *Parser) feedReasoning(s string, eof bool) {
	open, close := p.think[0], p.think[1]
	for {
		switch p.rs {
		case rsStart:
			if p.rheld == "" {
				i := 0
				for i < len(s) && isSpace(s[i]) {
					i++
				}
				p.textAt(s[:i], PartContent)
				s = s[i:]
				if s == "" {
					if eof {
						p.rs = rsNone
					}
					return
				}
			}
			h := p.rheld
			need := open[len(h):]
			n := min(len(s), len(need))
			if s[:n] != need[:n] || (n < len(need) && eof) {
				// Not a reasoning block: the held bytes and s are
				// scanned for calls as usual.
				p.rs, p.rheld = rsNone, ""
				p.feed(h, false)
				p.feed(s, eof)
				return
			}
			if n < len(need) {
				p.rheld = open[:len(h)+n]
				return
			}
			p.rheld = ""
			p.textAt(open, PartFraming)
			s = s[n:]
			p.rs = rsIn
		case rsIn:
			if h := p.rheld; h != "" {
				need := close[len(h):]
				n := min(len(s), len(need))
				switch {
				case s[:n] != need[:n]:
					// The held bytes are not the closing marker:
					// its first byte is reasoning, and the rest
					// (a substring of the marker) is looked at
					// again, since the marker may start inside it.
					p.rheld = ""
					p.textAt(h[:1], PartReasoning)
					p.feedReasoning(h[1:], false)
					if p.rs != rsIn {
						p.feed(s, eof)
						return
					}
					continue
				case n == len(need):
					p.rheld, p.rs = "", rsNone
					p.textAt(close, PartFraming)
					p.feed(s[n:], eof)
					return
				case eof:
					p.rheld = ""
					p.textAt(h, PartReasoning)
					p.textAt(s, PartReasoning)
					return
				default:
					p.rheld = close[:len(h)+n]
					return
				}
			}
			if i := strings.Index(s, close); i >= 0 {
				p.rs = rsNone
				p.textAt(s[:i], PartReasoning)
				p.textAt(close, PartFraming)
				p.feed(s[i+len(close):], eof)
				return
			}
			if j := heldStart(s, close); j >= 0 && !eof {
				p.textAt(s[:j], PartReasoning)
				p.rheld = close[:len(s)-j]
				return
			}
			p.textAt(s, PartReasoning)
			return
		default:
			p.feed(s, eof)
			return
		}
	}
}

// heldStart is the earliest index of s from which the rest of s is a
// proper prefix of marker, or -1.
func heldStart(s, marker string) int {
	for j := max(0, len(s)-len(marker)+1); j < len(s); j++ {
		if s[j] == marker[0] && strings.HasPrefix(marker, s[j:]) {
			return j
		}
	}
	return -1
}

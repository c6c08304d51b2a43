package parse

import "strings"

// Reasoning blocks. A thinking model writes <think>…</think> before its
// answer, and in that reasoning it often quotes the call it is about to
// make ("the syntax would be {"name": "get_weather", …}"). Servers split
// the reasoning off before they look for calls (vLLM's reasoning parsers,
// Ollama's thinking), so a quoted call is never executed; the parsers do
// the same. The reasoning bytes are emitted as text (nothing is lost, and
// the agent re-renders the turn from the exact output), but they are never
// scanned for call markers.
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
func initialReasoning(t *table, opts Options) reasoningState {
	for _, o := range t.ops {
		if o.marker == thinkOpen {
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

// textAt emits s as text and advances the offset past it.
func (p *Parser) textAt(s string) {
	p.pos += len(s)
	p.text(s)
}

// feedReasoning handles s while a reasoning block is possible or open;
// what follows the block goes to the call scanner. The bytes held back
// (p.rheld, a prefix of <think> or </think>) are not counted in p.pos
// until they are released.
func (p *Parser) feedReasoning(s string, eof bool) {
	for {
		switch p.rs {
		case rsStart:
			if p.rheld == "" {
				i := 0
				for i < len(s) && isSpace(s[i]) {
					i++
				}
				p.textAt(s[:i])
				s = s[i:]
				if s == "" {
					if eof {
						p.rs = rsNone
					}
					return
				}
			}
			h := p.rheld
			need := thinkOpen[len(h):]
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
				p.rheld = thinkOpen[:len(h)+n]
				return
			}
			p.rheld = ""
			p.textAt(thinkOpen)
			s = s[n:]
			p.rs = rsIn
		case rsIn:
			if h := p.rheld; h != "" {
				need := thinkClose[len(h):]
				n := min(len(s), len(need))
				switch {
				case s[:n] != need[:n]:
					// '<' occurs only first in </think>, so no
					// later byte of h can start it.
					p.rheld = ""
					p.textAt(h)
				case n == len(need):
					p.rheld, p.rs = "", rsNone
					p.textAt(thinkClose)
					p.feed(s[n:], eof)
					return
				case eof:
					p.rheld = ""
					p.textAt(h)
					p.textAt(s)
					return
				default:
					p.rheld = thinkClose[:len(h)+n]
					return
				}
			}
			if i := strings.Index(s, thinkClose); i >= 0 {
				p.rs = rsNone
				p.textAt(s[:i+len(thinkClose)])
				p.feed(s[i+len(thinkClose):], eof)
				return
			}
			if j := strings.LastIndexByte(s, '<'); j >= 0 && !eof && strings.HasPrefix(thinkClose, s[j:]) {
				p.textAt(s[:j])
				p.rheld = thinkClose[:len(s)-j]
				return
			}
			p.textAt(s)
			return
		default:
			p.feed(s, eof)
			return
		}
	}
}

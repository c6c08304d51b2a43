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

// reasoningPairs are the reasoning blocks a reply in format may start
// with, each as its opening and closing marker; the first is the one
// Options.ThinkOpen says the prompt opened. Seed-OSS writes
// <seed:think>…</seed:think> (its budget reflections,
// <seed:cot_budget_reflect>…</seed:cot_budget_reflect>, inside the block
// are reasoning too), Magistral and Devstral [THINK]…[/THINK]; every
// other family <think>. No opener may be a prefix of another: the first
// complete one decides (thinkStart), which must not depend on chunking.
func reasoningPairs(format string) [][2]string {
	think := [2]string{"<think>", "</think>"}
	seed := [2]string{"<seed:think>", "</seed:think>"}
	mistral := [2]string{"[THINK]", "[/THINK]"}
	switch format {
	case "seed-oss":
		return [][2]string{seed, think}
	case "mistral":
		return [][2]string{think, mistral}
	case "auto":
		return [][2]string{think, seed, mistral}
	}
	return [][2]string{think}
}

// reasoningState says where the parser stands with respect to a leading
// reasoning block.
type reasoningState uint8

const (
	rsNone  reasoningState = iota // no block possible any more: scan for calls
	rsStart                       // only whitespace so far: a block may open
	rsIn                          // inside the block, until its closer (p.think[1])
)

// setThinks sets the reasoning blocks a turn may start with and the state
// a turn starts in. A pair whose opener is a call marker of the table is
// left out: a registered tool named "think" in the tags format has <think>
// as its tag, a call, not reasoning (and with ThinkOpen, nothing is split).
func (p *Parser) setThinks(pairs [][2]string, opts Options) {
	p.useThinks(p.tab.thinksOf(pairs), pairs, opts)
}

// thinksOf returns the pairs whose openers are not markers of t, in a new
// slice (parsers share it, see compiled).
func (t *table) thinksOf(pairs [][2]string) [][2]string {
	var out [][2]string
	for _, pr := range pairs {
		if !t.hasMarker(pr[0]) {
			out = append(out, pr)
		}
	}
	return out
}

// useThinks sets thinks (pairs less those that are call markers) as the
// turn's reasoning blocks.
func (p *Parser) useThinks(thinks, pairs [][2]string, opts Options) {
	p.thinks = thinks
	p.rs0 = rsNone
	switch {
	case opts.ThinkOpen:
		if len(p.thinks) > 0 && p.thinks[0] == pairs[0] {
			p.think, p.rs0 = pairs[0], rsIn
		}
	case len(p.thinks) > 0:
		p.rs0 = rsStart
	}
	p.rs = p.rs0
}

// hasMarker reports whether m is one of the table's markers.
func (t *table) hasMarker(m string) bool {
	for _, o := range t.ops {
		if o.marker == m {
			return true
		}
	}
	return false
}

// thinkStart matches the start of a reasoning block: h (held back, a
// prefix of an opener) followed by s. It returns the pair whose opener
// they start and how many bytes of s the opener takes (n), with done when
// the opener is complete; n is -1 when no opener starts so (or, at eof,
// none is complete).
func (p *Parser) thinkStart(h, s string, eof bool) (pair [2]string, n int, done bool) {
	n = -1
	for _, pr := range p.thinks {
		open := pr[0]
		if !strings.HasPrefix(open, h) {
			continue
		}
		need := open[len(h):]
		k := min(len(s), len(need))
		if s[:k] != need[:k] {
			continue
		}
		if k == len(need) {
			return pr, k, true
		}
		if !eof && n < 0 {
			pair, n = pr, k
		}
	}
	return pair, n, false
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
	for {
		close := p.think[1]
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
			pair, n, done := p.thinkStart(h, s, eof)
			if n < 0 {
				// Not a reasoning block: the held bytes and s are
				// scanned for calls as usual.
				p.rs, p.rheld = rsNone, ""
				p.feed(h, false)
				p.feed(s, eof)
				return
			}
			if !done {
				p.rheld = pair[0][:len(h)+n]
				return
			}
			p.rheld, p.think = "", pair
			p.textAt(pair[0], PartFraming)
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

package derive

import (
	"strings"

	"github.com/toolharness/toolharness/parse"
)

// Some templates end the generation prompt inside the call syntax:
// functionary v3.2's ends with the call opener ">>>", gpt-oss's with the
// header "<|start|>assistant" that a call's " to=functions.NAME" extends.
// The model's output then starts in the middle of a call, and a parser fed
// the output alone misses it. The tail of the prompt that belongs to the
// call syntax is learned here from renders (no template is known by name)
// and fed to the parser before the output.

// learnPromptTail is PromptTail for the probe renders: the reply must give
// the first probe call to the template's parser.
func learnPromptTail(res Result, prompt, callRender string) string {
	if !res.WritesCalls {
		return ""
	}
	return PromptTail(prompt, callRender, sentinelUser, func() (*parse.Parser, error) { return res.NewParser(parse.Options{}) }, sentinelTool1)
}

// PromptTail returns the shortest suffix of a generation prompt, cut at a
// token boundary and after the user's text, with which a parser (made by
// newParser) reads a call of tool out of the reply: what callRender, the
// same conversation with the call turn in place of the generation prompt,
// adds to prompt. It is "" when the reply parses on its own, when the call
// turn does not extend the prompt (a prompt that opens reasoning, handled
// by parse.Options.ThinkOpen), or when no suffix helps.
func PromptTail(prompt, callRender, user string, newParser func() (*parse.Parser, error), tool string) string {
	if !strings.HasPrefix(callRender, prompt) {
		return ""
	}
	reply := callRender[len(prompt):]
	from := 0
	if i := strings.LastIndex(prompt, user); i >= 0 {
		from = i + len(user)
	}
	bounds := tokenBounds(prompt)
	for i := len(bounds) - 1; i >= 0 && bounds[i] >= from; i-- {
		tail := prompt[bounds[i]:]
		if readsCall(newParser, tool, tail+reply) {
			return tail
		}
	}
	return ""
}

// readsCall reports whether a new parser reads a call of tool, without
// error, from text.
func readsCall(newParser func() (*parse.Parser, error), tool, text string) bool {
	p, err := newParser()
	if err != nil {
		return false
	}
	found := false
	emit := func(ev parse.Event) {
		if ev.Type == parse.EventCall && ev.Err == nil && ev.Call.Name == tool {
			found = true
		}
	}
	p.Feed(text, emit)
	p.Close(emit)
	return found
}

// NewOutputParser returns a parser for the model's output after the
// generation prompt, which is what a server returns: the template's parser
// (NewParser), opened in reasoning when the prompt opens it, and primed
// with the prompt's tail (PromptTail), so the output parses as if that
// tail preceded it. See OutputParser for what the events then hold.
func (r Result) NewOutputParser(opts parse.Options) (*OutputParser, error) {
	opts.ThinkOpen = opts.ThinkOpen || r.ThinkOpen
	p, err := r.NewParser(opts)
	if err != nil {
		return nil, err
	}
	return Prime(p, r.PromptTail), nil
}

// Prime returns p fed tail before the output it is given (see
// OutputParser); a tail of "" changes nothing.
func Prime(p *parse.Parser, tail string) *OutputParser {
	return &OutputParser{p: p, tail: tail, drop: len(tail)}
}

// OutputParser is a parse.Parser fed the prompt's tail before the model's
// output. The tail is not something the model wrote: it never appears in
// text events (where the parser does not take it as call syntax, exactly
// its bytes are dropped from the start of the text), offsets are relative
// to the model's output (a call whose opener was the tail is at offset 0),
// and Raw holds only bytes of the output (the tail is cut from the Raw of
// a call or error that starts in it). Nothing is fed for an empty output.
type OutputParser struct {
	p    *parse.Parser
	tail string
	fed  bool // the tail went to the parser since the last Reset
	drop int  // bytes of the tail still to be dropped from text events
}

// Feed parses the next chunk of the model's output.
func (o *OutputParser) Feed(chunk string, emit func(parse.Event)) {
	if chunk == "" {
		return
	}
	out := o.wrap(emit)
	if !o.fed {
		o.fed = true
		if o.tail != "" {
			o.p.Feed(o.tail, out)
		}
	}
	o.p.Feed(chunk, out)
}

// Close ends the output; the parser is then ready for the next one, as a
// parse.Parser is.
func (o *OutputParser) Close(emit func(parse.Event)) {
	o.p.Close(o.wrap(emit))
	o.fed, o.drop = false, len(o.tail)
}

// Reset readies the parser for the next output.
func (o *OutputParser) Reset() {
	o.p.Reset()
	o.fed, o.drop = false, len(o.tail)
}

// Format is the parser's format name.
func (o *OutputParser) Format() string { return o.p.Format() }

// wrap returns emit behind the translation from the primed stream to the
// model's output.
func (o *OutputParser) wrap(emit func(parse.Event)) func(parse.Event) {
	if o.tail == "" {
		return emit
	}
	return func(ev parse.Event) {
		if ev.Type == parse.EventText {
			if ev.Text = o.dropTail(ev.Text); ev.Text == "" {
				return
			}
		} else {
			// Anything but text before the tail's bytes came back as
			// text means the parser took them as syntax.
			o.drop = 0
		}
		if ev.Type == parse.EventCallStart || ev.Type == parse.EventCall {
			ev.Call.Raw = o.cutTail(ev.Call.Raw, ev.Call.Offset)
			ev.Call.Offset = o.shift(ev.Call.Offset)
		}
		if ev.Err != nil {
			e := *ev.Err
			if ev.Type == parse.EventError {
				e.Raw = o.cutTail(e.Raw, e.Offset)
			}
			e.Offset = o.shift(e.Offset)
			ev.Err = &e
		}
		emit(ev)
	}
}

// dropTail removes from text the tail bytes the parser passed on as text.
func (o *OutputParser) dropTail(text string) string {
	if o.drop == 0 {
		return text
	}
	pending := o.tail[len(o.tail)-o.drop:]
	n := 0
	for n < len(text) && n < len(pending) && text[n] == pending[n] {
		n++
	}
	if n < len(text) && n < len(pending) {
		// Not the tail: the parser consumed it as syntax.
		o.drop = 0
		return text
	}
	o.drop -= n
	return text[n:]
}

// shift makes an offset of the primed stream one of the model's output.
func (o *OutputParser) shift(off int) int { return max(off-len(o.tail), 0) }

// cutTail removes the tail's bytes from a Raw that starts at off in the
// primed stream, so that Raw holds only what the model wrote.
func (o *OutputParser) cutTail(raw string, off int) string {
	if off < 0 || off >= len(o.tail) {
		return raw
	}
	if in := o.tail[off:]; strings.HasPrefix(raw, in) {
		return raw[len(in):]
	}
	return raw
}

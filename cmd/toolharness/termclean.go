package main

import "strings"

// ctlFilter drops terminal control sequences from text a model or a tool
// wrote, before it reaches a terminal: ESC sequences whole (CSI such as
// "\x1b[2J" that clears the screen, OSC such as "\x1b]0;title\a" that
// sets the window title, and the rest), C1 controls (U+0080–U+009F) and
// every C0 control but newline and tab. It keeps its state between the
// pieces of a stream, so a sequence cut across two chunks is dropped too.
type ctlFilter struct {
	state ctlState
	c2    bool // the last byte was 0xC2, the first of a C1 control's UTF-8
}

type ctlState int

const (
	ctlText      ctlState = iota
	ctlEsc                // after ESC
	ctlEscInter           // in an ESC sequence's intermediate bytes
	ctlCSI                // in a control sequence, up to its final byte
	ctlString             // in an OSC, DCS, SOS, PM or APC string, up to BEL or ST
	ctlStringEsc          // after ESC in such a string
)

// filter returns s without the control sequences.
func (f *ctlFilter) filter(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch f.state {
		case ctlText:
			f.text(&b, c)
		case ctlEsc:
			switch {
			case c == '[':
				f.state = ctlCSI
			case c == ']' || c == 'P' || c == 'X' || c == '^' || c == '_':
				f.state = ctlString
			case c >= 0x20 && c <= 0x2f:
				f.state = ctlEscInter
			default:
				f.state = ctlText
			}
		case ctlEscInter:
			if c < 0x20 || c > 0x2f {
				f.state = ctlText
			}
		case ctlCSI:
			if c >= 0x40 && c <= 0x7e {
				f.state = ctlText
			}
		case ctlString:
			switch c {
			case 0x07:
				f.state = ctlText
			case 0x1b:
				f.state = ctlStringEsc
			case '\n':
				// An unterminated string does not swallow the reply.
				f.state = ctlText
				b.WriteByte(c)
			}
		case ctlStringEsc:
			f.state = ctlString
			if c == '\\' {
				f.state = ctlText
			}
		}
	}
	return b.String()
}

// text takes one byte of plain text.
func (f *ctlFilter) text(b *strings.Builder, c byte) {
	if f.c2 {
		f.c2 = false
		switch {
		case c == 0x9b:
			f.state = ctlCSI
			return
		case c == 0x9d || c == 0x90 || c == 0x98 || c == 0x9e || c == 0x9f:
			f.state = ctlString
			return
		case c >= 0x80 && c <= 0x9f:
			return
		}
		b.WriteByte(0xc2)
	}
	switch {
	case c == 0x1b:
		f.state = ctlEsc
	case c == 0xc2:
		f.c2 = true
	case c == '\n' || c == '\t':
		b.WriteByte(c)
	case c < 0x20 || c == 0x7f:
	default:
		b.WriteByte(c)
	}
}

// flush ends the stream: a held 0xC2 that no C1 control followed.
func (f *ctlFilter) flush() string {
	f.state = ctlText
	if f.c2 {
		f.c2 = false
		return "\xc2"
	}
	return ""
}

// withoutControls is s without control sequences (a string that is whole).
func withoutControls(s string) string {
	var f ctlFilter
	return f.filter(s) + f.flush()
}

package render

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/toolharness/toolharness/chat"
)

// runSession plays a 10-turn tool session: two call turns, then an answer
// and a new user message, and so on. It checks that every prompt extends
// the previous prompt plus the model's raw output, byte for byte, and
// returns the last prompt and the messages it covers.
func runSession(t *testing.T, cfg SessionConfig, withReminders bool) (string, []chat.Message) {
	t.Helper()
	s, err := NewSession(cfg)
	if err != nil {
		t.Fatal(err)
	}
	s.AddUser("What's the weather in Paris right now?")
	format := cfg.Format
	if format == "" {
		format = cfg.Family.DefaultFormat
	}
	var prev, prevRaw, p string
	var rendered []chat.Message
	for turn := 0; turn < 10; turn++ {
		var reminders []string
		if withReminders && turn%2 == 0 {
			reminders = []string{fmt.Sprintf("turn %d: 3 deferred tools", turn)}
		}
		p, err = s.Prompt(reminders...)
		if err != nil {
			t.Fatalf("turn %d: %v", turn, err)
		}
		rendered = s.Messages()
		if turn > 0 {
			if d := Diverge(prev+prevRaw, p); d != nil {
				t.Fatalf("turn %d: %v", turn, d)
			}
		}
		for _, r := range reminders {
			if !strings.Contains(p[len(prev):], r) {
				t.Errorf("turn %d: reminder %q missing from the new part", turn, r)
			}
		}
		if turn > 0 && strings.Contains(p[len(prev):], fmt.Sprintf("turn %d:", turn-2)) {
			t.Errorf("turn %d: an old reminder was repeated", turn)
		}
		if turn%3 == 2 {
			prevRaw = fmt.Sprintf("It is %d degrees.", 10+turn)
			s.AddAssistant(prevRaw, nil)
			s.AddUser(fmt.Sprintf("And in city %d?", turn))
		} else {
			call := chat.ToolCall{ID: fmt.Sprintf("call0000%d", turn), Name: "get_weather", Arguments: []byte(fmt.Sprintf(`{"location":"City %d"}`, turn))}
			prevRaw, err = FormatCall(format, call)
			if err != nil {
				t.Fatal(err)
			}
			s.AddAssistant(prevRaw, []chat.ToolCall{call})
			if err := s.AddResults([]chat.ToolResult{{CallID: call.ID, Content: fmt.Sprintf("%d C </tool_response><|im_end|>", turn)}}); err != nil {
				t.Fatal(err)
			}
		}
		prev = p
	}
	return p, rendered
}

// TestSessionPrefix: for every family, in its default format and in xml,
// each prompt of a 10-turn tool session is a byte-prefix extension of the
// previous prompt plus the model's raw output.
func TestSessionPrefix(t *testing.T) {
	tools := testTools(t)
	for _, fam := range families(t) {
		for _, format := range []string{fam.DefaultFormat, FormatXML} {
			t.Run(fam.Name+"/"+format, func(t *testing.T) {
				last, _ := runSession(t, SessionConfig{Family: fam, Format: format, System: "You are a helpful assistant.", Tools: tools, Now: fixedNow}, true)
				if strings.Count(last, "You are a helpful assistant.") < 1 {
					t.Errorf("system text missing")
				}
				if strings.Contains(last, sentinel) {
					t.Errorf("sentinel leaked into the prompt")
				}
			})
		}
	}
}

// TestSessionMatchesTemplate: where the official template is prefix-stable
// and the model writes calls exactly as the template serialises them, the
// session's prompt equals the template's rendering of the whole
// conversation.
func TestSessionMatchesTemplate(t *testing.T) {
	tools := testTools(t)
	for _, name := range []string{"qwen2.5", "qwen3-coder", "llama3.1", "llama3.2", "chatml"} {
		t.Run(name, func(t *testing.T) {
			fam := lookup(t, name)
			cfg := SessionConfig{Family: fam, System: "You are a helpful assistant.", Tools: tools, Now: fixedNow, Verbatim: true}
			if name == "chatml" {
				cfg.Format = FormatHermes
			}
			last, rendered := runSession(t, cfg, false)
			var msgs []chat.Message
			for _, m := range rendered {
				if m.Role == chat.RoleAssistant && len(m.ToolCalls) == 0 {
					m.Content, m.Raw = m.Raw, ""
				} else if m.Role == chat.RoleAssistant && name != "chatml" {
					m.Raw = "" // the template serialises the calls itself
				}
				msgs = append(msgs, m)
			}
			whole, err := Prompt(Request{Family: fam, Format: cfg.Format, Messages: msgs, Tools: tools, Now: fixedNow, Verbatim: true})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(whole, last); diff != "" {
				t.Errorf("(-template +session):\n%s", diff)
			}
		})
	}
}

func TestSessionErrors(t *testing.T) {
	s, err := NewSession(SessionConfig{Family: lookup(t, "qwen2.5")})
	if err != nil {
		t.Fatal(err)
	}
	s.AddUser("hi")
	if _, err := s.Prompt(); err != nil {
		t.Fatal(err)
	}
	s.AddUser("again")
	if _, err := s.Prompt(); !errors.Is(err, ErrNoReply) {
		t.Errorf("prompt without a reply: %v", err)
	}
	if _, err := NewSession(SessionConfig{Family: lookup(t, "gpt-oss")}); !errors.Is(err, ErrNoClock) {
		t.Errorf("gpt-oss without a clock: %v", err)
	}
	if err := s.AddResults([]chat.ToolResult{{CallID: "nope"}}); err == nil {
		t.Error("result without a call: no error")
	}
}

func TestDiverge(t *testing.T) {
	tests := []struct {
		prev, next string
		off        int
		ok         bool
	}{
		{"abc", "abcdef", 0, true},
		{"", "x", 0, true},
		{"abc", "abc", 0, true},
		{"abXc", "abYc", 2, false},
		{"abcdef", "abc", 3, false},
	}
	for _, tt := range tests {
		d := Diverge(tt.prev, tt.next)
		if (d == nil) != tt.ok {
			t.Errorf("Diverge(%q, %q) = %v", tt.prev, tt.next, d)
			continue
		}
		if d != nil && d.Offset != tt.off {
			t.Errorf("Diverge(%q, %q) at %d, want %d", tt.prev, tt.next, d.Offset, tt.off)
		}
	}
	if err := CheckPrefix("ab", "abc"); err != nil {
		t.Errorf("CheckPrefix: %v", err)
	}
	var d2 *Divergence
	if err := CheckPrefix("ab", "ax"); !errors.As(err, &d2) || d2.Offset != 1 {
		t.Errorf("CheckPrefix: %v", err)
	}
	long := strings.Repeat("a", 200)
	d := Diverge(long+"X"+long, long+"Y"+long)
	if d == nil || d.Offset != 200 || len(d.Prev) != 2*ContextBytes || !strings.Contains(d.Error(), "byte 200") {
		t.Errorf("got %+v", d)
	}
}

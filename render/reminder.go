package render

import (
	"errors"
	"strings"

	"github.com/toolharness/toolharness/chat"
)

// ErrNoUserMessage is returned when reminders have no user message to go
// into.
var ErrNoUserMessage = errors.New("render: no user message to carry the system reminders")

// Reminder wraps text in a <system-reminder> block.
func Reminder(text string) string {
	return "<system-reminder>\n" + strings.TrimSpace(text) + "\n</system-reminder>"
}

// WithReminders returns a copy of msgs whose newest user message starts with
// one <system-reminder> block per reminder. Reminders never go into the
// system message: it must stay byte-identical across a session.
func WithReminders(msgs []chat.Message, reminders ...string) ([]chat.Message, error) {
	if len(reminders) == 0 {
		return msgs, nil
	}
	out := append([]chat.Message(nil), msgs...)
	for i := len(out) - 1; i >= 0; i-- {
		if out[i].Role == chat.RoleUser {
			out[i].Content = reminderText(reminders) + out[i].Content
			return out, nil
		}
	}
	return nil, ErrNoUserMessage
}

func reminderText(reminders []string) string {
	var b strings.Builder
	for _, r := range reminders {
		b.WriteString(Reminder(r))
		b.WriteString("\n")
	}
	return b.String()
}

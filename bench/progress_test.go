package bench

import (
	"strings"
	"testing"
	"time"
)

func TestProgressPrinter(t *testing.T) {
	var b strings.Builder
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	p := &ProgressPrinter{W: &b, Interval: 5 * time.Second, Now: func() time.Time { return clock }}
	p.Update(Progress{Total: 10}) // the starting state: silent, starts the interval
	clock = clock.Add(5 * time.Second)
	p.Update(Progress{Total: 10, Done: 1, Failed: 1, Elapsed: time.Second})
	clock = clock.Add(time.Second)
	p.Update(Progress{Total: 10, Done: 2, Elapsed: 2 * time.Second}) // within the interval: silent
	clock = clock.Add(5 * time.Second)
	p.Update(Progress{Total: 10, Done: 5, Failed: 1, Elapsed: 5 * time.Second})
	p.Update(Progress{Total: 10, Done: 8, Skipped: 2, Failed: 2, Elapsed: 8 * time.Second}) // last: always
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	want := []string{
		"bench: 1/10 cases done (0 resumed), 1.00 cases/s, ETA 0:09, first-attempt parse failures 100.0%, errors 0",
		"bench: 5/10 cases done (0 resumed), 1.00 cases/s, ETA 0:05, first-attempt parse failures 20.0%, errors 0",
		"bench: 10/10 cases done (2 resumed), 1.00 cases/s, ETA –, first-attempt parse failures 25.0%, errors 0",
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}

	b.Reset()
	term := &ProgressPrinter{W: &b, Terminal: true}
	term.Update(Progress{Total: 4, Done: 2, Elapsed: 2 * time.Second})
	term.Update(Progress{Total: 4, Done: 4, Elapsed: 4 * time.Second})
	out := b.String()
	if !strings.HasPrefix(out, "\r███████████████░░░░░░░░░░░░░░░ 2/4") || !strings.HasSuffix(out, "\n") || strings.Count(out, "\r") != 2 {
		t.Errorf("terminal output %q", out)
	}
}

// TestProgressPrinterFailsAtOnce: a run whose first case fails and stops
// (a dead server) prints no progress line before its error.
func TestProgressPrinterFailsAtOnce(t *testing.T) {
	var b strings.Builder
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	p := &ProgressPrinter{W: &b, Now: func() time.Time { return clock }}
	p.Update(Progress{Total: 16})
	clock = clock.Add(10 * time.Millisecond)
	p.Update(Progress{Total: 16, Done: 1, Errors: 1, Elapsed: 10 * time.Millisecond})
	if b.Len() != 0 {
		t.Errorf("printed %q", b.String())
	}
	p = &ProgressPrinter{W: &b, Now: func() time.Time { return clock }}
	p.Update(Progress{Total: 16, Skipped: 3}) // a resumed start says what it skipped
	if !strings.Contains(b.String(), "3/16 cases done (3 resumed)") {
		t.Errorf("resumed start: %q", b.String())
	}
}

package bench

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
)

// ProgressPrinter shows a run's progress: a redrawn bar on a terminal,
// plain lines (at most one per Interval) otherwise.
type ProgressPrinter struct {
	W        io.Writer
	Terminal bool
	// Interval between plain lines (default 5 s); the last case always
	// prints.
	Interval time.Duration
	// Now is the clock (tests); nil means time.Now.
	Now func() time.Time

	mu   sync.Mutex
	last time.Time
}

// Update implements RunConfig.Progress.
func (p *ProgressPrinter) Update(pr Progress) {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := time.Now
	if p.Now != nil {
		now = p.Now
	}
	finished := pr.Done+pr.Skipped >= pr.Total
	fail := 0.0
	if pr.Done > 0 {
		fail = 100 * float64(pr.Failed) / float64(pr.Done)
	}
	if p.Terminal {
		const width = 30
		filled := 0
		if pr.Total > 0 {
			filled = width * (pr.Done + pr.Skipped) / pr.Total
		}
		bar := strings.Repeat("█", filled) + strings.Repeat("░", width-filled)
		fmt.Fprintf(p.W, "\r%s %d/%d  %.2f cases/s  ETA %s  parse failures %.1f%%  errors %d ", bar,
			pr.Done+pr.Skipped, pr.Total, pr.Rate(), fmtETA(pr.ETA()), fail, pr.Errors)
		if finished {
			fmt.Fprintln(p.W)
		}
		return
	}
	interval := p.Interval
	if interval == 0 {
		interval = 5 * time.Second
	}
	t := now()
	if !finished && pr.Done == 0 && pr.Skipped == 0 {
		// The starting state of a fresh run says nothing yet; it starts the
		// interval, so a run that fails at once (a dead server) ends with
		// its error line alone.
		if p.last.IsZero() {
			p.last = t
		}
		return
	}
	if !finished && !p.last.IsZero() && t.Sub(p.last) < interval {
		return
	}
	p.last = t
	fmt.Fprintf(p.W, "bench: %d/%d cases done (%d resumed), %.2f cases/s, ETA %s, first-attempt parse failures %.1f%%, errors %d\n",
		pr.Done+pr.Skipped, pr.Total, pr.Skipped, pr.Rate(), fmtETA(pr.ETA()), fail, pr.Errors)
}

func fmtETA(d time.Duration) string {
	if d <= 0 {
		return "–"
	}
	d = d.Round(time.Second)
	h, m, s := int(d.Hours()), int(d.Minutes())%60, int(d.Seconds())%60
	if h > 0 {
		return fmt.Sprintf("%d:%02d:%02d", h, m, s)
	}
	return fmt.Sprintf("%d:%02d", m, s)
}

package registry

import (
	"fmt"
	"sort"
	"strings"
)

// Mistake is a kind of model mistake the retry policy can count.
type Mistake string

// The mistakes.
const (
	MistakeParseError       Mistake = "parse_error"
	MistakeUnknownTool      Mistake = "unknown_tool"
	MistakeInvalidArguments Mistake = "invalid_arguments" // malformed arguments count here too
	MistakeNoCall           Mistake = "no_call"           // prose where a call was required
)

// AllMistakes lists every mistake kind, in a fixed order.
func AllMistakes() []Mistake {
	return []Mistake{MistakeParseError, MistakeUnknownTool, MistakeInvalidArguments, MistakeNoCall}
}

// MistakeOf maps a call failure to the mistake it counts as; ok is false
// for failures that are not the model's mistake (denied, timeout, …).
func MistakeOf(k Kind) (Mistake, bool) {
	switch k {
	case KindUnknownTool:
		return MistakeUnknownTool, true
	case KindInvalidArguments, KindMalformedArguments:
		return MistakeInvalidArguments, true
	}
	return "", false
}

// Action is what happens when a limit is reached.
type Action string

// The actions.
const (
	ActionStop     Action = "stop"      // end the run with a LimitError
	ActionHandBack Action = "hand_back" // end the exchange and let the user speak
)

// RetryPolicy is the agent loop's policy on model mistakes.
type RetryPolicy struct {
	// MaxRetriesPerTurn bounds retries within one user turn (0: no bound
	// other than the consecutive limit).
	MaxRetriesPerTurn int
	// MaxConsecutive bounds mistakes in a row; Cline stops after 3.
	MaxConsecutive int
	// Count lists the mistakes that count; nil counts all of them.
	Count []Mistake
	// AtLimit says what to do at a limit (default ActionStop).
	AtLimit Action
}

// DefaultRetryPolicy: 3 consecutive mistakes of any kind, 5 retries per
// turn, then stop.
func DefaultRetryPolicy() RetryPolicy {
	return RetryPolicy{MaxRetriesPerTurn: 5, MaxConsecutive: 3, AtLimit: ActionStop}
}

// NewTracker starts counting under p.
func (p RetryPolicy) NewTracker() *RetryTracker {
	if p.AtLimit == "" {
		p.AtLimit = ActionStop
	}
	return &RetryTracker{p: p, byKind: map[Mistake]int{}}
}

func (p RetryPolicy) counts(m Mistake) bool {
	if p.Count == nil {
		return true
	}
	for _, c := range p.Count {
		if c == m {
			return true
		}
	}
	return false
}

// RetryTracker counts the mistakes of one session. Not safe for
// concurrent use; the agent loop owns it.
type RetryTracker struct {
	p           RetryPolicy
	turn        int // retries in the current user turn
	consecutive int
	retries     int
	byKind      map[Mistake]int
	limits      int
	recent      []Mistake // the consecutive run, for the limit message
}

// Decision is the tracker's answer to a mistake.
type Decision struct {
	// Retry is true when the model should get the error and another try.
	Retry bool
	// Action is set when a limit was reached (Retry is then false).
	Action Action
	// Err explains the limit; it is a *LimitError.
	Err error
}

// LimitError says which limit was reached and by which mistakes.
type LimitError struct {
	Limit    string // "consecutive" or "per_turn"
	Max      int
	Mistakes []Mistake
	Action   Action
}

func (e *LimitError) Error() string {
	counts := map[Mistake]int{}
	for _, m := range e.Mistakes {
		counts[m]++
	}
	keys := make([]string, 0, len(counts))
	for m, n := range counts {
		keys = append(keys, fmt.Sprintf("%s x%d", m, n))
	}
	sort.Strings(keys)
	what := "consecutive mistakes"
	if e.Limit == "per_turn" {
		what = "retries in one turn"
	}
	return fmt.Sprintf("registry: %d %s (%s): %s", e.Max, what, strings.Join(keys, ", "), e.Action)
}

// Mistake records one mistake and decides whether to retry. Mistakes the
// policy does not count are still reported in Stats but never stop.
func (t *RetryTracker) Mistake(m Mistake) Decision {
	t.byKind[m]++
	if !t.p.counts(m) {
		t.retries++
		t.turn++
		return Decision{Retry: true}
	}
	t.consecutive++
	t.recent = append(t.recent, m)
	if t.p.MaxConsecutive > 0 && t.consecutive >= t.p.MaxConsecutive {
		t.limits++
		return Decision{Action: t.p.AtLimit, Err: &LimitError{Limit: "consecutive", Max: t.p.MaxConsecutive,
			Mistakes: append([]Mistake(nil), t.recent...), Action: t.p.AtLimit}}
	}
	if t.p.MaxRetriesPerTurn > 0 && t.turn >= t.p.MaxRetriesPerTurn {
		t.limits++
		return Decision{Action: t.p.AtLimit, Err: &LimitError{Limit: "per_turn", Max: t.p.MaxRetriesPerTurn,
			Mistakes: append([]Mistake(nil), t.recent...), Action: t.p.AtLimit}}
	}
	t.retries++
	t.turn++
	return Decision{Retry: true}
}

// Success records a turn without mistakes: the consecutive count resets.
func (t *RetryTracker) Success() {
	t.consecutive = 0
	t.recent = nil
}

// NewTurn starts a new user turn: the per-turn count and the consecutive
// count reset (a limit handed back to the user starts afresh).
func (t *RetryTracker) NewTurn() {
	t.turn = 0
	t.consecutive = 0
	t.recent = nil
}

// RetryStats are the counts a run reports.
type RetryStats struct {
	Retries     int             `json:"retries"`
	Mistakes    map[Mistake]int `json:"mistakes"`
	Consecutive int             `json:"consecutive"`
	LimitsHit   int             `json:"limits_hit"`
}

// Stats returns a copy of the counts so far.
func (t *RetryTracker) Stats() RetryStats {
	m := make(map[Mistake]int, len(t.byKind))
	for k, v := range t.byKind {
		m[k] = v
	}
	return RetryStats{Retries: t.retries, Mistakes: m, Consecutive: t.consecutive, LimitsHit: t.limits}
}

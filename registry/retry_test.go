package registry

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestRetryPolicy(t *testing.T) {
	type step struct {
		m      Mistake // "" = a success; "turn" = new user turn
		retry  bool
		action Action
		limit  string
	}
	tests := []struct {
		name   string
		policy RetryPolicy
		steps  []step
		stats  RetryStats
	}{
		{"three consecutive stop", DefaultRetryPolicy(), []step{
			{m: MistakeParseError, retry: true},
			{m: MistakeInvalidArguments, retry: true},
			{m: MistakeUnknownTool, action: ActionStop, limit: "consecutive"},
		}, RetryStats{Retries: 2, Consecutive: 3, LimitsHit: 1, Mistakes: map[Mistake]int{MistakeParseError: 1, MistakeInvalidArguments: 1, MistakeUnknownTool: 1}}},
		{"success resets consecutive", DefaultRetryPolicy(), []step{
			{m: MistakeParseError, retry: true},
			{m: MistakeParseError, retry: true},
			{m: ""},
			{m: MistakeNoCall, retry: true},
		}, RetryStats{Retries: 3, Consecutive: 1, Mistakes: map[Mistake]int{MistakeParseError: 2, MistakeNoCall: 1}}},
		{"per turn limit hands back", RetryPolicy{MaxRetriesPerTurn: 2, MaxConsecutive: 10, AtLimit: ActionHandBack}, []step{
			{m: MistakeParseError, retry: true},
			{m: ""},
			{m: MistakeParseError, retry: true},
			{m: MistakeParseError, action: ActionHandBack, limit: "per_turn"},
			{m: "turn"},
			{m: MistakeParseError, retry: true},
		}, RetryStats{Retries: 3, Consecutive: 1, LimitsHit: 1, Mistakes: map[Mistake]int{MistakeParseError: 4}}},
		{"uncounted mistakes never stop", RetryPolicy{MaxConsecutive: 2, Count: []Mistake{MistakeUnknownTool}}, []step{
			{m: MistakeParseError, retry: true},
			{m: MistakeParseError, retry: true},
			{m: MistakeParseError, retry: true},
			{m: MistakeUnknownTool, retry: true},
			{m: MistakeUnknownTool, action: ActionStop, limit: "consecutive"},
		}, RetryStats{Retries: 4, Consecutive: 2, LimitsHit: 1, Mistakes: map[Mistake]int{MistakeParseError: 3, MistakeUnknownTool: 2}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := tt.policy.NewTracker()
			for i, s := range tt.steps {
				switch s.m {
				case "":
					tr.Success()
					continue
				case "turn":
					tr.NewTurn()
					continue
				}
				d := tr.Mistake(s.m)
				if d.Retry != s.retry || d.Action != s.action {
					t.Fatalf("step %d: %+v", i, d)
				}
				var le *LimitError
				if s.limit != "" && (!errors.As(d.Err, &le) || le.Limit != s.limit) {
					t.Fatalf("step %d: err %v", i, d.Err)
				}
			}
			if diff := cmp.Diff(tt.stats, tr.Stats()); diff != "" {
				t.Errorf("stats (-want +got):\n%s", diff)
			}
		})
	}
	d := DefaultRetryPolicy().NewTracker()
	d.Mistake(MistakeParseError)
	d.Mistake(MistakeParseError)
	want := "registry: 3 consecutive mistakes (invalid_arguments x1, parse_error x2): stop"
	if got := d.Mistake(MistakeInvalidArguments).Err.Error(); got != want {
		t.Errorf("got %q want %q", got, want)
	}
	if m, ok := MistakeOf(KindMalformedArguments); !ok || m != MistakeInvalidArguments {
		t.Errorf("MistakeOf: %v %v", m, ok)
	}
	if _, ok := MistakeOf(KindDenied); ok {
		t.Error("denied counted as a model mistake")
	}
}

package render_test

import (
	"github.com/toolharness/toolharness/render"
	"testing"
)

// TestTurnAllocsDoNotGrow fails when what a turn allocates grows with the
// history: turn 200 may allocate at most 1.2 times what turn 10 does, and
// under 2,000 allocations, for every built-in family the benchmarks play
// and a model's own template (100 tools).
func TestTurnAllocsDoNotGrow(t *testing.T) {
	tools := benchTools(t, 100)
	for _, c := range benchFamilies(t) {
		t.Run(c.name, func(t *testing.T) {
			allocs := func(turn int) float64 {
				base := playSession(t, c, tools, turn-1)
				return leastAllocs(func() {
					if err := playTurn(base.Clone(), c, tools, turn); err != nil {
						t.Fatal(err)
					}
				}) - cloneAllocs(t, base)
			}
			at10, at200 := allocs(10), allocs(200)
			if at200 > 1.2*at10 || at200 >= 2000 {
				t.Errorf("a turn allocates %.0f times at turn 10 and %.0f at turn 200 (allowed: at most 1.2× and under 2,000)", at10, at200)
			}
		})
	}
}

// TestChatTurnAllocsDoNotGrow is TestTurnAllocsDoNotGrow in chat mode
// (render.ChatSession): the same bounds, for the same families, the own
// templates with their own tool sections.
func TestChatTurnAllocsDoNotGrow(t *testing.T) {
	tools := benchTools(t, 100)
	for _, c := range chatBenchCases(t, tools) {
		t.Run(c.name, func(t *testing.T) {
			allocs := func(turn int) float64 {
				base := playChatSession(t, c, turn-1)
				clone := leastAllocs(func() { base.Clone() })
				return leastAllocs(func() {
					if err := playChatTurn(base.Clone(), c, turn); err != nil {
						t.Fatal(err)
					}
				}) - clone
			}
			at10, at200 := allocs(10), allocs(200)
			if at200 > 1.2*at10 || at200 >= 2000 {
				t.Errorf("a chat-mode turn allocates %.0f times at turn 10 and %.0f at turn 200 (allowed: at most 1.2× and under 2,000)", at10, at200)
			}
		})
	}
}

// cloneAllocs is what cloning the session costs, taken out of the count.
func cloneAllocs(t *testing.T, s interface{ Clone() *render.Session }) float64 {
	t.Helper()
	return leastAllocs(func() { s.Clone() })
}

// leastAllocs is the fewest allocations f made per run over five
// measurements of three runs each. testing.AllocsPerRun counts every
// allocation in the process while f runs, the runtime's and the race
// detector's included, which added 10–12 to a 45-allocation turn in about
// 1 measurement in 8; the least is what f itself allocates.
func leastAllocs(f func()) float64 {
	least := testing.AllocsPerRun(3, f)
	for range 4 {
		least = min(least, testing.AllocsPerRun(3, f))
	}
	return least
}

package ollamatest

import (
	"regexp"
	"strconv"
	"testing"
	"time"
)

// Mark is a position in the server log; take one before a request and read
// what the request logged with LogSince or CacheSlots.
type Mark int

// Mark returns the current end of the server log.
func (s *Server) Mark() Mark {
	return Mark(s.log.Len())
}

// Log is the whole server log so far ("" for an external server).
func (s *Server) Log() string { return s.log.Since(0) }

// LogSince is the server log written after m.
func (s *Server) LogSince(m Mark) string { return s.log.Since(int(m)) }

// CacheSlot is one "loading cache slot" line of the runner's debug log,
// printed once per completion request by Ollama v0.6.5:
//
//	level=DEBUG source=cache.go:104 msg="loading cache slot" id=0 cache=52 prompt=15 used=13 remaining=2
//
// Used is the prompt prefix reused from the KV cache, Remaining what had to
// be evaluated. Ollama's prompt_eval_count always reports the whole
// prompt, so this line is the only way to see cache reuse.
type CacheSlot struct {
	ID        int // slot id
	Cache     int // tokens in the slot before the request
	Prompt    int // tokens in the prompt
	Used      int // cached tokens reused
	Remaining int // tokens evaluated
}

var cacheSlotRE = regexp.MustCompile(`msg="loading cache slot" id=(\d+) cache=(\d+) prompt=(\d+) used=(\d+) remaining=(\d+)`)

// CacheSlots parses the cache-slot lines logged after m, in order.
func (s *Server) CacheSlots(m Mark) []CacheSlot {
	return cacheSlots(s.LogSince(m))
}

func cacheSlots(log string) []CacheSlot {
	var slots []CacheSlot
	for _, g := range cacheSlotRE.FindAllStringSubmatch(log, -1) {
		var n [5]int
		for i := range n {
			n[i], _ = strconv.Atoi(g[i+1]) // \d+ always parses
		}
		slots = append(slots, CacheSlot{ID: n[0], Cache: n[1], Prompt: n[2], Used: n[3], Remaining: n[4]})
	}
	return slots
}

// WaitCacheSlots waits up to 10 s until at least n cache-slot lines were
// logged after m (the runner's log reaches the server's stderr through a
// pipe, a little after the response) and returns them. It fails tb when
// they do not come or the server is external.
func (s *Server) WaitCacheSlots(tb testing.TB, m Mark, n int) []CacheSlot {
	tb.Helper()
	if s.external {
		tb.Fatal("ollamatest: an external server's log cannot be read; start the server with WithOwnProcess()")
	}
	log, ok := s.log.WaitSince(int(m), 10*time.Second, func(log string) bool {
		return len(cacheSlotRE.FindAllStringIndex(log, -1)) >= n
	})
	slots := cacheSlots(log)
	if !ok {
		tb.Fatalf("ollamatest: %d \"loading cache slot\" lines logged, want %d (is OLLAMA_DEBUG=1 honoured?); log since mark:\n%s",
			len(slots), n, Tail(log, 3000))
	}
	return slots
}

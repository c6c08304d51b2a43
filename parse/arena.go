package parse

import "unsafe"

// arena holds the bytes of emitted calls: each block's Raw text, the
// arguments the fast path compacts and those argBuilder writes. Call-dense output finishes a block
// every hundred-odd bytes, and two allocations per call (the Raw string
// and the arguments) were a fifth of its cost; the arena makes them one
// allocation per arenaChunk bytes of calls.
//
// Bytes below len(buf) belong to events already emitted and are never
// written again: Raw strings point into them (unsafe.String), and
// arguments are slices of them capped at their end, so that a caller
// appending to one copies instead of running into its neighbour. Bytes
// between len and cap are scratch until kept. A parser reset drops
// nothing: the next block just goes on after the last one.
type arena struct{ buf []byte }

// arenaChunk is the size of an arena allocation; what a caller keeps of
// one call can keep at most this much more alive. 16 KB (about 70
// call-dense calls) rather than 4 KB: a quarter of the allocations made
// the hermes call-dense benchmark 9–19% faster in two interleaved A/B
// runs, for no change in its instruction count.
const arenaChunk = 16 << 10

// room returns an empty slice with at least n bytes of capacity at the
// arena's end, for a value to be appended to before keep.
func (a *arena) room(n int) []byte {
	if cap(a.buf)-len(a.buf) < n {
		a.buf = make([]byte, 0, max(n, arenaChunk))
	}
	return a.buf[len(a.buf):len(a.buf)]
}

// keep commits v, which was appended to what room returned: it is the
// arena's from now on, capped at its length. A v that outgrew the room
// (append moved it) is its own allocation already and is returned as is.
func (a *arena) keep(v []byte) []byte {
	end := len(a.buf)
	if len(v) == 0 || cap(a.buf) == end || &v[0] != &a.buf[:end+1][end] {
		return v
	}
	a.buf = a.buf[:end+len(v)]
	return a.buf[end : end+len(v) : end+len(v)]
}

// str copies s into the arena and returns it as a string.
func (a *arena) str(s []byte) string {
	if len(s) == 0 {
		return ""
	}
	// room and keep, for a copy known to fit: appended in place.
	a.room(len(s))
	end := len(a.buf)
	a.buf = append(a.buf, s...)
	return unsafe.String(&a.buf[end], len(s))
}

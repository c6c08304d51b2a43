package render

import (
	"fmt"
	"strconv"
)

// Divergence reports where a prompt stops extending the previous one.
type Divergence struct {
	// Offset is the first byte where next differs from prev (len(next)
	// when next is a strict prefix of prev, i.e. shorter).
	Offset int
	// Prev and Next hold up to ContextBytes bytes either side of Offset.
	Prev, Next string
}

// ContextBytes is how much text a Divergence shows either side of the
// diverging byte.
const ContextBytes = 60

func (d *Divergence) Error() string {
	return fmt.Sprintf("render: prompt diverges from the previous one at byte %d: previous %s, now %s",
		d.Offset, strconv.Quote(d.Prev), strconv.Quote(d.Next))
}

// Diverge compares two consecutive prompts (the previous prompt plus the
// model's raw output, and the new prompt). It returns nil when next starts
// with prev, and otherwise the first diverging byte with context, so a
// KV-cache miss is never silent.
func Diverge(prev, next string) *Divergence {
	n := min(len(prev), len(next))
	i := 0
	for i < n && prev[i] == next[i] {
		i++
	}
	if i == len(prev) {
		return nil
	}
	lo := max(0, i-ContextBytes)
	return &Divergence{Offset: i, Prev: prev[lo:min(len(prev), i+ContextBytes)], Next: next[lo:min(len(next), i+ContextBytes)]}
}

// CheckPrefix is Diverge as an error: nil when next extends prev, a
// *Divergence otherwise. (Diverge's nil *Divergence must not be stored in
// an error variable directly: it would not compare equal to nil.)
func CheckPrefix(prev, next string) error {
	if d := Diverge(prev, next); d != nil {
		return d
	}
	return nil
}

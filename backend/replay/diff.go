package replay

import (
	"fmt"
	"strconv"

	"github.com/toolharness/toolharness/chat"
)

// MismatchError says where a replayed session left the recorded one: the
// call (1-based) and the first field of its request that differs.
type MismatchError struct {
	Call int
	// Field is a path into the request ("prompt", "messages[2].content",
	// "options.temperature"), or "call" when the kind of call differs.
	Field string
	// Offset is the byte offset of the first difference in a text field,
	// -1 otherwise.
	Offset   int
	Recorded string
	Got      string
}

func (e *MismatchError) Error() string {
	where := e.Field
	if e.Offset >= 0 {
		where += " at byte " + strconv.Itoa(e.Offset)
	}
	return fmt.Sprintf("replay: call %d differs from the recording in %s: recorded %s, got %s", e.Call, where, e.Recorded, e.Got)
}

// compareRequests walks the two requests in field order (the order of
// wireRequest) and reports the first difference.
func compareRequests(call int, recorded, got *wireRequest) error {
	a, err := orderedOf(recorded)
	if err != nil {
		return err
	}
	b, err := orderedOf(got)
	if err != nil {
		return err
	}
	if field, ra, gb, off, diff := firstDiff("", a, b); diff {
		if off >= 0 {
			return textMismatch(call, field, ra.(string), gb.(string))
		}
		return &MismatchError{Call: call, Field: field, Offset: -1, Recorded: show(ra), Got: show(gb)}
	}
	return nil
}

func orderedOf(r *wireRequest) (any, error) {
	b, err := chat.Marshal(r)
	if err != nil {
		return nil, fmt.Errorf("replay: encode request: %w", err)
	}
	v, err := chat.DecodeOrdered(b)
	if err != nil {
		return nil, fmt.Errorf("replay: decode request: %w", err)
	}
	return v, nil
}

// firstDiff returns the path of the first difference between a and b, the
// two values there, and for two strings the byte offset (-1 otherwise).
func firstDiff(path string, a, b any) (string, any, any, int, bool) {
	switch av := a.(type) {
	case *chat.Object:
		bv, ok := b.(*chat.Object)
		if !ok {
			return path, a, b, -1, true
		}
		for _, m := range av.Members {
			bm, _ := bv.Get(m.Key)
			if p, x, y, off, d := firstDiff(join(path, m.Key), m.Value, bm); d {
				return p, x, y, off, d
			}
		}
		for _, m := range bv.Members {
			if _, ok := av.Get(m.Key); !ok {
				return join(path, m.Key), nil, m.Value, -1, true
			}
		}
		return "", nil, nil, 0, false
	case []any:
		bv, ok := b.([]any)
		if !ok {
			return path, a, b, -1, true
		}
		for i := 0; i < len(av) && i < len(bv); i++ {
			if p, x, y, off, d := firstDiff(fmt.Sprintf("%s[%d]", path, i), av[i], bv[i]); d {
				return p, x, y, off, d
			}
		}
		if len(av) != len(bv) {
			return path + ".length", len(av), len(bv), -1, true
		}
		return "", nil, nil, 0, false
	case string:
		bv, ok := b.(string)
		if !ok {
			return path, a, b, -1, true
		}
		if av != bv {
			return path, a, b, commonPrefix(av, bv), true
		}
		return "", nil, nil, 0, false
	}
	if show(a) != show(b) {
		return path, a, b, -1, true
	}
	return "", nil, nil, 0, false
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func commonPrefix(a, b string) int {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	return i
}

// textMismatch reports two texts around their first differing byte.
func textMismatch(call int, field, recorded, got string) *MismatchError {
	off := commonPrefix(recorded, got)
	return &MismatchError{Call: call, Field: field, Offset: off, Recorded: excerpt(recorded, off), Got: excerpt(got, off)}
}

// excerpt quotes up to 40 bytes of s from 20 before off.
func excerpt(s string, off int) string {
	start := max(off-20, 0)
	end := min(off+20, len(s))
	q := strconv.Quote(s[start:end])
	if start > 0 {
		q = "…" + q
	}
	if end < len(s) {
		q += "…"
	}
	return q
}

func quote(s string) string { return strconv.Quote(s) }

// show writes an ordered value compactly, cut at 80 bytes.
func show(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case int:
		return strconv.Itoa(x)
	}
	b, err := chat.EncodeOrdered(v)
	if err != nil {
		return fmt.Sprintf("%v", v)
	}
	s := string(b)
	if len(s) > 80 {
		s = s[:80] + "…"
	}
	return s
}

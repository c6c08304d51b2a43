package stats

import (
	"math"
	"sort"
)

// Z95 is the standard normal quantile of a two-sided 95% interval.
const Z95 = 1.959963984540054

// Rate is K successes (or failures, whatever is counted) out of N, with
// its 95% Wilson interval. A Rate with N == 0 has P, Lo and Hi zero and
// means "not measured"; reports print it as a dash.
type Rate struct {
	K  int     `json:"k"`
	N  int     `json:"n"`
	P  float64 `json:"p"`
	Lo float64 `json:"lo"`
	Hi float64 `json:"hi"`
}

// NewRate returns k of n with its Wilson interval. k is clamped to [0, n].
func NewRate(k, n int) Rate {
	if n <= 0 {
		return Rate{}
	}
	k = min(max(k, 0), n)
	lo, hi := Wilson(k, n, Z95)
	return Rate{K: k, N: n, P: float64(k) / float64(n), Lo: lo, Hi: hi}
}

// Measured reports whether the rate has a denominator.
func (r Rate) Measured() bool { return r.N > 0 }

// Wilson returns the Wilson score interval of k successes in n trials for
// the normal quantile z:
//
//	(p + z²/2n ± z·sqrt(p(1-p)/n + z²/4n²)) / (1 + z²/n)
func Wilson(k, n int, z float64) (lo, hi float64) {
	if n <= 0 {
		return 0, 0
	}
	nf := float64(n)
	p := float64(k) / nf
	z2 := z * z
	den := 1 + z2/nf
	center := (p + z2/(2*nf)) / den
	half := z * math.Sqrt(p*(1-p)/nf+z2/(4*nf*nf)) / den
	lo, hi = center-half, center+half
	// Exact bounds at the edges: floating point leaves 1e-17 crumbs.
	if k == 0 {
		lo = 0
	}
	if k == n {
		hi = 1
	}
	return max(lo, 0), min(hi, 1)
}

// Comparison is the outcome of a two-sided two-proportion z-test.
type Comparison struct {
	A, B Rate
	// Diff is B.P - A.P.
	Diff float64 `json:"diff"`
	Z    float64 `json:"z"`
	// P is the two-sided p-value.
	P float64 `json:"p"`
	// Significant is P < 0.05 with both samples large enough for the
	// normal approximation (see TwoProportion).
	Significant bool `json:"significant"`
	// Note says why a test was not made ("too few cases", "identical").
	Note string `json:"note,omitempty"`
}

// TwoProportion tests whether a and b differ, with the pooled two-sided
// z-test: z = (p_b - p_a) / sqrt(p̂(1-p̂)(1/n_a + 1/n_b)), p̂ the pooled
// rate. The normal approximation needs at least 5 expected successes and
// failures in each sample; below that the result is reported but never
// called significant, with a note.
func TwoProportion(a, b Rate) Comparison {
	c := Comparison{A: a, B: b, P: 1}
	if a.N == 0 || b.N == 0 {
		c.Note = "not measured"
		return c
	}
	c.Diff = b.P - a.P
	pooled := float64(a.K+b.K) / float64(a.N+b.N)
	se := math.Sqrt(pooled * (1 - pooled) * (1/float64(a.N) + 1/float64(b.N)))
	if se == 0 {
		c.Note = "identical (all or none in both)"
		return c
	}
	c.Z = c.Diff / se
	c.P = math.Erfc(math.Abs(c.Z) / math.Sqrt2)
	small := func(r Rate) bool {
		return pooled*float64(r.N) < 5 || (1-pooled)*float64(r.N) < 5
	}
	if small(a) || small(b) {
		c.Note = "too few cases for the normal approximation"
		return c
	}
	c.Significant = c.P < 0.05
	return c
}

// Percentile returns the q-quantile (0 ≤ q ≤ 1) of xs by linear
// interpolation between closest ranks; 0 for an empty slice. xs is not
// modified.
func Percentile(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	q = min(max(q, 0), 1)
	pos := q * float64(len(s)-1)
	i := int(pos)
	if i+1 >= len(s) {
		return s[len(s)-1]
	}
	frac := pos - float64(i)
	return s[i] + frac*(s[i+1]-s[i])
}

// Mean returns the arithmetic mean, 0 for an empty slice.
func Mean(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	var sum float64
	for _, x := range xs {
		sum += x
	}
	return sum / float64(len(xs))
}

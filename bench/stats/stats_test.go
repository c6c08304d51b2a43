package stats

import (
	"math"
	"testing"
)

func near(a, b float64) bool { return math.Abs(a-b) < 5e-4 }

// Reference values from the Wilson formula computed independently
// (R: prop.test(..., correct=FALSE)$conf.int gives the same interval).
func TestWilson(t *testing.T) {
	tests := []struct {
		k, n   int
		lo, hi float64
	}{
		{0, 10, 0, 0.2775},
		{10, 10, 0.7225, 1},
		{5, 10, 0.2366, 0.7634},
		{1, 20, 0.0089, 0.2361},
		{81, 263, 0.2553, 0.3662},
		{0, 1, 0, 0.7935},
	}
	for _, tt := range tests {
		lo, hi := Wilson(tt.k, tt.n, Z95)
		if !near(lo, tt.lo) || !near(hi, tt.hi) {
			t.Errorf("Wilson(%d,%d) = [%.4f, %.4f], want [%.4f, %.4f]", tt.k, tt.n, lo, hi, tt.lo, tt.hi)
		}
	}
	if lo, hi := Wilson(0, 0, Z95); lo != 0 || hi != 0 {
		t.Errorf("Wilson(0,0) = %v %v", lo, hi)
	}
}

func TestNewRateClampsAndContainsP(t *testing.T) {
	for n := 1; n < 40; n++ {
		for k := 0; k <= n; k++ {
			r := NewRate(k, n)
			if r.Lo > r.P || r.P > r.Hi || r.Lo < 0 || r.Hi > 1 {
				t.Fatalf("NewRate(%d,%d) = %+v: interval does not contain p", k, n, r)
			}
		}
	}
	if r := NewRate(12, 10); r.K != 10 || r.P != 1 {
		t.Errorf("NewRate(12,10) = %+v, want k clamped to 10", r)
	}
	if NewRate(3, 0).Measured() {
		t.Error("NewRate(3,0) reports measured")
	}
}

func TestTwoProportion(t *testing.T) {
	tests := []struct {
		name        string
		a, b        Rate
		z, p        float64
		significant bool
		note        bool
	}{
		// 30/100 vs 50/100: pooled 0.4, se 0.069282, z 2.8868, p 0.00389.
		{"clear difference", NewRate(30, 100), NewRate(50, 100), 2.8868, 0.0039, true, false},
		{"no difference", NewRate(40, 100), NewRate(42, 100), 0.2875, 0.7737, false, false},
		// 0/4 vs 3/4: pooled 0.375, se 0.34233, z 2.1909, p 0.0285 — but n is too small.
		{"small samples", NewRate(0, 4), NewRate(3, 4), 2.1909, 0.0285, false, true},
		{"identical extremes", NewRate(0, 50), NewRate(0, 60), 0, 1, false, true},
		{"unmeasured", Rate{}, NewRate(1, 2), 0, 1, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := TwoProportion(tt.a, tt.b)
			if !near(c.Z, tt.z) || !near(c.P, tt.p) || c.Significant != tt.significant || (c.Note != "") != tt.note {
				t.Errorf("got z=%.4f p=%.4f sig=%v note=%q; want z=%.4f p=%.4f sig=%v note=%v",
					c.Z, c.P, c.Significant, c.Note, tt.z, tt.p, tt.significant, tt.note)
			}
		})
	}
}

func TestPercentile(t *testing.T) {
	xs := []float64{5, 1, 4, 2, 3}
	tests := []struct{ q, want float64 }{{0, 1}, {0.5, 3}, {1, 5}, {0.25, 2}, {0.9, 4.6}}
	for _, tt := range tests {
		if got := Percentile(xs, tt.q); !near(got, tt.want) {
			t.Errorf("Percentile(%v) = %v, want %v", tt.q, got, tt.want)
		}
	}
	if xs[0] != 5 {
		t.Error("Percentile sorted its input in place")
	}
	if Percentile(nil, 0.5) != 0 || Mean(nil) != 0 {
		t.Error("empty input must give 0")
	}
	if Mean([]float64{1, 2, 6}) != 3 {
		t.Error("Mean wrong")
	}
}

package stats

import (
	"math"
	"testing"
)

func TestIntervals(t *testing.T) {
	t.Parallel()
	if z := Z(0.95); math.Abs(z-1.959963985) > 1e-8 {
		t.Errorf("Z(0.95) = %v", z)
	}
	cases := []struct {
		n      int64
		p      float64
		lo, hi float64
	}{
		// The median of 100: ranks 50 ± 1.96·5.
		{100, 0.5, 0.5 - 0.0979982, 0.5 + 0.0979982},
		// p95 of 400: ±1.96·√(0.95·0.05/400) = ±0.021358.
		{400, 0.95, 0.95 - 0.0213585, 0.95 + 0.0213585},
		// p95 of 10: the bound runs past the maximum.
		{10, 0.95, 0.95 - 0.1350812, 1},
		{0, 0.95, 0, 1},
	}
	for _, tc := range cases {
		lo, hi := QuantileCI(tc.n, tc.p, 0.95)
		if math.Abs(lo-tc.lo) > 1e-6 || math.Abs(hi-tc.hi) > 1e-6 {
			t.Errorf("QuantileCI(%d, %v) = %v, %v, want %v, %v", tc.n, tc.p, lo, hi, tc.lo, tc.hi)
		}
	}
}

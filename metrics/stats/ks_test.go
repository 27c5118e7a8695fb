package stats

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestKolmogorovSmirnov: D and P on samples whose answers are known: the
// same sample (D 0, P 1), two disjoint ones (D 1, P ≈ 0), scipy's
// ks_2samp figures for a textbook pair, and draws of one distribution
// against a shifted one.
func TestKolmogorovSmirnov(t *testing.T) {
	t.Parallel()
	same := []float64{1, 2, 3, 4, 5}
	if r := KolmogorovSmirnov(same, same); r.D != 0 || r.P != 1 {
		t.Errorf("same sample: %+v", r)
	}
	if r := KolmogorovSmirnov([]float64{1, 2, 3, 4, 5, 6, 7, 8}, []float64{10, 11, 12, 13, 14, 15, 16, 17}); r.D != 1 || r.P > 0.01 {
		t.Errorf("disjoint samples: %+v", r)
	}
	// scipy 1.10's ks_2samp: D 0.28, p 0.2934 (exact), 0.2959 (asymp);
	// D 0.155, p 0.01626 (exact), 0.01454 (asymp).
	a := []float64{0.61, 0.29, 0.06, 0.59, -1.73, -0.74, 0.51, -0.56, 0.39, 1.64, 0.05, -0.06, 0.64, -0.82, 0.37, 1.77, 1.09, -1.28, 2.36, 1.31, 1.05, -0.32, -0.4, 1.06, -2.47}
	b := []float64{2.2, 1.66, 1.38, 0.2, 0.36, 0, 0.96, 1.56, 0.44, 1.5, -0.3, 0.66, 2.31, 3.29, -0.27, -0.37, 0.38, 0.7, 0.52, -0.08}
	if r := KolmogorovSmirnov(a, b); math.Abs(r.D-0.28) > 1e-9 || math.Abs(r.P-0.2934) > 0.005 {
		t.Errorf("scipy's first pair: %+v, want D 0.28 and P 0.293", r)
	}
	var r1, r2 []float64
	for i := range 200 {
		r1, r2 = append(r1, float64(i)*0.01), append(r2, float64(i)*0.01+0.3)
	}
	if r := KolmogorovSmirnov(r1, r2); math.Abs(r.D-0.155) > 1e-9 || math.Abs(r.P-0.0163) > 0.003 {
		t.Errorf("scipy's second pair: %+v, want D 0.155 and P 0.016", r)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	draw := func(n int, shift float64) []float64 {
		xs := make([]float64, n)
		for i := range xs {
			xs[i] = rng.NormFloat64() + shift
		}
		return xs
	}
	if r := KolmogorovSmirnov(draw(400, 0), draw(400, 0)); r.P < 0.05 {
		t.Errorf("one distribution: %+v, want P > 0.05", r)
	}
	if r := KolmogorovSmirnov(draw(400, 0), draw(400, 0.5)); r.P > 1e-4 {
		t.Errorf("shifted by half a deviation: %+v, want P tiny", r)
	}
	if r := KolmogorovSmirnov(nil, same); r.P != 1 {
		t.Errorf("empty sample: %+v", r)
	}
}

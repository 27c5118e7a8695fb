package stats

import (
	"math"
	"slices"
)

// KS is a two-sample Kolmogorov–Smirnov test: D is the largest distance
// between the two samples' empirical CDFs, P its two-sided p-value.
type KS struct {
	D, P float64
}

// KolmogorovSmirnov tests whether a and b come from one distribution
// (AIPerf's distribution convergence, scipy's ks_2samp). P is the
// asymptotic p-value, Q_KS((√n + 0.12 + 0.11/√n)·D) with n = n_a·n_b/(n_a+n_b)
// (Stephens' small-sample correction, as Numerical Recipes gives it);
// scipy's exact p-value for small samples is close to it. Either sample
// empty gives D = 0, P = 1.
func KolmogorovSmirnov(a, b []float64) KS {
	if len(a) == 0 || len(b) == 0 {
		return KS{P: 1}
	}
	a, b = slices.Sorted(slices.Values(a)), slices.Sorted(slices.Values(b))
	na, nb := float64(len(a)), float64(len(b))
	var d float64
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		x := min(a[i], b[j])
		for i < len(a) && a[i] == x {
			i++
		}
		for j < len(b) && b[j] == x {
			j++
		}
		d = max(d, math.Abs(float64(i)/na-float64(j)/nb))
	}
	en := math.Sqrt(na * nb / (na + nb))
	return KS{D: d, P: kolmogorovQ((en + 0.12 + 0.11/en) * d)}
}

// kolmogorovQ is the Kolmogorov distribution's survival function,
// 2·Σ (−1)^(k−1)·exp(−2k²λ²), summed until its terms vanish.
func kolmogorovQ(lambda float64) float64 {
	if lambda < 0.2 {
		return 1
	}
	sum, sign := 0.0, 1.0
	for k := 1; k <= 100; k++ {
		term := sign * math.Exp(-2*float64(k*k)*lambda*lambda)
		sum += term
		if math.Abs(term) < 1e-12*math.Abs(sum) {
			break
		}
		sign = -sign
	}
	return min(max(2*sum, 0), 1)
}

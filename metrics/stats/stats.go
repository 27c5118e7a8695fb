// Package stats holds the statistics `surge compare` judges runs with: the
// Mann–Whitney U rank test on two samples, and seeded bootstrap confidence
// intervals for the difference of a quantile (or the mean) between them.
// Every random draw comes from a caller's seed, so a result can be
// reproduced exactly.
package stats

import (
	"math"
	"slices"
)

// Quantile returns the p-quantile of sorted (ascending) with linear
// interpolation between closest ranks: numpy's default, and AIPerf's.
// It is NaN for an empty sample.
func Quantile(sorted []float64, p float64) float64 {
	n := len(sorted)
	if n == 0 {
		return math.NaN()
	}
	h := p * float64(n-1)
	lo := int(math.Floor(h))
	if lo >= n-1 {
		return sorted[n-1]
	}
	if lo < 0 {
		return sorted[0]
	}
	return sorted[lo] + (h-float64(lo))*(sorted[lo+1]-sorted[lo])
}

// MeanVar returns the mean and the sample variance (n−1) of xs.
func MeanVar(xs []float64) (mean, variance float64) {
	n := float64(len(xs))
	for _, x := range xs {
		mean += x
	}
	mean /= n
	for _, x := range xs {
		variance += (x - mean) * (x - mean)
	}
	if n > 1 {
		variance /= n - 1
	}
	return mean, variance
}

// Sorted returns a sorted copy of xs.
func Sorted(xs []float64) []float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s
}

// normalSF is the standard normal's survival function, P(Z > z).
func normalSF(z float64) float64 { return 0.5 * math.Erfc(z/math.Sqrt2) }

// normalQuantile is the standard normal's inverse CDF at p in (0, 1).
func normalQuantile(p float64) float64 { return -math.Sqrt2 * math.Erfcinv(2*p) }

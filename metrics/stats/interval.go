package stats

import "math"

// Z is the standard normal quantile of a two-sided interval at level
// (1.96 for 0.95).
func Z(level float64) float64 { return normalQuantile((1 + level) / 2) }

// QuantileCI returns the probabilities whose quantiles bound a
// distribution-free confidence interval for the p-quantile of a sample of
// n: the rank of the sample's p-quantile is binomial (n, p), so the
// interval runs from the quantile at p − z·√(p(1−p)/n) to the one at
// p + z·√(p(1−p)/n) (the normal approximation; clamped to [0, 1], where
// the sample's minimum or maximum is the bound). Read the bounds off any
// quantile function of the sample (a t-digest's, say). n < 1 gives [0, 1].
func QuantileCI(n int64, p, level float64) (lo, hi float64) {
	if n < 1 {
		return 0, 1
	}
	h := Z(level) * math.Sqrt(p*(1-p)/float64(n))
	return max(0, p-h), min(1, p+h)
}

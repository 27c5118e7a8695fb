package peers

import (
	"math"
	"slices"
)

// Sample is a list of values with the statistics the peers' files define
// on it, as numpy computes them: np.mean, np.median, np.std (population:
// divided by n) and np.percentile (linear interpolation between the two
// nearest ranks). An empty sample's every statistic is 0, as vLLM's
// `np.mean(xs or 0)` makes it.
type Sample struct {
	sorted []float64
	sum    float64
}

// NewSample holds xs (copied and sorted).
func NewSample(xs []float64) Sample {
	s := Sample{sorted: slices.Clone(xs)}
	slices.Sort(s.sorted)
	for _, x := range s.sorted {
		s.sum += x
	}
	return s
}

// Min and Max are the extremes (0 when empty).
func (s Sample) Min() float64 {
	if len(s.sorted) == 0 {
		return 0
	}
	return s.sorted[0]
}

// Max is the largest value (0 when empty).
func (s Sample) Max() float64 {
	if len(s.sorted) == 0 {
		return 0
	}
	return s.sorted[len(s.sorted)-1]
}

// Mean is np.mean.
func (s Sample) Mean() float64 {
	if len(s.sorted) == 0 {
		return 0
	}
	return s.sum / float64(len(s.sorted))
}

// Median is np.median.
func (s Sample) Median() float64 { return s.Percentile(50) }

// Std is np.std: the population standard deviation.
func (s Sample) Std() float64 {
	return math.Sqrt(s.Variance())
}

// Variance is np.var: the population variance.
func (s Sample) Variance() float64 {
	n := len(s.sorted)
	if n == 0 {
		return 0
	}
	m := s.Mean()
	var ss float64
	for _, x := range s.sorted {
		ss += (x - m) * (x - m)
	}
	return ss / float64(n)
}

// Percentile is np.percentile(xs, p) with numpy's default ("linear")
// method: the value at rank p/100·(n−1), interpolated between the two
// nearest ranks.
func (s Sample) Percentile(p float64) float64 {
	n := len(s.sorted)
	if n == 0 {
		return 0
	}
	rank := p / 100 * float64(n-1)
	lo := int(math.Floor(rank))
	if lo >= n-1 {
		return s.sorted[n-1]
	}
	if lo < 0 {
		return s.sorted[0]
	}
	frac := rank - float64(lo)
	return s.sorted[lo] + frac*(s.sorted[lo+1]-s.sorted[lo])
}

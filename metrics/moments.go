package metrics

import "math"

// moments keeps a distribution's exact count, sum, mean, variance, min and
// max. It uses Welford's update and Chan et al.'s merge, so shards merge
// exactly.
type moments struct {
	n        int64
	mean, m2 float64
	min, max float64
	sum      float64
}

func newMoments() moments { return moments{min: math.Inf(1), max: math.Inf(-1)} }

func (m *moments) add(v float64) {
	m.n++
	m.sum += v
	d := v - m.mean
	m.mean += d / float64(m.n)
	m.m2 += d * (v - m.mean)
	m.min = math.Min(m.min, v)
	m.max = math.Max(m.max, v)
}

func (m *moments) merge(o *moments) {
	if o.n == 0 {
		return
	}
	n := m.n + o.n
	m.sum += o.sum
	d := o.mean - m.mean
	m.m2 += o.m2 + d*d*float64(m.n)*float64(o.n)/float64(n)
	m.mean += d * float64(o.n) / float64(n)
	m.n = n
	m.min = math.Min(m.min, o.min)
	m.max = math.Max(m.max, o.max)
}

// std is the population standard deviation.
func (m *moments) std() float64 { return math.Sqrt(m.m2 / float64(m.n)) }

package schedule

import (
	"math"
	"sort"
	"time"
)

// RatePoint is one point of a request-rate series: from At on the rate
// moves linearly towards the next point's (AIPerf's --request-rate-series
// points, time_s and qps).
type RatePoint struct {
	At  time.Duration
	QPS float64
}

// rateSeries is a piecewise-linear rate r(t) through its points (the
// first point's rate before it, the last one's after it) and its integral
// Λ at each point.
type rateSeries struct {
	t, q, lam []float64
}

// Series builds the schedule of an arrival pattern (as Arrival) whose rate
// follows points, piecewise linearly, then holds at the last point's rate
// (a last rate of 0 ends the schedule there). Arrival times come from
// time-rescaling the pattern's unit-rate process through the inverse of the
// integrated rate, so a Poisson series is a non-homogeneous Poisson
// process with that rate. Bad input is a *FieldError naming "series",
// "smoothness" or "pattern".
func Series(patternName string, points []RatePoint, smoothness float64, seed uint64) (Schedule, error) {
	rs, err := newRateSeries(points)
	if err != nil {
		return nil, err
	}
	s, err := Arrival(patternName, 1, smoothness, seed)
	if err != nil {
		return nil, err
	}
	a := s.(*arrival)
	a.series = rs
	return a, nil
}

// newRateSeries checks points (times ≥ 0, strictly increasing; rates
// finite ≥ 0, some > 0) and integrates them.
func newRateSeries(points []RatePoint) (*rateSeries, error) {
	if len(points) == 0 {
		return nil, fieldErrorf("series", "has no points")
	}
	rs := &rateSeries{}
	positive := false
	for i, p := range points {
		switch {
		case p.At < 0:
			return nil, fieldErrorf("series", "point %d: time must be ≥ 0, got %s", i, seconds(p.At))
		case i > 0 && p.At <= points[i-1].At:
			return nil, fieldErrorf("series", "point %d: times must increase (%s after %s)", i, seconds(p.At), seconds(points[i-1].At))
		case !(p.QPS >= 0) || math.IsInf(p.QPS, 0):
			return nil, fieldErrorf("series", "point %d: rate must be a finite number ≥ 0, got %v", i, p.QPS)
		}
		positive = positive || p.QPS > 0
		if i == 0 && p.At > 0 {
			rs.t, rs.q = append(rs.t, 0), append(rs.q, p.QPS) // the first rate until its time
		}
		rs.t, rs.q = append(rs.t, p.At.Seconds()), append(rs.q, p.QPS)
	}
	if !positive {
		return nil, fieldErrorf("series", "every rate is 0: nothing would be sent")
	}
	rs.lam = make([]float64, len(rs.t))
	for i := 1; i < len(rs.t); i++ {
		rs.lam[i] = rs.lam[i-1] + (rs.q[i-1]+rs.q[i])*(rs.t[i]-rs.t[i-1])/2
	}
	return rs, nil
}

// inv returns the t with Λ(t) = l, or false past the series' end (a last
// rate of 0).
func (rs *rateSeries) inv(l float64) (float64, bool) {
	last := len(rs.t) - 1
	if l >= rs.lam[last] {
		if rs.q[last] == 0 {
			return 0, false
		}
		return rs.t[last] + (l-rs.lam[last])/rs.q[last], true
	}
	// The segment whose integral passes l.
	i := sort.Search(last, func(i int) bool { return rs.lam[i+1] > l })
	dt, q0 := rs.t[i+1]-rs.t[i], rs.q[i]
	slope := (rs.q[i+1] - q0) / dt
	rest := l - rs.lam[i]
	// Root of slope/2·x² + q0·x − rest = 0, stable as slope → 0.
	den := q0 + math.Sqrt(max(q0*q0+2*slope*rest, 0))
	if den == 0 {
		return rs.t[i], true
	}
	return rs.t[i] + 2*rest/den, true
}

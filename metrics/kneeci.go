package metrics

import (
	"fmt"
	"math"
	"slices"

	"github.com/surgebench/surge/metrics/stats"
)

// KneeLevel is the confidence level of the stage intervals the knee is
// judged on.
const KneeLevel = 0.95

// maxSuggestFactor bounds the requests per stage a verdict suggests, as a
// multiple of the stage's own.
const maxSuggestFactor = 20

// Resolutions of the knee's two comparisons: the requests per stage a
// verdict suggests are those that bring each unsettled interval to within
// this much of its value. A quarter of the 10% throughput gain, and a
// tenth of the p95 latency bound.
const (
	throughputResolution = (kneeGain - 1) / 4
	latencyResolution    = 0.10
)

// stageIntervals fills a stage's confidence intervals from the exact
// values of its requests (e; none without them: a stage of a live
// snapshot, or of a state read back from JSON). The p95s' are
// distribution-free order-statistic intervals (stats.QuantileInterval).
// The throughput's comes from batch means over the stage's rate series
// (rateCIs): batches at least a request latency long, grown while their
// means stay correlated, so drift inside the stage widens it where an
// interval that treats requests as independent would not.
func stageIntervals(s *StageSummary, a *aggregate, e *rowSet) {
	if e == nil || len(e.rows) < 2 {
		return
	}
	for _, x := range []struct {
		tag Tag
		out **stats.Interval
	}{{TTFT, &s.TTFTP95CI}, {RequestLatency, &s.LatencyP95CI}} {
		if xs := e.column(x.tag); len(xs) >= 2 {
			iv := stats.QuantileInterval(xs, 0.95, KneeLevel)
			*x.out = &iv
		}
	}
	if !(s.OutputTokenThroughput > 0) {
		return
	}
	for _, r := range rateCIs(e, a.okStart, a.okEnd, map[Tag]float64{OutputTokenThroughput: s.OutputTokenThroughput}, KneeLevel) {
		if r.Metric == OutputTokenThroughput {
			s.OutputTokenThroughputCI = &stats.Interval{Lo: r.Lo, Hi: r.Hi}
		}
	}
}

// StageEstimate is a stage's point (Knee's input) with the confidence
// intervals of its p95 latency and its throughput, and its request count.
type StageEstimate struct {
	StagePoint
	P95CI, ThroughputCI stats.Interval
	Requests            int64
}

// KneeVerdict is what a sweep's intervals allow to say about its knee.
type KneeVerdict struct {
	// Knee and Operating are as Knee's, −1 when there is none or the
	// verdict is inconclusive.
	Knee, Operating int
	// Inconclusive is set when a stage could neither be ruled a knee nor
	// ruled out at the intervals' level: At is that stage, and Suggested
	// the requests per stage likely to settle it.
	Inconclusive bool
	At           int
	Suggested    int64
}

// truth is a comparison's answer at the intervals' level.
type truth int

const (
	no truth = iota
	yes
	unsure
)

// above judges x > k·y.
func above(x, y stats.Interval, k float64) truth {
	switch {
	case x.Lo > k*y.Hi:
		return yes
	case x.Hi <= k*y.Lo:
		return no
	}
	return unsure
}

// KneeSure finds the knee as Knee does, but names it only where the
// intervals settle every comparison up to it: stage i is the knee when its
// p95 is surely above factor × the first stage's and its throughput surely
// below 1.10 × the previous stage's, and every stage before it surely
// fails one of the two. When a stage is neither surely a knee nor surely
// not, the verdict is inconclusive. Two runs whose intervals cover the
// true values therefore never name two different knees.
func KneeSure(points []StageEstimate, factor float64) KneeVerdict {
	if !(factor > 0) {
		factor = DefaultKneeFactor
	}
	v := KneeVerdict{Knee: -1, Operating: -1, At: -1}
	if len(points) < 2 {
		return v
	}
	first := points[0]
	for i := 1; i < len(points); i++ {
		p, prev := points[i], points[i-1]
		lat := above(p.P95CI, first.P95CI, factor)
		// Throughput[i] < 1.10 × Throughput[i−1] is Throughput[i−1] > Throughput[i]/1.10.
		flat := above(prev.ThroughputCI, p.ThroughputCI, 1/kneeGain)
		switch {
		case lat == yes && flat == yes:
			v.Knee, v.Operating = i, i-1
			return v
		case lat == no || flat == no:
			continue
		}
		v.Inconclusive, v.At = true, i
		n := max(p.Requests, prev.Requests, first.Requests, 1)
		// Half-widths shrink as 1/√n: enough requests to bring the
		// intervals of each unsettled comparison to its resolution. Not to
		// the gap between them: the gap of a stage at the threshold is
		// near zero and noisy, and the requests it asks for would differ
		// from run to run by orders of magnitude. The half-width is the
		// median over the sweep's stages that bound theirs (estimated
		// half-widths are noisy, and squared the noise doubles); a p95
		// bounded in no stage asks for the requests that bound it
		// (stats.MinBounded: 72 at 95%), with a quarter more. At least
		// double: less would not be worth another sweep.
		need := 2.0
		if lat == unsure {
			h, bounded := medianHalf(points, func(e StageEstimate) float64 { return relHalfOf(e.P95CI, e.P95TTFTms) })
			if !bounded {
				need = max(need, 1.25*float64(stats.MinBounded(0.95, KneeLevel))/float64(n))
			}
			need = max(need, sq(h/latencyResolution))
		}
		if flat == unsure {
			h, bounded := medianHalf(points, func(e StageEstimate) float64 { return relHalfOf(e.ThroughputCI, e.Throughput) })
			if !bounded {
				need = maxSuggestFactor // no stage lasted two batches of a request's length
			}
			need = max(need, sq(h/throughputResolution))
		}
		v.Suggested = roundUp2(float64(n) * min(need, maxSuggestFactor))
		return v
	}
	return v
}

func sq(x float64) float64 { return x * x }

// medianHalf is the median of a relative half-width over the stages
// whose interval is bounded (the upper of the middle two of an even
// count); bounded is false when some stage's is not (0 when none is).
func medianHalf(points []StageEstimate, half func(StageEstimate) float64) (h float64, bounded bool) {
	var hs []float64
	for _, p := range points {
		if v := half(p); !math.IsInf(v, 0) && !math.IsNaN(v) {
			hs = append(hs, v)
		}
	}
	if len(hs) == 0 {
		return 0, false
	}
	slices.Sort(hs)
	return hs[len(hs)/2], len(hs) == len(points)
}

// relHalfOf is an interval's half-width relative to its point (+Inf when
// unbounded or the point is 0).
func relHalfOf(iv stats.Interval, v float64) float64 { return relHalf(v, iv.Lo, iv.Hi) }

// roundUp2 rounds x up to two significant digits (1,234 → 1,300): a
// suggestion is an estimate, and two runs should suggest the same.
func roundUp2(x float64) int64 {
	if !(x > 0) || math.IsInf(x, 0) {
		return 0
	}
	scale := math.Pow(10, math.Floor(math.Log10(x))-1)
	return int64(math.Ceil(math.Ceil(x/scale-1e-9)*scale - 1e-9))
}

// String words the verdict for the console.
func (v KneeVerdict) String() string {
	switch {
	case v.Inconclusive:
		return fmt.Sprintf("inconclusive: run more requests per stage (%d suggested)", v.Suggested)
	case v.Knee >= 0:
		return fmt.Sprintf("knee at stage %d, operating point stage %d", v.Knee, v.Operating)
	}
	return "no knee"
}

package metrics

import (
	"fmt"
	"math"

	"github.com/surgebench/surge/metrics/stats"
)

// KneeLevel is the confidence level of the stage intervals the knee is
// judged on.
const KneeLevel = 0.95

// maxSuggestFactor bounds the requests per stage a verdict suggests, as a
// multiple of the stage's own: a stage right at a threshold would
// otherwise ask for ever more.
const maxSuggestFactor = 20

// stageIntervals fills a stage's confidence intervals from its records'
// aggregate. The p95s' are distribution-free (stats.QuantileCI read off
// the digest). The throughput's half-width, relative to it, is
//
//	z·(cv(OSL) + cv(latency))/√n  +  mean latency / stage duration
//
// The first term is the per-request variation of tokens over time (their
// correlation bounded by adding the two coefficients of variation); the
// second the stage's ends: the first and last requests run with fewer
// than the full load in flight, so a stage a few latencies long measures
// its throughput only to about one latency in its length.
func stageIntervals(s *StageSummary, a *aggregate) {
	for _, x := range []struct {
		tag Tag
		out **stats.Interval
	}{{TTFT, &s.TTFTP95CI}, {RequestLatency, &s.LatencyP95CI}} {
		d := a.dists[x.tag]
		if d == nil || d.n < 2 {
			continue
		}
		lo, hi := stats.QuantileCI(d.n, 0.95, KneeLevel)
		td := d.digest()
		*x.out = &stats.Interval{Lo: td.Quantile(lo), Hi: td.Quantile(hi)}
	}
	osl, lat := a.dists[OSL], a.dists[RequestLatency]
	if osl == nil || lat == nil || osl.n < 2 || lat.n < 2 || s.DurationSec <= 0 || !(s.OutputTokenThroughput > 0) {
		return
	}
	iv := ThroughputCI(s.OutputTokenThroughput, s.DurationSec, min(osl.n, lat.n), osl.mean, osl.std(), lat.mean, lat.std())
	s.OutputTokenThroughputCI = &iv
}

// ThroughputCI is the interval at KneeLevel of a throughput t measured
// over durSec by n requests whose output lengths and latencies (ms) have
// the given means and standard deviations: stageIntervals' for a stage,
// and the history's for a whole run read back from its records.
func ThroughputCI(t, durSec float64, n int64, oslMean, oslStd, latMeanMs, latStdMs float64) stats.Interval {
	cv := func(mean, std float64) float64 {
		if mean <= 0 {
			return 0
		}
		return std / mean
	}
	rel := stats.Z(KneeLevel)*(cv(oslMean, oslStd)+cv(latMeanMs, latStdMs))/math.Sqrt(float64(n)) + latMeanMs/1000/durSec
	return stats.Interval{Lo: max(0, t*(1-rel)), Hi: t * (1 + rel)}
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

// judged is a comparison of two intervals, with what separates them: the
// gap between the point estimates and the two half-widths together.
type judged struct {
	truth     truth
	gap, half float64
}

// above judges x > k·y.
func above(x, y stats.Interval, px, py, k float64) judged {
	j := judged{truth: unsure, gap: math.Abs(px - k*py), half: (x.Hi-x.Lo)/2 + k*(y.Hi-y.Lo)/2}
	switch {
	case x.Lo > k*y.Hi:
		j.truth = yes
	case x.Hi <= k*y.Lo:
		j.truth = no
	}
	return j
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
		lat := above(p.P95CI, first.P95CI, p.P95TTFTms, first.P95TTFTms, factor)
		// Throughput[i] < 1.10 × Throughput[i−1] is Throughput[i−1] > Throughput[i]/1.10.
		flat := above(prev.ThroughputCI, p.ThroughputCI, prev.Throughput, p.Throughput, 1/kneeGain)
		switch {
		case lat.truth == yes && flat.truth == yes:
			v.Knee, v.Operating = i, i-1
			return v
		case lat.truth == no || flat.truth == no:
			continue
		}
		v.Inconclusive, v.At = true, i
		n := max(p.Requests, prev.Requests, first.Requests, 1)
		// Half-widths shrink as 1/√n: enough requests to bring the
		// widest unsettled comparison's under its gap.
		need := 2.0
		for _, j := range []judged{lat, flat} {
			if j.truth != unsure {
				continue
			}
			if j.gap <= 0 {
				need = maxSuggestFactor
				continue
			}
			need = max(need, 1.2*(j.half/j.gap)*(j.half/j.gap))
		}
		v.Suggested = int64(math.Ceil(float64(n) * min(need, maxSuggestFactor)))
		return v
	}
	return v
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

package metrics

// DefaultKneeFactor is the knee factor used when none is given: the knee is where p95 TTFT
// has more than doubled over the first stage.
const DefaultKneeFactor = 2

// kneeGain is the throughput gain over the previous stage below which a
// stage counts as saturated.
const kneeGain = 1.10

// StagePoint is what knee detection needs from one stage of a sweep.
type StagePoint struct {
	// Value is the stage's setting (concurrency or request rate).
	Value float64
	// P95TTFTms is the stage's p95 time to first token in milliseconds.
	P95TTFTms float64
	// Throughput is the stage's output throughput (any unit, the same for
	// every stage: requests/s or tokens/s).
	Throughput float64
}

// Knee finds the saturation point of a sweep. The knee is the first stage i
// ≥ 1 where both
//
//	P95TTFTms[i] > factor × P95TTFTms[0]      (latency has blown up), and
//	Throughput[i] < 1.10 × Throughput[i−1]    (the step bought < 10% more)
//
// Throughput is compared with the previous stage, not the first: against the
// first stage almost every later stage of a working server gains more than
// 10%, so the test would never fire. operating is the recommended operating
// point, the stage before the knee (the last one that still paid off).
// Both are −1 when there is no knee (the sweep never saturated) or fewer
// than two stages. A factor ≤ 0 or NaN means DefaultKneeFactor.
func Knee(points []StagePoint, factor float64) (knee, operating int) {
	if !(factor > 0) {
		factor = DefaultKneeFactor
	}
	if len(points) < 2 {
		return -1, -1
	}
	limit := factor * points[0].P95TTFTms
	for i := 1; i < len(points); i++ {
		if points[i].P95TTFTms > limit && points[i].Throughput < kneeGain*points[i-1].Throughput {
			return i, i - 1
		}
	}
	return -1, -1
}

// MarkKnee finds the knee of a sweep's stages (by p95 TTFT and output
// throughput; a non-streamed sweep, which has no TTFT, by p95 request
// latency) and records it in s: Knee and Operating, and the knee stage's
// Knee mark. When every stage has its intervals (a run's own stages do)
// the knee is named only where they settle it (KneeSure), and
// KneeVerdict says when they did not; stages read back without intervals
// are judged on their points (Knee). It reports whether there is a knee.
func (s *Summary) MarkKnee(factor float64) bool {
	s.KneeVerdict = KneeVerdict{Knee: -1, Operating: -1, At: -1}
	if len(s.Stages) < 2 {
		return false
	}
	pts := make([]StageEstimate, len(s.Stages))
	sure := true
	for i, st := range s.Stages {
		pts[i] = StageEstimate{StagePoint: StagePoint{Value: st.Value, P95TTFTms: st.TTFT.P95, Throughput: st.OutputTokenThroughput},
			Requests: st.RequestCount}
		ci := st.TTFTP95CI
		if st.TTFT.Count == 0 {
			pts[i].P95TTFTms, ci = st.Latency.P95, st.LatencyP95CI
		}
		if ci == nil || st.OutputTokenThroughputCI == nil {
			sure = false
			continue
		}
		pts[i].P95CI, pts[i].ThroughputCI = *ci, *st.OutputTokenThroughputCI
	}
	if sure {
		s.KneeVerdict = KneeSure(pts, factor)
		s.Knee, s.Operating = s.KneeVerdict.Knee, s.KneeVerdict.Operating
	} else {
		points := make([]StagePoint, len(pts))
		for i := range pts {
			points[i] = pts[i].StagePoint
		}
		s.Knee, s.Operating = Knee(points, factor)
		s.KneeVerdict.Knee, s.KneeVerdict.Operating = s.Knee, s.Operating
	}
	if s.Knee < 0 {
		return false
	}
	s.Stages[s.Knee].Knee = true
	return true
}

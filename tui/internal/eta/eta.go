// Package eta estimates the time a run has left from its plan (requests
// or duration per stage) and the rates measured so far. A sweep's stages
// run at different speeds, so the remaining stages are predicted one by
// one: under a concurrency the per-request latency is fitted against the
// concurrency (Little's law gives the rate), under a request rate the
// achieved share of the target is carried forward.
package eta

import (
	"math"
	"time"
)

// Stage is one planned stage: its target (a concurrency or a request
// rate) and what ends it (0: not bounded by that).
type Stage struct {
	Value    float64
	Requests int
	Duration time.Duration
}

// Done is a finished stage as measured: requests completed and seconds.
type Done struct {
	Requests int64
	Seconds  float64
}

// Progress is where the run is now.
type Progress struct {
	Elapsed  time.Duration
	Finished int64
	// Stage is the index of the stage in progress; Profile is false while
	// warm-up requests run (they are not in Finished).
	Stage   int
	Profile bool
}

// Mode names how the stage values load the server.
const (
	Concurrency = "concurrency"
	RequestRate = "request_rate"
)

// Tracker follows a run's stages. It is a plain value: Observe returns
// the updated copy.
type Tracker struct {
	mode   string
	plan   []Stage
	starts []mark
}

// mark is where a stage began (the run's elapsed time and finished count
// at the first snapshot that showed it) and where its first request had
// finished: a closed loop completes nothing for one latency, so the rate
// is measured from there.
type mark struct {
	at, firstAt, lastAt                   time.Duration
	finished, firstFinished, lastFinished int64
	ok, first                             bool
}

// New returns a tracker for plan, whose values load the server as mode.
func New(mode string, plan []Stage) Tracker {
	return Tracker{mode: mode, plan: plan, starts: make([]mark, len(plan))}
}

// Observe notes the start of a stage the first time p shows it.
func (t Tracker) Observe(p Progress) Tracker {
	if !p.Profile || p.Stage < 0 || p.Stage >= len(t.plan) {
		return t
	}
	m := t.starts[p.Stage]
	switch {
	case !m.ok && p.Stage == 0 && p.Finished > 0:
		// Joined a run under way: its first stage began at the start.
		m = mark{ok: true}
	case !m.ok:
		m = mark{at: p.Elapsed, finished: p.Finished, ok: true}
	case !m.first && p.Finished > m.finished:
		m.firstAt, m.firstFinished, m.first = p.Elapsed, p.Finished, true
		m.lastAt, m.lastFinished = m.firstAt, m.firstFinished
	case m.first && p.Finished > m.lastFinished:
		m.lastAt, m.lastFinished = p.Elapsed, p.Finished
	default:
		return t
	}
	starts := append([]mark(nil), t.starts...)
	starts[p.Stage] = m
	t.starts = starts
	return t
}

// Starts is the elapsed time at which each stage was first seen running
// (-1: not yet), for the throughput chart's stage boundaries.
func (t Tracker) Starts() []time.Duration {
	out := make([]time.Duration, len(t.starts))
	for i, m := range t.starts {
		out[i] = -1
		if m.ok {
			out[i] = m.at
		}
	}
	return out
}

// point is one measured stage: its target value, achieved rate and, under
// a concurrency, the latency of one wave of requests.
type point struct{ value, rate, lat float64 }

// Left estimates the time left: the rest of the current stage at its
// measured rate (blended with the prediction until it has settled), then
// each later stage at its predicted rate. ok is false while there is
// nothing to go on (no request finished and no time bound).
func (t Tracker) Left(p Progress, done []Done) (time.Duration, bool) {
	if len(t.plan) == 0 || !p.Profile {
		return 0, false
	}
	cur := min(max(p.Stage, 0), len(t.plan)-1)
	var pts []point
	for i, d := range done {
		if i < cur && i < len(t.plan) && d.Requests > 0 && d.Seconds > 0 {
			st := t.plan[i]
			pt := point{value: st.Value, rate: float64(d.Requests) / d.Seconds}
			pt.lat = st.Value / pt.rate
			if c := math.Floor(st.Value); c >= 1 {
				pt.lat = d.Seconds / math.Ceil(float64(d.Requests)/c)
			}
			pts = append(pts, pt)
		}
	}
	prior := pts
	in, measured, weight := t.current(p, cur)
	rate := measured
	if len(prior) > 0 {
		rate = weight*measured + (1-weight)*t.predict(prior, t.plan[cur].Value)
	}
	if rate > 0 && (len(prior) == 0 || weight >= 0.3) {
		pts = append(pts, point{value: t.plan[cur].Value, rate: rate, lat: t.plan[cur].Value / rate})
	}
	total, ok := t.stageTime(t.plan[cur], rate)
	if !ok {
		return 0, false
	}
	left := max(0, total-in.Seconds())
	for _, st := range t.plan[cur+1:] {
		var r float64
		if len(pts) > 0 {
			r = t.predict(pts, st.Value)
		}
		d, ok := t.stageTime(st, r)
		if !ok {
			return 0, false
		}
		left += d
	}
	return time.Duration(left * float64(time.Second)), true
}

// current measures the stage in progress: the time since it began, its
// rate and how far to trust that rate (0–1). The rate is counted from the
// first request's end: a closed loop completes nothing for one latency,
// then a wave at a time, so it is trusted only once a latency has passed
// since that first end, more the more requests it rests on.
func (t Tracker) current(p Progress, cur int) (in time.Duration, rate, weight float64) {
	m := t.starts[cur]
	in, n := p.Elapsed, p.Finished
	if m.ok {
		in, n = p.Elapsed-m.at, p.Finished-m.finished
	}
	in, n = max(in, 0), max(n, 0)
	if n == 0 || in <= 0 {
		return in, 0, 0
	}
	if !m.first {
		return in, float64(n) / in.Seconds(), 0
	}
	since, first := p.Elapsed-m.firstAt, m.firstAt-m.at
	steady, span := m.lastFinished-m.firstFinished, m.lastAt-m.firstAt
	if steady <= 0 || span <= 0 || since < first {
		// Only the first wave: it took about one latency.
		return in, float64(n) / max(first, time.Millisecond).Seconds(), 0
	}
	// Between the first and the latest end; a long wait since then caps
	// it, as the next end has not come yet.
	rate = min(float64(steady)/span.Seconds(), float64(steady+1)/since.Seconds())
	return in, rate, float64(steady) / float64(steady+8)
}

// stageTime is how long st takes at rate requests/s: the first of its
// bounds to be reached. ok is false when neither can be judged. Under a
// concurrency c the requests go in waves of c, each one latency (c/rate)
// long, and a partial last wave takes as long as a full one.
func (t Tracker) stageTime(st Stage, rate float64) (float64, bool) {
	d := math.Inf(1)
	if st.Requests > 0 && rate > 0 {
		d = float64(st.Requests) / rate
		if c := st.Value; t.mode == Concurrency && c >= 1 {
			d = math.Ceil(float64(st.Requests)/math.Floor(c)) * math.Floor(c) / rate
		}
	}
	if st.Duration > 0 {
		d = min(d, st.Duration.Seconds())
	}
	return d, !math.IsInf(d, 0)
}

// predict is the rate expected at value v from the measured points.
func (t Tracker) predict(pts []point, v float64) float64 {
	last := pts[len(pts)-1]
	switch t.mode {
	case Concurrency:
		// Little's law: rate = concurrency / latency, with the latency
		// fitted as a line in the concurrency (flat with one point). A
		// rising latency is what saturation looks like.
		lat := linearFit(pts, func(p point) float64 { return p.lat })
		if l := lat(v); l > 0 && v > 0 {
			return v / l
		}
	case RequestRate:
		// The share of the target achieved last carries over (1 below
		// saturation), never above the target.
		if last.value > 0 && v > 0 {
			return v * min(1, last.rate/last.value)
		}
	}
	return last.rate
}

// linearFit fits y(value) = a + b·value by least squares, b at least 0
// (latency does not fall with load) and never below the least measured;
// with one distinct value it is flat.
func linearFit(pts []point, y func(point) float64) func(float64) float64 {
	var sx, sy, sxx, sxy float64
	n, lo := float64(len(pts)), math.Inf(1)
	for _, p := range pts {
		v := y(p)
		lo = min(lo, v)
		sx += p.value
		sy += v
		sxx += p.value * p.value
		sxy += p.value * v
	}
	mean := sy / n
	den := n*sxx - sx*sx
	if den <= 1e-12*n*sxx {
		return func(float64) float64 { return mean }
	}
	b := (n*sxy - sx*sy) / den
	if b <= 0 {
		return func(float64) float64 { return mean }
	}
	a := (sy - b*sx) / n
	return func(v float64) float64 { return max(a+b*v, lo) }
}

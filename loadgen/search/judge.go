package search

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/surgebench/surge/metrics"
	"github.com/surgebench/surge/metrics/stats"
)

// Sample is one finished request of a probe, reduced to what the judge
// needs.
type Sample struct {
	// EndNs is when the request finished (run clock).
	EndNs int64
	// Failed is set for an error record; Cancelled for one the client cut
	// off (also Failed). Err is a failed one's error (for the reason a
	// probe whose every request failed gives).
	Failed, Cancelled bool
	Err               metrics.Error
	// Values holds, per objective of the Judging, the request's value of
	// that metric in display units (NaN when it has none). Objectives on
	// the requests as a whole (Objective.Window) read Failed, Cancelled
	// and Tokens instead.
	Values []float64
	// Tokens is a successful request's output length, for
	// OutputThroughput.
	Tokens float64
	// Latency, TTFT and ITL are a successful request's (ms; NaN: none),
	// for the window's report.
	Latency, TTFT, ITL float64
}

// Stats reads a probe's samples (ordered by EndNs) as a window's report.
func (j Judging) Stats(samples []Sample) WindowStats {
	c := j.count(samples)
	w := WindowStats{Requests: c.n, Errors: c.failed - c.cancelled, Cancelled: c.cancelled, Throughput: math.NaN(), LatencyAvg: math.NaN()}
	if c.n >= 2 && c.span > 0 {
		w.Throughput = float64(c.n-1) / c.span
	}
	var lat, ttft, itl []float64
	for _, s := range samples {
		if s.Failed {
			continue
		}
		for _, p := range []struct {
			v  float64
			to *[]float64
		}{{s.Latency, &lat}, {s.TTFT, &ttft}, {s.ITL, &itl}} {
			if !math.IsNaN(p.v) {
				*p.to = append(*p.to, p.v)
			}
		}
	}
	if len(lat) > 0 {
		w.LatencyAvg, _ = meanSD(lat)
	}
	for _, q := range []struct {
		xs  []float64
		out *[3]float64
	}{{lat, &w.Latency}, {ttft, &w.TTFT}, {itl, &w.ITL}} {
		for k, p := range []float64{50, 95, 99} {
			q.out[k] = Percentile(q.xs, p)
		}
	}
	return w
}

// Verdict is what a probe's samples say so far.
type Verdict int

// Verdicts. Inconclusive is a probe whose requests finish too slowly to
// be judged within its patience (Judging.Patience): neither a pass nor a
// fail, it ends the search.
const (
	Undecided Verdict = iota
	Pass
	Fail
	Inconclusive
)

// String names the verdict as the dashboard and the export show it.
func (v Verdict) String() string {
	switch v {
	case Pass:
		return "pass"
	case Fail:
		return "fail"
	case Inconclusive:
		return "inconclusive"
	}
	return "running"
}

// MarshalText makes a Verdict a JSON string.
func (v Verdict) MarshalText() ([]byte, error) { return []byte(v.String()), nil }

// Judging decides when a probe has run long enough. The zero value of each
// field takes its default.
type Judging struct {
	Objectives []Objective
	// MinDuration is the least a probe runs before it may pass (5 s).
	MinDuration time.Duration
	// MaxDuration is how long a noisy probe may be extended (4 × min).
	MaxDuration time.Duration
	// Patience is how long a probe whose requests have not reached
	// MinRequests is extended (30 × MaxDuration); past 1.5 × MaxDuration
	// one whose finishing rate will not reach them within it ends
	// Inconclusive (TooSlow).
	Patience time.Duration
	// MinRequests is the least number of finished requests a verdict needs
	// (40), except an early clear failure (10).
	MinRequests int
	// Tolerance is the largest coefficient of variation of an objective's
	// percentile across the probe's consecutive chunks that counts as
	// stable (0.2): above it, the probe is extended.
	Tolerance float64
	// FailFactor cuts a probe short once an objective's percentile exceeds
	// its limit by this factor over the whole probe and over its latest
	// chunk (1.5): a clear failure needs no stable estimate.
	FailFactor float64
	// OfferedRate, for a request-rate probe, is the rate offered: requests
	// must finish at ≥ KeepUp × it (an implicit objective, Throughput).
	OfferedRate float64
	// KeepUp is the fraction of OfferedRate that must finish (0.85).
	KeepUp float64
	// Settle ends a probe once its MinRequests settle the verdict, before
	// MinDuration: every objective's 95% interval (a percentile's
	// distribution-free, an error rate's and a finishing rate's from
	// their counts) clear of its limit on the side that passes, or one
	// clear of it on the side that fails.
	Settle bool
	// Decisive passes or fails a probe that reached MinDuration and
	// MinRequests only when those intervals settle the verdict; while one
	// straddles its limit the probe is extended, up to MaxDuration, where
	// the point values decide (marked unstable). Adaptive scale's windows
	// are judged so.
	Decisive bool
}

// chunks is how many consecutive parts a probe is split into to estimate
// the variance of its own percentiles.
const chunks = 4

// earlyMin is the least number of requests an early failure needs.
const earlyMin = 10

func (j Judging) withDefaults() Judging {
	if j.MinDuration <= 0 {
		j.MinDuration = 5 * time.Second
	}
	if j.MaxDuration < j.MinDuration {
		j.MaxDuration = 4 * j.MinDuration
	}
	if j.Patience < j.MaxDuration {
		j.Patience = 30 * j.MaxDuration
	}
	if j.MinRequests <= 0 {
		j.MinRequests = 40
	}
	j.MinRequests = max(j.MinRequests, 2*chunks)
	if !(j.Tolerance > 0) {
		j.Tolerance = 0.2
	}
	if !(j.FailFactor > 1) {
		j.FailFactor = 1.5
	}
	if !(j.KeepUp > 0) {
		j.KeepUp = 0.85
	}
	return j
}

// LowestRate is the lowest request rate a probe can be judged at: below
// it, MinRequests do not finish within MaxDuration, so the probe fails for
// want of samples whatever the server does.
func (j Judging) LowestRate() float64 {
	j = j.withDefaults()
	return float64(j.MinRequests) / j.MaxDuration.Seconds()
}

// TooSlow reports whether a probe with n finished requests after elapsed
// will not reach MinRequests within Patience: it reached Patience, or past
// 1.5 × MaxDuration none finished, or its finishing rate so far (from
// three requests, or from one or two past 3 × MaxDuration) would not get
// there in time.
func (j Judging) TooSlow(n int, elapsed time.Duration) bool {
	j = j.withDefaults()
	switch {
	case n >= j.MinRequests:
		return false
	case elapsed >= j.Patience:
		return true
	case elapsed < j.MaxDuration+j.MaxDuration/2:
		return false
	case n == 0:
		return true
	case n < 3 && elapsed < 3*j.MaxDuration:
		return false // too few to tell their rate from when they started
	}
	return float64(elapsed)*float64(j.MinRequests)/float64(n) > float64(j.Patience)
}

// Judgement is the judge's reading of a probe.
type Judgement struct {
	Verdict Verdict `json:"verdict"`
	// Stable is set when every objective's percentile varied within the
	// tolerance across the probe's chunks, or every chunk stayed clear of
	// the limit (noise that cannot flip the verdict); a verdict reached at
	// MaxDuration without it is marked unstable.
	Stable bool `json:"stable"`
	// Early is set for a probe cut short by a clear failure.
	Early bool `json:"early,omitempty"`
	// Observed holds each objective's value over the probe, by name
	// (p95(time_to_first_token), error_rate, request_throughput).
	Observed map[string]float64 `json:"observed"`
	// Variation is the largest coefficient of variation across chunks.
	Variation float64 `json:"variation"`
	// Limiting names the objective that failed the probe, or (when it
	// passed) the one nearest its limit.
	Limiting string `json:"limiting,omitempty"`
	// Reason says why, in words.
	Reason string `json:"reason"`
}

// Judge reads a probe's samples, ordered by EndNs, after it ran for
// elapsed. It passes or fails a probe once it has MinRequests over
// MinDuration and a stable estimate (or reached MaxDuration), and fails it
// early when an objective is clearly violated.
func (j Judging) Judge(samples []Sample, elapsed time.Duration) (out Judgement) {
	j = j.withDefaults()
	objs := j.objectives()
	n := len(samples)
	out = Judgement{Observed: map[string]float64{}}
	overall := make([]float64, len(objs))
	for i, o := range objs {
		overall[i] = j.observe(o, i, samples)
		if !math.IsNaN(overall[i]) { // JSON has no NaN: a missing value is left out
			out.Observed[o.Name()] = overall[i]
		}
	}
	worst, worstExcess := -1, 0.0
	for i, o := range objs {
		if e := o.Excess(overall[i]); e > worstExcess || (worst < 0 && e > 0) {
			worst, worstExcess = i, e
		}
	}

	// A probe whose every request failed is judged by its errors, not by
	// the latencies it has none of: once earlyMin failed, or (at least
	// three) over MinDuration.
	if failed := failures(samples); n > 0 && failed == n && (n >= earlyMin || n >= 3 && elapsed >= j.MinDuration) {
		e, count := topError(samples)
		out.Verdict, out.Stable, out.Early, out.Limiting = Fail, true, elapsed < j.MinDuration, "errors: "+e.Type
		out.Reason = fmt.Sprintf("every request failed (%d of %d), most with %s", n, n, e.Type)
		if e.Message != "" {
			out.Reason += ": " + e.Message
		}
		if count < n {
			out.Reason += fmt.Sprintf(" (%d×)", count)
		}
		return out
	}

	// A clear failure ends the probe early: the whole probe and its latest
	// chunk are both far past the limit (a queue that is still growing).
	if n >= earlyMin {
		last := samples[n-max(n/chunks, earlyMin/2):]
		for i, o := range objs {
			if spanRate(o.Tag) || math.IsNaN(overall[i]) {
				continue // judged on the whole probe only; or no value to judge
			}
			if o.Excess(overall[i]) >= j.FailFactor-1 && o.Excess(j.observe(o, i, last)) >= j.FailFactor-1 && failureCountOK(o, samples) {
				out.Verdict, out.Early, out.Limiting = Fail, true, o.Name()
				out.Reason = fmt.Sprintf("%s %s is over %g× its limit %g", o.Name(), fmtNum(overall[i]), j.FailFactor, o.Limit)
				return out
			}
		}
	}
	if j.Settle && n >= j.MinRequests && elapsed < j.MinDuration {
		if v, limiting, reason, ok := j.settled(objs, samples, overall); ok {
			out.Verdict, out.Stable, out.Limiting = v, true, limiting
			out.Reason = reason + fmt.Sprintf(" (settled after %d requests, %s)", n, elapsed.Round(100*time.Millisecond))
			return out
		}
	}
	if n < j.MinRequests && elapsed >= j.MaxDuration {
		// Too few finished to judge: not a failure, a longer probe.
		out.Reason = fmt.Sprintf("inconclusive (%d of %d needed): extending", n, j.MinRequests)
		return out
	}
	if n < j.MinRequests || elapsed < j.MinDuration {
		out.Reason = fmt.Sprintf("collecting: %d of %d requests, %s of %s", n, j.MinRequests, elapsed.Round(100*time.Millisecond), j.MinDuration)
		return out
	}
	if j.Decisive {
		if v, limiting, reason, ok := j.settled(objs, samples, overall); ok {
			out.Verdict, out.Stable, out.Limiting = v, true, limiting
			out.Reason = reason + fmt.Sprintf(" (its 95%% interval clear of the limit after %d requests, %s)", n, elapsed.Round(100*time.Millisecond))
			return out
		}
		if elapsed < j.MaxDuration {
			out.Reason = fmt.Sprintf("an interval straddles its limit after %d requests: extending (%s of at most %s)", n, elapsed.Round(100*time.Millisecond), j.MaxDuration)
			return out
		}
		defer func() {
			// Decided on the point values at the cap: not settled.
			if out.Verdict != Undecided && out.Stable {
				out.Stable = false
				out.Reason += fmt.Sprintf(" (unsettled: an interval still straddles its limit after %s)", j.MaxDuration)
			}
		}()
	}

	// Stability: the probe's own variance, from the spread of each
	// objective's percentile over consecutive chunks.
	size := n / chunks
	unstable := false
	for i, o := range objs {
		if o.Window() {
			continue
		}
		var ps []float64
		for c := range chunks {
			ps = append(ps, j.observe(o, i, samples[c*size:(c+1)*size]))
		}
		v := variation(ps)
		out.Variation = max(out.Variation, v)
		if v > j.Tolerance && !clearOfLimit(o, ps, j.Tolerance) {
			unstable = true
		}
	}
	// Noise that cannot change the verdict (every chunk well within its
	// limit, or well past it) needs no longer probe.
	out.Stable = !unstable
	if !out.Stable && elapsed < j.MaxDuration {
		out.Reason = fmt.Sprintf("noisy (variation %.0f%% > %.0f%%): extending", 100*out.Variation, 100*j.Tolerance)
		return out
	}
	if worst >= 0 {
		o := objs[worst]
		out.Verdict, out.Limiting = Fail, o.Name()
		out.Reason = fmt.Sprintf("%s %s misses its limit %g", o.Name(), fmtNum(overall[worst]), o.Limit)
	} else {
		out.Verdict = Pass
		// The limiting metric of a pass is the one closest to its limit.
		best := -1.0
		for i, o := range objs {
			if r := closeness(o, overall[i]); r > best {
				best, out.Limiting = r, o.Name()
			}
		}
		out.Reason = "every objective met"
	}
	if !out.Stable {
		out.Reason += fmt.Sprintf(" (unstable: variation %.0f%% after %s)", 100*out.Variation, j.MaxDuration)
	}
	return out
}

// settleLevel is the confidence a settled verdict rests on, settleZ its
// normal quantile.
const settleLevel = 0.95

var settleZ = math.Sqrt2 * math.Erfinv(settleLevel)

// settled reports whether samples settle the verdict already (ok): Fail
// when an objective's interval lies wholly past its limit, Pass when
// every objective's lies wholly within it. overall holds each
// objective's value over samples.
func (j Judging) settled(objs []Objective, samples []Sample, overall []float64) (v Verdict, limiting, reason string, ok bool) {
	allMet := true
	for i, o := range objs {
		lo, hi := j.interval(o, i, samples)
		if math.IsNaN(lo) || math.IsNaN(hi) {
			return Undecided, "", "", false
		}
		// Within: the whole interval meets the limit; past: none of it does.
		within, past := o.Met(hi), !o.Met(lo)
		if o.HigherIsBetter {
			within, past = o.Met(lo), !o.Met(hi)
		}
		if past {
			return Fail, o.Name(), fmt.Sprintf("%s %s misses its limit %g", o.Name(), fmtNum(overall[i]), o.Limit), true
		}
		allMet = allMet && within
	}
	if !allMet {
		return Undecided, "", "", false
	}
	best := -1.0
	for i, o := range objs {
		if r := closeness(o, overall[i]); r > best {
			best, limiting = r, o.Name()
		}
	}
	return Pass, limiting, "every objective met", true
}

// interval is objective i's 95% interval over samples (NaN: none yet).
func (j Judging) interval(o Objective, i int, samples []Sample) (lo, hi float64) {
	if o.Window() {
		return j.windowInterval(o, samples)
	}
	xs := values(i, samples)
	if len(xs) == 0 {
		return math.NaN(), math.NaN()
	}
	switch o.Stat {
	case StatMin, StatMax:
		// An extreme has no interval of its own: the one seen decides.
		v := statOf(o, xs)
		return v, v
	case StatAvg:
		if len(xs) < 2 {
			return math.NaN(), math.NaN()
		}
		m, sd := meanSD(xs)
		d := settleZ * sd / math.Sqrt(float64(len(xs)))
		return m - d, m + d
	}
	iv := stats.QuantileInterval(xs, o.Percentile/100, settleLevel)
	return iv.Lo, iv.Hi
}

// windowInterval is a window objective's 95% interval: a proportion's
// (Wilson's), or a rate's from its count (Poisson) over the span the
// completions cover.
func (j Judging) windowInterval(o Objective, samples []Sample) (lo, hi float64) {
	c := j.count(samples)
	switch o.Tag {
	case ErrorRate:
		return wilson(c.failed, c.n, settleZ)
	case RequestErrorRate:
		return wilson(c.failed-c.cancelled, c.n-c.cancelled, settleZ)
	case SuccessRate:
		return wilson(c.n-c.failed, c.n, settleZ)
	case CancellationRate:
		return wilson(c.cancelled, c.n, settleZ)
	case GoodputRatio:
		return wilson(c.good, c.n, settleZ)
	}
	if c.n < 2 || !(c.span > 0) {
		return math.NaN(), math.NaN()
	}
	switch o.Tag {
	case Goodput:
		d := settleZ * math.Sqrt(float64(c.good))
		return max(float64(c.good)-d, 0) / c.span, (float64(c.good) + d) / c.span
	case OutputThroughput:
		// The token count's spread is the request count's, scaled by the
		// mean output length.
		per := c.tokens / float64(max(c.n-c.failed, 1))
		d := settleZ * math.Sqrt(float64(c.n-1)) * per
		return max(c.tokens-d, 0) / c.span, (c.tokens + d) / c.span
	}
	d := settleZ * math.Sqrt(float64(c.n-1))
	return (float64(c.n-1) - d) / c.span, (float64(c.n-1) + d) / c.span
}

// counts are a probe's requests as the window objectives read them.
type counts struct {
	n, failed, cancelled, good int
	tokens                     float64
	span                       float64 // seconds from the first completion to the last
}

// count tallies samples (ordered by EndNs). A request is good when it
// succeeded and met every per-request objective.
func (j Judging) count(samples []Sample) counts {
	objs := j.objectives()
	c := counts{n: len(samples)}
	for _, s := range samples {
		switch {
		case s.Cancelled:
			c.cancelled++
			c.failed++
			continue
		case s.Failed:
			c.failed++
			continue
		}
		c.tokens += s.Tokens
		good := true
		for i, o := range objs {
			if !o.Window() && (i >= len(s.Values) || !o.Met(s.Values[i])) {
				good = false
				break
			}
		}
		if good {
			c.good++
		}
	}
	if c.n >= 2 {
		c.span = float64(samples[c.n-1].EndNs-samples[0].EndNs) / 1e9
	}
	return c
}

// spanRate reports whether a window tag is a rate over the completions'
// span (judged on the whole probe only, never on its latest part).
func spanRate(tag string) bool { return tag == Throughput || tag == OutputThroughput || tag == Goodput }

// values are objective i's values of the successful samples.
func values(i int, samples []Sample) []float64 {
	xs := make([]float64, 0, len(samples))
	for _, s := range samples {
		if !s.Failed && i < len(s.Values) && !math.IsNaN(s.Values[i]) {
			xs = append(xs, s.Values[i])
		}
	}
	return xs
}

// statOf is o's statistic of xs (NaN for none); a percentile sorts xs.
func statOf(o Objective, xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	switch o.Stat {
	case StatAvg:
		m, _ := meanSD(xs)
		return m
	case StatMin:
		return slices.Min(xs)
	case StatMax:
		return slices.Max(xs)
	}
	return Percentile(xs, o.Percentile)
}

// meanSD is xs's mean and sample standard deviation.
func meanSD(xs []float64) (mean, sd float64) {
	for _, x := range xs {
		mean += x
	}
	mean /= float64(len(xs))
	if len(xs) < 2 {
		return mean, 0
	}
	var ss float64
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(ss / float64(len(xs)-1))
}

// wilson is Wilson's score interval of a proportion f of n at z.
func wilson(f, n int, z float64) (lo, hi float64) {
	if n == 0 {
		return math.NaN(), math.NaN()
	}
	p, nf := float64(f)/float64(n), float64(n)
	den := 1 + z*z/nf
	mid := (p + z*z/(2*nf)) / den
	half := z * math.Sqrt(p*(1-p)/nf+z*z/(4*nf*nf)) / den
	return max(0, mid-half), min(1, mid+half)
}

// objectives adds the implicit throughput objective of a rate probe.
func (j Judging) objectives() []Objective {
	if j.OfferedRate <= 0 {
		return j.Objectives
	}
	return append(slices.Clip(j.Objectives), Objective{Tag: Throughput, Limit: j.KeepUp * j.OfferedRate, HigherIsBetter: true})
}

// observe computes objective i over samples (ordered by EndNs).
func (j Judging) observe(o Objective, i int, samples []Sample) float64 {
	if !o.Window() {
		return statOf(o, values(i, samples))
	}
	c := j.count(samples)
	ratio := func(a, b int) float64 {
		if b <= 0 {
			return math.NaN()
		}
		return float64(a) / float64(b)
	}
	switch o.Tag {
	case ErrorRate:
		return ratio(c.failed, c.n)
	case RequestErrorRate:
		return ratio(c.failed-c.cancelled, c.n-c.cancelled)
	case SuccessRate:
		return ratio(c.n-c.failed, c.n)
	case CancellationRate:
		return ratio(c.cancelled, c.n)
	case GoodputRatio:
		return ratio(c.good, c.n)
	}
	// The rate the probe's requests finished at, from its first completion
	// to its last: a server that falls behind finishes them further apart
	// than they were offered. (Completions over the probe's whole time
	// would count the requests still in flight as missing, and fail a
	// probe a few latencies long whatever the server's capacity.)
	if c.n < 2 || !(c.span > 0) {
		return math.NaN()
	}
	switch o.Tag {
	case Goodput:
		return float64(c.good) / c.span
	case OutputThroughput:
		return c.tokens / c.span
	}
	return float64(c.n-1) / c.span
}

// failures counts the failed samples.
func failures(samples []Sample) int {
	f := 0
	for _, s := range samples {
		if s.Failed {
			f++
		}
	}
	return f
}

// topError is the most frequent error of the failed samples (by type and
// message; the first seen of equals) and its count.
func topError(samples []Sample) (metrics.Error, int) {
	type key struct{ typ, msg string }
	counts := map[key]int{}
	var top key
	best := 0
	for _, s := range samples {
		if !s.Failed {
			continue
		}
		k := key{s.Err.Type, s.Err.Message}
		counts[k]++
		if c := counts[k]; c > best {
			top, best = k, c
		}
	}
	if top.typ == "" {
		top.typ = "an error"
	}
	return metrics.Error{Type: top.typ, Message: top.msg}, best
}

// failureCountOK keeps a handful of early failures from failing an error
// rate objective on their own: an early cut needs at least 3 failures.
func failureCountOK(o Objective, samples []Sample) bool {
	if o.Tag != ErrorRate && o.Tag != RequestErrorRate && o.Tag != CancellationRate {
		return true
	}
	f := 0
	for _, s := range samples {
		if s.Failed {
			f++
		}
	}
	return f >= 3
}

// clearOfLimit reports whether every chunk's value is on the same side of
// the objective's limit, by more than margin (a fraction of the limit).
func clearOfLimit(o Objective, ps []float64, margin float64) bool {
	below, above := true, true
	for _, p := range ps {
		if math.IsNaN(p) {
			return false
		}
		lo, hi := o.Limit*(1-margin), o.Limit*(1+margin)
		below = below && p < lo
		above = above && p > hi
	}
	return below || above
}

// closeness is how near a met objective is to its limit (1: at it).
func closeness(o Objective, v float64) float64 {
	switch {
	case o.Limit == 0:
		return 0
	case o.HigherIsBetter:
		if v <= 0 {
			return 1
		}
		return o.Limit / v
	}
	return v / o.Limit
}

// Percentile is the p-th percentile (0 < p ≤ 100) of xs by linear
// interpolation between closest ranks; NaN for no values. xs is sorted in
// place.
func Percentile(xs []float64, p float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	slices.Sort(xs)
	r := p / 100 * float64(len(xs)-1)
	lo := int(math.Floor(r))
	hi := min(lo+1, len(xs)-1)
	return xs[lo] + (xs[hi]-xs[lo])*(r-float64(lo))
}

// variation is the population coefficient of variation of xs (0 when the
// mean is 0 or a value is missing: nothing to compare).
func variation(xs []float64) float64 {
	var sum float64
	for _, x := range xs {
		if math.IsNaN(x) {
			return math.Inf(1)
		}
		sum += x
	}
	mean := sum / float64(len(xs))
	if mean == 0 {
		return 0
	}
	var ss float64
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	return math.Sqrt(ss/float64(len(xs))) / math.Abs(mean)
}

func fmtNum(v float64) string {
	switch {
	case math.IsNaN(v):
		return "n/a"
	case math.Abs(v) >= 100:
		return fmt.Sprintf("%.0f", v)
	case math.Abs(v) >= 1:
		return fmt.Sprintf("%.2f", v)
	}
	return fmt.Sprintf("%.4g", v)
}

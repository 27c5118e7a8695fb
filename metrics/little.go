package metrics

import (
	"fmt"
	"math"
)

// Little's law, L = λW: the requests in a stage on average are the rate
// through it times the mean time spent in it. Per part of the time
// breakdown it says where the requests in flight are (in the server's
// queue, in prefill, in decode, in the client); for a closed loop at a
// fixed concurrency it is a check: the requests in flight by the law
// (rate × mean time a request held its slot) must be the concurrency,
// else slots sat idle between requests (a client bottleneck) or the
// stamps are wrong (a measurement fault).

// littleAgg gathers what the law is checked with: every record's time in
// flight (issue to end, failed ones too), whether a schedule timed it,
// and the concurrency caps in force.
type littleAgg struct {
	held        moments // ms from issue to end, per record
	scheduled   int64
	first, last int64
	// minCap and maxCap are the concurrency caps in force when records
	// ended (0: none seen); a closed loop at a fixed cap has them equal.
	minCap, maxCap int64
	capSeen        bool
}

func (l *littleAgg) add(r *Record) {
	if l.held.n == 0 {
		l.held = newMoments()
	}
	st := r.Issued()
	if r.EndNs <= 0 || st <= 0 || r.EndNs < st {
		return
	}
	l.held.add(float64(r.EndNs-st) / nsPerMs)
	if r.Scheduled {
		l.scheduled++
	}
	if l.first == 0 || st < l.first {
		l.first = st
	}
	l.last = max(l.last, r.EndNs)
}

// noteCap records the concurrency cap in force (0: none).
func (l *littleAgg) noteCap(c int64) {
	if !l.capSeen {
		l.minCap, l.maxCap, l.capSeen = c, c, true
		return
	}
	l.minCap, l.maxCap = min(l.minCap, c), max(l.maxCap, c)
}

func (l *littleAgg) merge(o *littleAgg) {
	if o.held.n > 0 {
		if l.held.n == 0 {
			l.held = newMoments()
		}
		l.held.merge(&o.held)
	}
	l.scheduled += o.scheduled
	if o.first > 0 && (l.first == 0 || o.first < l.first) {
		l.first = o.first
	}
	l.last = max(l.last, o.last)
	if o.capSeen {
		if !l.capSeen {
			l.minCap, l.maxCap, l.capSeen = o.minCap, o.maxCap, true
		} else {
			l.minCap, l.maxCap = min(l.minCap, o.minCap), max(l.maxCap, o.maxCap)
		}
	}
}

// LittleLaw is Little's law over a run (or a stage).
type LittleLaw struct {
	// Rate is the requests that ended per second (failed ones too)
	// between the first one's issue and the last one's end.
	Rate float64
	// InFlight is Rate × the mean time a request was in flight (issue to
	// end): the requests in flight on average.
	InFlight float64
	// Concurrency is the closed loop's fixed cap (0: an open loop, or a
	// cap that changed: nothing to check InFlight against).
	Concurrency float64
	// Tolerance is how far below Concurrency InFlight may fall unflagged
	// (a share): the ramp and the drain (a p99 request's time over the
	// window: slots wait for the last requests) and the mean's noise.
	Tolerance float64
	// Parts is, per part of the time breakdown, the successful requests'
	// rate × the part's mean: the requests in that part on average (NaN:
	// unknown).
	Parts [NumParts]float64
}

// Disagrees reports whether InFlight and Concurrency disagree beyond the
// tolerance: idle slots (below) or more in flight than the cap allows
// (above, a measurement fault).
func (l *LittleLaw) Disagrees() bool {
	if l == nil || l.Concurrency <= 0 || math.IsNaN(l.InFlight) {
		return false
	}
	return math.Abs(l.InFlight-l.Concurrency) > l.Tolerance*l.Concurrency
}

// littleOf applies the law to a's records; p99 is the request latency's
// p99 (ms), tb the breakdown (nil: none) and okRate the successful
// requests' rate.
func littleOf(a *aggregate, p99 float64, tb *TimeBreakdown, okRate float64) *LittleLaw {
	l := &a.little
	if l.held.n < 2 || l.last <= l.first {
		return nil
	}
	span := float64(l.last-l.first) / nsPerMs
	ll := &LittleLaw{Rate: float64(l.held.n) / (span / 1000), Tolerance: math.NaN()}
	ll.InFlight = ll.Rate * l.held.mean / 1000
	for p := range ll.Parts {
		ll.Parts[p] = math.NaN()
		if tb != nil && tb.Parts[p].Count > 0 && okRate > 0 {
			ll.Parts[p] = okRate * tb.Parts[p].Mean / 1000
		}
	}
	if l.scheduled == 0 && l.capSeen && l.minCap == l.maxCap && l.minCap > 0 {
		ll.Concurrency = float64(l.minCap)
		se := l.held.std() / math.Sqrt(float64(l.held.n)) / l.held.mean
		ll.Tolerance = 0.05 + p99/span + 2*1.96*se
	}
	return ll
}

// littleWarning is the one line of a closed loop whose requests in flight
// by Little's law are not its concurrency; where names the stage ("" for
// the run).
func littleWarning(l *LittleLaw, where string) string {
	idle := (l.Concurrency - l.InFlight) / l.Rate * 1000
	if l.InFlight > l.Concurrency {
		return fmt.Sprintf("Little's law%s: rate × time in flight says %.1f requests were in flight on average, more than the concurrency of %g: a measurement fault (the client's stamps of issue and end disagree with its count)",
			where, l.InFlight, l.Concurrency)
	}
	return fmt.Sprintf("Little's law%s: rate × time in flight says %.1f requests were in flight on average of the concurrency of %g (%.0f%%): its slots sat idle %.1f ms between one request's end and the next's issue, beyond the ramp, the drain and the noise (±%.0f%%): a client bottleneck, or a measurement fault",
		where, l.InFlight, l.Concurrency, 100*l.InFlight/l.Concurrency, idle, 100*l.Tolerance)
}

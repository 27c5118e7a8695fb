package metrics

import (
	"fmt"
	"math"
)

// Coordinated omission: under a schedule (a rate, a trace), a request that
// went out late — the client behind its schedule, or waiting for a slot
// under --concurrency — would have been timed from its late start, hiding
// the wait. Every latency is also taken from the intended start (the
// effective_* metrics), and the summary compares the two views of TTFT and
// request latency at p50 and p99: when their intervals do not overlap, the
// wait changed the answer and a warning says so.

// Omission compares the latencies from the intended start with those from
// the issue, over the requests a schedule timed.
type Omission struct {
	// Requests counts the scheduled requests compared.
	Requests int
	Rows     []OmissionRow
}

// OmissionRow is one percentile both ways.
type OmissionRow struct {
	Metric   Tag
	P        float64
	Issue    PercentileCI
	Intended PercentileCI
}

// Differs reports whether the two views' intervals do not overlap.
func (r OmissionRow) Differs() bool {
	return r.Intended.Lo > r.Issue.Hi || r.Intended.Hi < r.Issue.Lo
}

// omissionOf compares the views over e's scheduled requests (nil: none).
func omissionOf(e *rowSet, level float64) *Omission {
	if e == nil {
		return nil
	}
	var ttft, ttftI, lat, latI []float64
	for _, x := range e.rows {
		if math.IsNaN(float64(x.lead)) {
			continue
		}
		lead := float64(x.lead)
		if t := float64(x.ttft); !math.IsNaN(t) {
			ttft, ttftI = append(ttft, t), append(ttftI, t+lead)
		}
		if t := float64(x.e2e); !math.IsNaN(t) {
			lat, latI = append(lat, t), append(latI, t+lead)
		}
	}
	if len(lat) == 0 {
		return nil
	}
	o := &Omission{Requests: len(lat)}
	for _, m := range []struct {
		t               Tag
		issue, intended []float64
	}{{TTFT, ttft, ttftI}, {RequestLatency, lat, latI}} {
		if len(m.issue) == 0 {
			continue
		}
		for _, p := range []float64{50, 99} {
			o.Rows = append(o.Rows, OmissionRow{Metric: m.t, P: p,
				Issue: percentileCI(m.t, m.issue, p, level), Intended: percentileCI(m.t, m.intended, p, level)})
		}
	}
	return o
}

// Warning is the caveat of the views' widest disagreement ("": they agree
// within their intervals).
func (o *Omission) Warning() string {
	if o == nil {
		return ""
	}
	var worst *OmissionRow
	for i := range o.Rows {
		r := &o.Rows[i]
		if r.Differs() && (worst == nil || r.Intended.Value-r.Issue.Value > worst.Intended.Value-worst.Issue.Value) {
			worst = r
		}
	}
	if worst == nil {
		return ""
	}
	return fmt.Sprintf("coordinated omission: from the schedule's intended start, %s p%g is %.3g ms against %.3g ms from the issue (%+.0f%%, beyond both intervals): requests waited before they went out (the client behind its schedule, or a slot under --concurrency); the effective_* metrics count that wait",
		nameOf(worst.Metric), worst.P, worst.Intended.Value, worst.Issue.Value, 100*(worst.Intended.Value-worst.Issue.Value)/worst.Issue.Value)
}

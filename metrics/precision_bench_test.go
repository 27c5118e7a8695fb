package metrics

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

// benchRows is n requests of a steady 64-stream run: 10 minutes of sends,
// lognormal latencies, 100–300 tokens each.
func benchRows(n int) *rowSet {
	r := rand.New(rand.NewPCG(1, 2))
	rs := &rowSet{rows: make([]row, n), seen: int64(n)}
	span := int64(10 * time.Minute)
	for i := range rs.rows {
		sent := int64(i) * span / int64(n)
		ttft := 50 * math.Exp(0.3*r.NormFloat64())
		osl := 100 + r.IntN(201)
		itl := 10 * math.Exp(0.1*r.NormFloat64())
		e2e := ttft + float64(osl-1)*itl
		rs.rows[i] = row{sent: sent, end: sent + int64(e2e*1e6), ttft: float32(ttft), itl: float32(itl), e2e: float32(e2e), osl: float32(osl)}
	}
	return rs
}

// BenchmarkPrecision100k: the intervals of a 100,000-request run (12
// percentiles, two throughputs), as Summary computes them once at the end.
func BenchmarkPrecision100k(b *testing.B) {
	rs := benchRows(100_000)
	from, to := rs.span()
	point := map[Tag]float64{OutputTokenThroughput: 1, RequestThroughput: 1}
	b.ReportAllocs()
	for b.Loop() {
		if p := precisionOf(rs, rs, from, to, point, PrecisionLevel); len(p.Percentiles) != 12 {
			b.Fatal(len(p.Percentiles))
		}
	}
}

// BenchmarkSteadyState100k: the steady state of the same run, its window's
// intervals included.
func BenchmarkSteadyState100k(b *testing.B) {
	rs := benchRows(100_000)
	from, to := rs.span()
	b.ReportAllocs()
	for b.Loop() {
		if s := steadyOf(rs, from, to, PrecisionLevel); !s.Found {
			b.Fatal(s.Reason)
		}
	}
}

// BenchmarkCheck100k: one live check of two targets (a latency percentile
// and a throughput) on a 100,000-request sample, the copy from the shards
// left out.
func BenchmarkCheck100k(b *testing.B) {
	rs := benchRows(100_000)
	_, to := rs.span()
	targets, err := ParseTargets([]string{"time_to_first_token:p99:±5%", "output_token_throughput:avg:±2%"})
	if err != nil {
		b.Fatal(err)
	}
	k := NewChecker(targets)
	s := &Sample{rows: rs, now: to}
	b.ReportAllocs()
	for b.Loop() {
		if st := k.Check(s); len(st.Targets) != 2 {
			b.Fatal(st)
		}
	}
}

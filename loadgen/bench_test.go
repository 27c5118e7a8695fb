package loadgen

import (
	"net/http/httptest"
	"testing"
	"time"

	"github.com/surgebench/surge/loadgen/schedule"
	"github.com/surgebench/surge/metrics"
)

// BenchmarkClientLag measures what the tests only bound: how long after
// the server begins writing a token event the client stamps it (p50 and
// p99, loopback, concurrency 8), and how far the median TTFT lies above
// the server's 20 ms deadline. Run it on an idle machine; on a loaded one
// the figures measure the scheduler, not surge.
func BenchmarkClientLag(b *testing.B) {
	srv := &streamServer{ttft: 20 * time.Millisecond, itl: 5 * time.Millisecond, tokens: 16}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	var p50, p99, ttft float64
	for b.Loop() {
		srv.mu.Lock()
		srv.writes = nil
		srv.mu.Unlock()
		start := time.Now()
		s, sink := runOnceAt(b, start, ts.URL, chat(true), []Stage{{Limit: schedule.Constant(8), Count: 64}})
		lags := checkAgainstServer(b, start, srv, sink.recs)
		p50 += float64(lags[len(lags)/2].Microseconds())
		p99 += float64(lags[len(lags)*99/100].Microseconds())
		ttft += s.Metrics[metrics.TTFT].P50 - 20
	}
	n := float64(b.N)
	b.ReportMetric(p50/n, "lag-p50-µs")
	b.ReportMetric(p99/n, "lag-p99-µs")
	b.ReportMetric(ttft/n*1000, "ttft-p50-over-config-µs")
}

package metrics

import (
	"math"
	"testing"
	"time"
)

// TestTimeslices: requests fall in the wall-clock window they were sent in,
// windows are numbered from the first that has one, and each window's
// metrics are its own requests' (exact percentiles, counts, throughput).
func TestTimeslices(t *testing.T) {
	t.Parallel()
	// The run clock starts 30 ms into a wall-clock second: with 100 ms
	// windows the first one (run time 0–70 ms) is short, as AIPerf's.
	origin := time.Date(2026, 12, 1, 10, 0, 0, 30*int(time.Millisecond), time.UTC)
	c := NewCollector(WithShards(2), WithClock(func() int64 { return 0 }), WithOrigin(origin), WithSlices(100*time.Millisecond))
	// Warmup is no window's.
	c.Add(&Record{Index: 100, Phase: Warmup, SentNs: 10 * ms, EndNs: 20 * ms, Streamed: true, TokenNs: []int64{15 * ms}})
	add := func(i int64, sent, ttft int64, fail bool) {
		r := &Record{Index: i, SentNs: sent * ms, EndNs: (sent + ttft + 10) * ms, Streamed: true,
			TokenNs: []int64{(sent + ttft) * ms, (sent + ttft + 10) * ms}, FirstContentNs: (sent + ttft) * ms, InputTokens: 100,
			Usage: Usage{Present: true, PromptTokens: 100, CompletionTokens: 2}}
		if fail {
			r.TokenNs, r.Err = nil, &Error{Code: 500, Type: "server_error"}
		}
		c.Add(r)
	}
	// Window 0 (run time < 70 ms): none. Window 1 (70–170 ms): TTFT 10, 20, 30, 40.
	for i, ttft := range []int64{10, 20, 30, 40} {
		add(int64(i), 80+int64(i)*20, ttft, false)
	}
	// Window 3 (270–370 ms): one success, one failure; window 2 has nothing.
	add(10, 280, 50, false)
	add(11, 290, 5, true)
	s := c.Close()

	if len(s.Timeslices) != 2 {
		t.Fatalf("%d timeslices, want 2 (the windows with requests)", len(s.Timeslices))
	}
	w0, w1 := s.Timeslices[0], s.Timeslices[1]
	if w0.Index != 0 || w1.Index != 2 {
		t.Errorf("indexes %d, %d; want 0 and 2 (numbered from the first window, gaps kept)", w0.Index, w1.Index)
	}
	if w0.StartNs != 70*ms || w0.EndNs != 170*ms || w1.StartNs != 270*ms {
		t.Errorf("window bounds %d–%d, %d: want the wall clock's 100 ms divisions on the run clock", w0.StartNs, w0.EndNs, w1.StartNs)
	}
	ttft := w0.Metrics[TTFT]
	// numpy: percentile([10,20,30,40], 50) = 25, p90 = 37.
	if ttft.Count != 4 || ttft.P50 != 25 || math.Abs(ttft.P90-37) > 1e-9 || ttft.Sum != 100 {
		t.Errorf("window 0 TTFT %+v; want count 4, p50 25, p90 37, sum 100", ttft)
	}
	if got := w0.Run[RequestCount]; got != 4 {
		t.Errorf("window 0 request_count %v, want 4", got)
	}
	// The window's duration is its own: first send 80 ms, last response 190 ms.
	if got := w0.Run[BenchmarkDuration]; math.Abs(got-0.11) > 1e-9 {
		t.Errorf("window 0 benchmark_duration %v, want 0.11", got)
	}
	if got, want := w0.Run[MinRequestTimestamp], float64(origin.Add(80*time.Millisecond).UnixNano()); got != want {
		t.Errorf("window 0 min_request_timestamp %v, want %v", got, want)
	}
	if w1.Run[RequestCount] != 1 || w1.Run[ErrorRequestCount] != 1 || w1.Run[RequestErrorRate] != 50 || w1.Run[TotalISL] != 100 {
		t.Errorf("window 2 run %v", w1.Run)
	}
	if _, ok := w1.Run[GoodRequestCount]; ok {
		t.Error("good_request_count without --goodput")
	}
}

// TestSliceDistSpills: a window keeps its values exactly up to sliceSpill,
// then holds them in a digest; merging either kind keeps every value.
func TestSliceDistSpills(t *testing.T) {
	t.Parallel()
	a, b := newSliceDist(), newSliceDist()
	for i := range 1000 {
		a.add(float64(i))
		b.add(float64(1000 + i))
	}
	if a.td != nil || len(a.vals) != 1000 {
		t.Fatalf("1000 values: digest %v, %d kept; want them kept", a.td != nil, len(a.vals))
	}
	a.merge(b)
	if a.td == nil || a.vals != nil {
		t.Fatalf("2000 values: digest %v, %d kept; want a digest", a.td != nil, len(a.vals))
	}
	d := a.distribution("ms")
	if d.Count != 2000 || d.Min != 0 || d.Max != 1999 || d.Sum != 1999*1000 || math.Abs(d.P50-999.5) > 5 {
		t.Errorf("after the spill %+v", d)
	}
	if got := linearQuantile([]float64{1, 2, 3, 4, 5}, 0.99); math.Abs(got-4.96) > 1e-9 {
		t.Errorf("linearQuantile p99 of 1..5 = %v, want 4.96 (numpy)", got)
	}
}

// TestBenchmarkDurationOverSuccesses: as AIPerf's, benchmark_duration and
// the throughputs divided by it span the successful requests only, from
// the first one's start to the last one's end; a failure before or after
// them widens nothing.
func TestBenchmarkDurationOverSuccesses(t *testing.T) {
	t.Parallel()
	c := NewCollector(WithClock(func() int64 { return 0 }))
	c.Add(&Record{Index: 0, SentNs: 10 * ms, EndNs: 900 * ms, Err: &Error{Code: 500, Type: "server_error"}})
	for i, sent := range []int64{100, 150} {
		c.Add(&Record{Index: int64(i + 1), SentNs: sent * ms, EndNs: (sent + 150) * ms, Streamed: true,
			TokenNs: []int64{(sent + 50) * ms, (sent + 150) * ms}, FirstContentNs: (sent + 50) * ms,
			Usage: Usage{Present: true, PromptTokens: 10, CompletionTokens: 2}})
	}
	s := c.Close()
	if got := s.Run[BenchmarkDuration]; math.Abs(got-0.2) > 1e-9 {
		t.Errorf("benchmark_duration %v s, want 0.2 (100 ms → 300 ms, the failure left out)", got)
	}
	if got := s.Run[RequestThroughput]; math.Abs(got-2/0.2) > 1e-9 {
		t.Errorf("request_throughput %v, want 10 (2 successes over 0.2 s)", got)
	}
}

package metrics

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/surgebench/surge/metrics/stats"
)

// closedLoop feeds c a closed-loop run: clients users each send a request
// as soon as their last one ended, from 1 s until issueFor has passed;
// every request streams between meanOSL/2 and 3·meanOSL/2 tokens after a
// prefill. slow(t) multiplies both at the request's start (nil: 1). It
// returns the records added.
func closedLoop(c *Collector, seed uint64, clients, meanOSL int, issueFor time.Duration, slow func(t time.Duration) float64) []*Record {
	r := rand.New(rand.NewPCG(seed, 11))
	var out []*Record
	var idx int64
	start := int64(time.Second)
	for u := range clients {
		t := start + int64(u)*int64(time.Millisecond)
		for t < start+int64(issueFor) {
			f := 1.0
			if slow != nil {
				f = slow(time.Duration(t - start))
			}
			jitter := math.Exp(0.2*r.NormFloat64() - 0.02)
			osl := meanOSL/2 + r.IntN(meanOSL+1)
			prefill := int64(40e6 * f * jitter)
			perToken := int64(20e6 * f * jitter)
			tokens := make([]int64, osl)
			at := t + prefill
			for k := range tokens {
				tokens[k] = at
				at += perToken
			}
			rec := &Record{Index: idx, Streamed: true, SentNs: t, EndNs: tokens[osl-1], TokenNs: tokens,
				FirstContentNs: tokens[0], Usage: Usage{Present: true, CompletionTokens: osl}}
			c.Add(rec)
			out = append(out, rec)
			idx++
			t = rec.EndNs
		}
	}
	return out
}

// TestPrecisionFromRecords: the summary's intervals are those of the
// exact values (checked against stats directly), and carry the counts
// they rest on.
func TestPrecisionFromRecords(t *testing.T) {
	t.Parallel()
	c := NewCollector(WithShards(3))
	recs := closedLoop(c, 1, 16, 50, 30*time.Second, nil)
	s := c.Close()
	p := s.Precision
	if p == nil || p.Level != PrecisionLevel || p.Requests != int64(len(recs)) || p.Kept != p.Requests {
		t.Fatalf("precision %+v, want 95%% intervals over the %d requests", p, len(recs))
	}
	var ttft []float64
	for _, r := range recs {
		v := Compute(r, nil)
		ttft = append(ttft, float64(float32(v.TTFT)))
	}
	for _, pct := range HeadlinePercentiles {
		got := p.Percentile(TTFT, pct)
		want := stats.QuantileInterval(slices.Clone(ttft), pct/100, PrecisionLevel)
		if got == nil || got.Lo != want.Lo || got.Hi != want.Hi || got.N != len(ttft) {
			t.Errorf("TTFT p%g: %+v, want the interval %v of %d values", pct, got, want, len(ttft))
		}
	}
	if d := s.Metrics[TTFT]; math.Abs(p.Percentile(TTFT, 99).Value-d.P99) > 0.01*d.P99 {
		t.Errorf("exact p99 %v vs the digest's %v", p.Percentile(TTFT, 99).Value, d.P99)
	}
	tput := p.Throughput(OutputTokenThroughput)
	if tput == nil || tput.Value != s.Run[OutputTokenThroughput] || !(tput.Lo < tput.Value && tput.Value < tput.Hi) || tput.Batches < 2 {
		t.Fatalf("throughput interval %+v around %v", tput, s.Run[OutputTokenThroughput])
	}
	if h := tput.HalfWidth(); h > 0.2 {
		t.Errorf("throughput ±%.0f%% over a steady 30 s: too wide", 100*h)
	}
	if p.Throughput(RequestThroughput) == nil {
		t.Error("no request throughput interval")
	}
	// Fewer than 1,000 requests: each p99 is thin, nothing else.
	if f := p.Footnotes(); len(f) != 3 || !strings.Contains(f[0], "p99 from") {
		t.Errorf("footnotes %q for %d requests, want the three p99s'", f, len(recs))
	}
}

// A p99 of fewer than 1,000 requests is thin: marked, with a footnote.
func TestThinPercentile(t *testing.T) {
	t.Parallel()
	c := NewCollector(WithShards(1))
	closedLoop(c, 2, 4, 20, 3*time.Second, nil)
	p := c.Close().Precision
	p99 := p.Percentile(TTFT, 99)
	if p99 == nil || !p99.Thin() || p99.Tail >= ThinTail {
		t.Fatalf("p99 %+v: want thin", p99)
	}
	f := p99.Footnote()
	if !strings.HasPrefix(f, "Time to First Token p99 from ") || !strings.Contains(f, "its interval is ±") {
		t.Errorf("footnote %q", f)
	}
	if len(p.Footnotes()) == 0 {
		t.Error("no footnotes")
	}
	if p50 := p.Percentile(TTFT, 50); p50.Thin() != (p50.Tail < ThinTail) {
		t.Errorf("p50 %+v", p50)
	}
}

// warmup slows the server threefold at the start, easing to normal over
// the first 10 s (a cold cache, an empty batch).
func warmup(t time.Duration) float64 { return 1 + 2*max(0, 1-t.Seconds()/10) }

func TestSteadyState(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name         string
		slow         func(time.Duration) float64
		startLo      float64 // seconds after the run's start
		startHi      float64
		applyTrimmed bool
	}{
		// Requests sent in the first 10 s are slow for their whole length
		// (up to 18 s): the throughput settles at about 15 s.
		{"warm-up", warmup, 10, 22, true},
		{"steady from the start", nil, 0, 3, false},
	} {
		opts := []Option{WithShards(2)}
		if tc.applyTrimmed {
			opts = append(opts, WithTrim(TrimAuto))
		}
		c := NewCollector(opts...)
		recs := closedLoop(c, 3, 32, 200, 60*time.Second, tc.slow)
		s := c.Close()
		ss := s.SteadyState
		if ss == nil || !ss.Found {
			t.Fatalf("%s: steady state %+v", tc.name, ss)
		}
		start := float64(ss.StartNs-ss.RunStartNs) / 1e9
		if start < tc.startLo || start > tc.startHi {
			t.Errorf("%s: the steady state starts at %.1f s, want %g–%g s", tc.name, start, tc.startLo, tc.startHi)
		}
		// The load ends with the last send (at 61 s), the window one mean
		// request latency (4–5 s) before it.
		lastEnd, lastSent := recs[0].EndNs, recs[0].SentNs
		for _, r := range recs {
			lastEnd, lastSent = max(lastEnd, r.EndNs), max(lastSent, r.SentNs)
		}
		if cut := float64(lastSent-ss.EndNs) / 1e9; cut < 3.5 || cut > 5.5 || ss.RunEndNs != lastEnd {
			t.Errorf("%s: the window ends %.1f s before the last send, want one mean latency (4–5 s)", tc.name, cut)
		}
		var in int64
		for _, r := range recs {
			if r.SentNs >= ss.StartNs && r.SentNs < ss.EndNs {
				in++
			}
		}
		if ss.Requests != in || ss.Metrics[TTFT].Count != in || ss.Run[RequestCount] != float64(in) {
			t.Errorf("%s: %d requests in the window, want %d sent in it", tc.name, ss.Requests, in)
		}
		if ss.Precision == nil || ss.Precision.Throughput(OutputTokenThroughput) == nil {
			t.Errorf("%s: no precision in the window", tc.name)
		}
		if tc.slow != nil {
			// The warm-up's slow requests are cut: the window's TTFT is lower.
			var all []float64
			for _, r := range recs {
				all = append(all, Compute(r, nil).TTFT)
			}
			slices.Sort(all)
			if whole := stats.Quantile(all, 0.99); !(ss.Metrics[TTFT].P99 < whole) {
				t.Errorf("%s: steady TTFT p99 %v, whole run %v: want lower", tc.name, ss.Metrics[TTFT].P99, whole)
			}
		}
		if tc.applyTrimmed {
			if !ss.Applied || s.Metrics[TTFT] != ss.Metrics[TTFT] || s.Run[OutputTokenThroughput] != ss.Run[OutputTokenThroughput] ||
				s.Precision != ss.Precision || !strings.Contains(strings.Join(s.Warnings, "\n"), "trim auto:") {
				t.Errorf("%s: trim not applied: %+v / warnings %q", tc.name, ss.Applied, s.Warnings)
			}
			if s.Run[RequestCount] != float64(len(recs)) {
				t.Errorf("%s: request count %v, want the whole run's %d", tc.name, s.Run[RequestCount], len(recs))
			}
		} else if ss.Applied {
			t.Errorf("%s: applied without WithTrim", tc.name)
		}
	}
}

func TestSteadyStateNotFound(t *testing.T) {
	t.Parallel()
	c := NewCollector(WithShards(1), WithTrim(TrimAuto))
	closedLoop(c, 4, 4, 20, 2*time.Second, nil)
	s := c.Close()
	if ss := s.SteadyState; ss == nil || ss.Found || !strings.Contains(ss.Reason, "too short") || ss.Applied {
		t.Errorf("steady state %+v, want none in a 2 s run", ss)
	}
	if !strings.Contains(strings.Join(s.Warnings, "\n"), "trim auto: no steady state found") {
		t.Errorf("warnings %q", s.Warnings)
	}
	// A load that keeps rising never settles.
	c = NewCollector(WithShards(1))
	closedLoop(c, 5, 16, 40, 40*time.Second, func(t time.Duration) float64 { return 1 + t.Seconds()/5 })
	if ss := c.Close().SteadyState; ss == nil || ss.Found || !strings.Contains(ss.Reason, "never settled") {
		t.Errorf("steady state %+v, want none for a server that keeps slowing", ss)
	}
}

func TestParseTrim(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]Trim{"auto": TrimAuto, "none": TrimNone, "": TrimNone} {
		if got, err := ParseTrim(in); got != want || err != nil {
			t.Errorf("ParseTrim(%q) = %v, %v", in, got, err)
		}
	}
	if _, err := ParseTrim("5s"); err == nil || !strings.Contains(err.Error(), `trim "5s"`) {
		t.Errorf("ParseTrim(5s) = %v", err)
	}
}

// The kept values follow the state: a stage's alone, both shards' after a
// merge (on one clock), none after a JSON round trip (no intervals then).
func TestExactValuesFollowTheState(t *testing.T) {
	t.Parallel()
	c := NewCollector(WithShards(2), WithStages("concurrency", []float64{1, 2}))
	for i := range 40 {
		stage := i / 20
		c.Add(&Record{Index: int64(i), Stage: stage, Streamed: true, SentNs: int64(i+1) * 1e8, EndNs: int64(i+1)*1e8 + 5e7,
			TokenNs: []int64{int64(i+1)*1e8 + 1e7, int64(i+1)*1e8 + 5e7}, Usage: Usage{Present: true, CompletionTokens: 2}})
	}
	s := c.Close()
	if s.Precision == nil || s.Precision.Requests != 40 || s.SteadyState != nil {
		t.Errorf("sweep: precision %+v, steady state %+v; want 40 requests' intervals and no steady state", s.Precision, s.SteadyState)
	}
	for _, st := range s.Stages {
		if st.TTFTP95CI == nil || st.LatencyP95CI == nil {
			t.Errorf("stage %d: no p95 intervals", st.Index)
		}
	}
	st := c.State()
	one := st.Stage(1).Summary()
	if one.Precision == nil || one.Precision.Requests != 20 || one.SteadyState == nil {
		t.Errorf("stage 1 alone: %+v", one.Precision)
	}
	merged := &State{}
	merged.Merge(st.Stage(0))
	merged.Merge(st.Stage(1))
	if p := merged.Summary().Precision; p == nil || p.Requests != 40 {
		t.Errorf("merged: %+v", p)
	}
	b, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	var back State
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if p := back.Summary().Precision; p != nil {
		t.Errorf("read back from JSON: %+v, want no intervals (the values are not in the sidecar)", p)
	}
	back.Merge(st)
	if p := back.Summary().Precision; p != nil {
		t.Errorf("merged with a state without values: %+v, want none", p)
	}
}

// Past its share of maxRows a shard keeps a uniform sample, and says so.
func TestRowKeeperSamples(t *testing.T) {
	t.Parallel()
	k := newRowKeeper(100)
	for i := range 10_000 {
		k.add(row{sent: int64(i)})
	}
	if len(k.rows) != 100 || k.seen != 10_000 {
		t.Fatalf("%d rows of %d seen, want 100 of 10000", len(k.rows), k.seen)
	}
	var late int
	for _, x := range k.rows {
		if x.sent >= 5000 {
			late++
		}
	}
	if late < 30 || late > 70 {
		t.Errorf("%d of 100 kept from the second half, want about half (a uniform sample)", late)
	}
	rs := &rowSet{rows: k.rows, seen: k.seen}
	if !rs.sampled() || rs.within(0, 5000).seen < 3000 {
		t.Errorf("sampled %v, within %d", rs.sampled(), rs.within(0, 5000).seen)
	}
}

// The rate series spreads each request's tokens over its decode and
// counts it done in its last bin.
func TestRates(t *testing.T) {
	t.Parallel()
	rs := &rowSet{rows: []row{
		// 100 tokens from 0.1 s (TTFT 100 ms) to 0.5 s; sent at 0.
		{sent: 0, end: 5e8, ttft: 100, e2e: 500, itl: 4, osl: 100},
		// No TTFT (not streamed): all at its end, 0.75 s.
		{sent: 0, end: 7.5e8, ttft: float32(math.NaN()), e2e: 750, itl: float32(math.NaN()), osl: 10},
	}, seen: 2}
	tokens, done := rs.rates(0, 1e9, 2.5e8)
	// 250 tokens/s over [0.1, 0.5): 37.5 and 62.5 tokens in the first two
	// bins of 0.25 s; then 10 at 0.75 s.
	want := []float64{150, 250, 0, 40} // per second
	for i := range want {
		if math.Abs(tokens[i]-want[i]) > 1e-9 {
			t.Errorf("tokens %v, want %v", tokens, want)
			break
		}
	}
	if done[2] != 4 || done[3] != 4 || done[0]+done[1] != 0 {
		t.Errorf("done %v", done)
	}
}

package metrics

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestParseTarget(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in     string
		metric Tag
		p      float64
		bound  float64
	}{
		{"time_to_first_token:p99:±5%", TTFT, 99, 0.05},
		{"inter_token_latency:p50:2%", ITL, 50, 0.02},
		{"request_latency:p99.9:+-10%", RequestLatency, 99.9, 0.10},
		{"output_token_throughput:avg:±2.5%", OutputTokenThroughput, 0, 0.025},
		{" request_throughput:avg:+/-1% ", RequestThroughput, 0, 0.01},
	} {
		got, err := ParseTarget(c.in)
		if err != nil || got.Metric != c.metric || got.P != c.p || math.Abs(got.Bound-c.bound) > 1e-12 || got.Raw != c.in {
			t.Errorf("ParseTarget(%q) = %+v, %v", c.in, got, err)
		}
	}
	if got, _ := ParseTarget("time_to_first_token:p99:±5%"); got.String() != "time_to_first_token:p99:±5%" || got.Stat() != "p99" {
		t.Errorf("String %q, Stat %q", got.String(), got.Stat())
	}
	for _, bad := range []struct{ in, says string }{
		{"time_to_first_token:p99", "want METRIC:STAT:±PCT"},
		{"ttft:p99:±5%", `unknown metric "ttft"`},
		{"time_to_first_token:avg:±5%", "takes a percentile"},
		{"time_to_first_token:p100:±5%", `percentile "p100"`},
		{"time_to_first_token:px:±5%", `percentile "px"`},
		{"output_token_throughput:p99:±5%", "its statistic is avg"},
		{"time_to_first_token:p99:5", `bound "5": want a percentage`},
		{"time_to_first_token:p99:±0%", "above 0"},
		{"time_to_first_token:p99:±x%", "above 0"},
		{strings.Repeat("x", 300), "longer than"},
	} {
		_, err := ParseTarget(bad.in)
		if err == nil || !strings.Contains(err.Error(), bad.says) || !strings.Contains(err.Error(), "precision target") {
			t.Errorf("ParseTarget(%q) = %v, want an error naming the target saying %q", bad.in, err, bad.says)
		}
	}
	ts, err := ParseTargets([]string{"time_to_first_token:p99:±5%, request_latency:p50:±2%", "output_token_throughput:avg:±3%"})
	if err != nil || len(ts) != 3 {
		t.Errorf("ParseTargets = %v, %v", ts, err)
	}
	if _, err := ParseTargets([]string{" "}); err == nil {
		t.Error("ParseTargets of nothing: no error")
	}
	if _, err := ParseTargets([]string{"time_to_first_token:p99:±5%", "bad"}); err == nil || !strings.Contains(err.Error(), `"bad"`) {
		t.Errorf("ParseTargets with a bad one: %v", err)
	}
}

func FuzzParseTarget(f *testing.F) {
	for _, s := range []string{"time_to_first_token:p99:±5%", "output_token_throughput:avg:2%", "a:b:c", "::", "x:p1e3:±1e-9%"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tg, err := ParseTarget(s)
		if err != nil {
			return
		}
		if !(tg.Bound > 0 && tg.Bound <= 1) || (tg.P == 0) != isThroughput(tg.Metric) || tg.P < 0 || tg.P >= 100 {
			t.Fatalf("%q gave %+v", s, tg)
		}
		if back, err := ParseTarget(tg.String()); err != nil || back.Metric != tg.Metric || back.P != tg.P {
			t.Fatalf("%q: its String %q reads back as %+v, %v", s, tg.String(), back, err)
		}
	})
}

// TestCheckerSettles feeds a run in steps, as a live run grows: the
// targets are met once the sample is large enough, never before the
// minimum, and the half-widths shrink as it grows.
func TestCheckerSettles(t *testing.T) {
	t.Parallel()
	targets, err := ParseTargets([]string{"time_to_first_token:p90:±2%", "output_token_throughput:avg:±5%"})
	if err != nil {
		t.Fatal(err)
	}
	k := NewChecker(targets, WithMinRequests(50))
	if st := k.Check(nil); st.Settled || len(st.Targets) != 2 || !math.IsInf(st.Targets[0].HalfWidth, 1) {
		t.Errorf("no sample: %+v", st)
	}
	now := int64(0)
	c := NewCollector(WithShards(2), WithClock(func() int64 { return now }))
	recs := closedLoop(NewCollector(WithShards(1)), 6, 16, 40, 120*time.Second, nil)
	var halves []float64
	settledAt := -1
	for i, r := range recs {
		c.Add(r)
		if i%200 != 199 {
			continue
		}
		now = r.EndNs
		var st PrecisionStatus
		for range 200 { // records reach their shards asynchronously
			if st = k.Check(c.Sample(-1)); st.Requests == int64(i+1) {
				break
			}
			time.Sleep(2 * time.Millisecond)
		}
		if st.Requests != int64(i+1) {
			t.Fatalf("sample of %d requests after %d added", st.Requests, i+1)
		}
		halves = append(halves, st.Targets[0].HalfWidth)
		for _, ts := range st.Targets {
			if ts.Met != (ts.HalfWidth <= ts.Bound) {
				t.Errorf("%s: met %v at ±%.1f%%", ts.Raw, ts.Met, 100*ts.HalfWidth)
			}
		}
		if st.Settled && settledAt < 0 {
			settledAt = i + 1
			if !strings.Contains(st.String(), "≤ ±2.0%") || !strings.Contains(st.String(), "after ") {
				t.Errorf("status line %q", st.String())
			}
		}
	}
	c.Close()
	if settledAt < 0 {
		t.Fatalf("never settled over %d requests: half-widths %v", len(recs), halves)
	}
	if settledAt <= 200 {
		t.Errorf("settled at the first check (%d requests): the targets test nothing", settledAt)
	}
	if halves[len(halves)-1] >= halves[0] {
		t.Errorf("TTFT p90 half-width went from %v to %v: want it to shrink", halves[0], halves[len(halves)-1])
	}
	t.Logf("settled after %d requests; TTFT p90 half-widths %v", settledAt, halves)
}

// Sample takes one stage's requests, or every stage's.
func TestCollectorSampleStage(t *testing.T) {
	t.Parallel()
	c := NewCollector(WithShards(2), WithClock(func() int64 { return int64(10 * time.Second) }))
	for i := range 30 {
		c.Add(&Record{Index: int64(i), Stage: i % 3, Streamed: true, SentNs: 1e9, EndNs: 2e9, TokenNs: []int64{15e8, 2e9}})
	}
	c.Add(&Record{Index: 99, Stage: 1, SentNs: 1e9, EndNs: 2e9, Err: &Error{Type: "x"}})
	var all *Sample
	for range 200 {
		if all = c.Sample(-1); all.rows.seen == 30 {
			break
		}
		time.Sleep(2 * time.Millisecond)
	}
	if all.rows.seen != 30 {
		t.Fatalf("every stage: %d requests, want the 30 successful", all.rows.seen)
	}
	if one := c.Sample(1); one.rows.seen != 10 || len(one.rows.rows) != 10 {
		t.Errorf("stage 1: %d, want 10", one.rows.seen)
	}
	// A sample taken stays what it was while more requests finish.
	kept := slices.Clone(all.rows.rows)
	for i := range 30 {
		c.Add(&Record{Index: int64(100 + i), Stage: 0, Streamed: true, SentNs: 3e9, EndNs: 4e9, TokenNs: []int64{35e8, 4e9}})
	}
	c.Close()
	if fmt.Sprint(all.rows.rows) != fmt.Sprint(kept) { // NaNs (no lead) compare as printed
		t.Error("a sample changed after it was taken")
	}
}

// A shard hands its kept rows over without copying them while it keeps
// every request: a live check holds it up for a round trip, not for a
// copy of the run so far. Once it samples (past its share of maxRows) it
// copies, since a new request may take an old one's place.
func TestShardSampleIsNotACopy(t *testing.T) {
	s := &shard{keep: newRowKeeper(4)}
	for i := range 3 {
		s.keep.add(row{sent: int64(i)})
	}
	if n := testing.AllocsPerRun(100, func() { s.sample() }); n != 0 {
		t.Errorf("a sample of a shard that keeps every request allocates %v times, want 0", n)
	}
	r := s.sample()
	s.keep.add(row{sent: 3})
	if len(r.rows) != 3 || r.seen != 3 {
		t.Errorf("the sample took %d rows of %d, want 3 of 3", len(r.rows), r.seen)
	}
	for i := 4; i < 40; i++ {
		s.keep.add(row{sent: int64(i)})
	}
	r = s.sample()
	before := slices.Clone(r.rows)
	for i := 40; i < 400; i++ {
		s.keep.add(row{sent: int64(i)})
	}
	if !slices.Equal(r.rows, before) || r.seen != 40 {
		t.Errorf("a sample of a sampling shard changed with later requests: %v, was %v", r.rows, before)
	}
}

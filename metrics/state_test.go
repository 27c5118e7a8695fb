package metrics

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// stateRecords builds n varied finished records, the run clock's times
// starting at offset: streamed answers of 2–200 tokens with lognormal
// latencies, usage, kernel stamps and read delays, transport timings, two
// stages, a warmup and a few failures of two kinds.
func stateRecords(n int, seed uint64, offset int64) []*Record {
	rng := rand.New(rand.NewPCG(seed, 7))
	recs := make([]*Record, n)
	for i := range recs {
		sent := offset + int64(i+1)*int64(3*time.Millisecond)
		r := &Record{Index: int64(i), ConversationID: fmt.Sprint(i), IntendedNs: sent - int64(rng.IntN(2000)),
			Scheduled: true, SentNs: sent, Streamed: true, KernelStamps: true, InputTokens: 100 + rng.IntN(400),
			RequestedOSL: 150, Stage: i % 2}
		if i < n/10 {
			r.Phase, r.Stage = Warmup, 0
		}
		switch {
		case i%17 == 3:
			r.EndNs = sent + int64(time.Millisecond)
			r.Err = &Error{Code: 429, Type: "rate_limit_exceeded", Message: "slow down"}
		case i%29 == 5:
			r.EndNs = sent + int64(time.Second)
			r.Err = &Error{Type: "timeout", Message: "request timed out"}
		default:
			toks := 2 + rng.IntN(199)
			ttft := int64(20e6 * math.Exp(0.4*rng.NormFloat64()))
			r.TokenNs = make([]int64, toks)
			r.ReadDelayNs = make([]int32, toks)
			at := sent + ttft
			for j := range r.TokenNs {
				r.TokenNs[j] = at
				r.ReadDelayNs[j] = int32(rng.IntN(200_000))
				at += int64(4e6 * math.Exp(0.2*rng.NormFloat64()))
			}
			r.FirstContentNs = r.TokenNs[0]
			r.FirstTokenShared = i%7 == 1
			r.EndNs = r.TokenNs[toks-1] + 1000
			r.Usage = Usage{PromptTokens: r.InputTokens, CompletionTokens: toks, Present: true}
			r.HTTP = HTTPTiming{Traced: true, Reused: i%3 > 0, Sending: 20_000, Waiting: ttft, Receiving: r.EndNs - r.TokenNs[0]}
		}
		recs[i] = r
	}
	return recs
}

func collect(t *testing.T, origin time.Time, slos []SLO, recs ...[]*Record) *State {
	t.Helper()
	c := NewCollector(WithShards(3), WithClock(func() int64 { return 0 }), WithGoodput(slos),
		WithStages("concurrency", []float64{4, 8}))
	for _, rs := range recs {
		for _, r := range rs {
			c.Add(r)
		}
	}
	c.Close()
	st := c.State()
	st.Origin = origin
	return st
}

// TestMergedStatesEqualOneCollector is merging's contract: three shards,
// their states written to JSON and read back, merged, give the summary one
// collector computes from every record on one clock: exact counts, sums
// and moments, percentiles within the digests' error, and time-based
// metrics over the union of the shards' windows.
func TestMergedStatesEqualOneCollector(t *testing.T) {
	t.Parallel()
	slos := []SLO{{TTFT, 25}}
	origin := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	// The shards started 0, 40 and 15 ms after the first; on the first's
	// clock their records are that much later.
	starts := []time.Duration{0, 40 * time.Millisecond, 15 * time.Millisecond}
	var whole [][]*Record
	merged := &State{}
	for i, d := range starts {
		recs := stateRecords(600+100*i, uint64(i), 0)
		b, err := json.Marshal(collect(t, origin.Add(d), slos, recs))
		if err != nil {
			t.Fatal(err)
		}
		var back State
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatalf("shard %d state does not read back: %v", i, err)
		}
		merged.Merge(&back)
		whole = append(whole, stateRecords(600+100*i, uint64(i), int64(d)))
	}
	want := collect(t, origin, slos, whole...).Summary()
	got := merged.Summary()
	if !merged.Origin.Equal(origin) {
		t.Errorf("merged origin %v, want the earliest shard's %v", merged.Origin, origin)
	}
	for _, tag := range []Tag{RequestCount, ErrorRequestCount, GoodRequestCount, TotalISL, TotalOSL, TotalOutputTokens, RequestErrorRate,
		MinRequestTimestamp, MaxResponseTimestamp,
		OSLMismatchCount, BenchmarkDuration, RequestThroughput, OutputTokenThroughput, Goodput} {
		if g, w := got.Run[tag], want.Run[tag]; math.Abs(g-w) > 1e-9*math.Abs(w) {
			t.Errorf("%s: merged %v, one collector %v", tag, g, w)
		}
	}
	if got.StartNs != want.StartNs || got.EndNs != want.EndNs || math.Abs(got.SendRate-want.SendRate) > 1e-9 {
		t.Errorf("window %d–%d send rate %v, want %d–%d %v", got.StartNs, got.EndNs, got.SendRate, want.StartNs, want.EndNs, want.SendRate)
	}
	if len(want.Metrics) < 10 {
		t.Fatalf("only %d metrics in the reference summary", len(want.Metrics))
	}
	for tag, w := range want.Metrics {
		g, ok := got.Metrics[tag]
		if !ok {
			t.Errorf("%s missing from the merged summary", tag)
			continue
		}
		near := func(name string, g, w, rel float64) {
			if math.Abs(g-w) > rel*math.Abs(w)+1e-9 {
				t.Errorf("%s %s: merged %v, one collector %v", tag, name, g, w)
			}
		}
		if g.Count != w.Count {
			t.Errorf("%s count: merged %d, one collector %d", tag, g.Count, w.Count)
		}
		near("avg", g.Avg, w.Avg, 1e-9)
		near("std", g.Std, w.Std, 1e-6)
		near("min", g.Min, w.Min, 0)
		near("max", g.Max, w.Max, 0)
		// Digests merged in another order differ a little; histograms
		// merge exactly.
		near("p50", g.P50, w.P50, 0.01)
		near("p90", g.P90, w.P90, 0.01)
		near("p99", g.P99, w.P99, 0.02)
	}
	if len(got.Errors) != 2 || got.Errors[0] != want.Errors[0] || got.Errors[1] != want.Errors[1] {
		t.Errorf("errors %+v, want %+v", got.Errors, want.Errors)
	}
	if len(got.Stages) != 2 || got.Stages[1].Value != 8 || got.Stages[1].RequestCount != want.Stages[1].RequestCount ||
		math.Abs(got.Stages[1].DurationSec-want.Stages[1].DurationSec) > 1e-9 {
		t.Errorf("stages %+v, want %+v", got.Stages, want.Stages)
	}
	if got.Warmup == nil || got.Warmup.Run[RequestCount] != want.Warmup.Run[RequestCount] {
		t.Errorf("warmup %+v, want %v requests", got.Warmup, want.Warmup.Run[RequestCount])
	}
	if got.FirstTokenShared != want.FirstTokenShared || got.Streamed != want.Streamed || got.FirstTokenShared == 0 {
		t.Errorf("first tokens shared %d of %d, want %d of %d (and some)", got.FirstTokenShared, got.Streamed, want.FirstTokenShared, want.Streamed)
	}
	if got.TokenSource != want.TokenSource || got.TimestampSource != "kernel" {
		t.Errorf("sources %q/%q, want %q/kernel", got.TokenSource, got.TimestampSource, want.TokenSource)
	}
}

func TestStateRejectsInconsistentJSON(t *testing.T) {
	t.Parallel()
	good, err := json.Marshal(collect(t, time.Unix(1, 0), nil, stateRecords(50, 1, 0)))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, from, to, want string }{
		{"version", `"version":1`, `"version":9`, "version 9"},
		{"phase", `"phase":"profile"`, `"phase":"cooldown"`, "unknown phase"},
		{"digest count", `"time_to_first_token":{"n":`, `"time_to_first_token":{"n":1`, "its count says"},
		{"bucket", `"buckets":[[`, `"buckets":[[99999999,1],[`, "out of range"},
	} {
		bad := strings.Replace(string(good), tc.from, tc.to, 1)
		if bad == string(good) {
			t.Fatalf("%s: %q not found in the state", tc.name, tc.from)
		}
		var st State
		if err := json.Unmarshal([]byte(bad), &st); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one saying %q", tc.name, err, tc.want)
		}
	}
}

// FuzzStateJSON: a state sidecar is outside input to surge merge. Whatever
// it holds, reading it never panics, and a state that reads back
// summarises, and merged with itself counts everything twice.
func FuzzStateJSON(f *testing.F) {
	c := NewCollector(WithShards(1), WithClock(func() int64 { return 0 }), WithStages("request_rate", []float64{1, 2}))
	for _, r := range stateRecords(40, 3, 0) {
		// Few histograms: each merge of one copies its 5,079 buckets, and
		// the fuzzer should spend its inputs on the reader.
		r.ReadDelayNs, r.HTTP = nil, HTTPTiming{}
		c.Add(r)
	}
	c.Close()
	good, err := json.Marshal(c.State())
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add([]byte(`{"version":1,"aggregates":[{"phase":"profile","stage":0,"digests":{"time_to_first_token":{"n":2,"mean":1,"m2":0,"min":1,"max":1,"centroids":[[1,2]]}}}]}`))
	f.Add([]byte(`{"version":1,"aggregates":[{"phase":"warmup","stage":-3,"inter_chunk_latency":{"n":1,"zeros":1}}]}`))
	f.Add([]byte(`{"version":1,"aggregates":[{"phase":"profile","stage":0,"count_checks":{"batches":{"counted":2,"batched":2,"single":1,"events":5,"tokens":20,"first_share":1.5,"max":9,"hist":[1,1,1,1,1,0,0]},"usage_ignored":2,"usage_distrust":{"sign":"over_cap","detail":"d"}}}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var st State
		if json.Unmarshal(b, &st) != nil {
			return
		}
		once := st.Summary()
		var m State
		m.Merge(&st)
		m.Merge(&st)
		twice := m.Summary()
		for _, tag := range []Tag{RequestCount, ErrorRequestCount} {
			if twice.Run[tag] != 2*once.Run[tag] {
				t.Fatalf("%s: %v merged twice is %v", tag, once.Run[tag], twice.Run[tag])
			}
		}
		_, _ = json.Marshal(&m) // an error (a sum overflowed to Inf), never a panic
	})
}

package metrics

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/surgebench/surge/metrics/stats"
)

// pricedRun is four requests over one second, each 100 input and 100
// output tokens: 400 output and 800 total tokens per second.
func pricedRun(t *testing.T, opts ...Option) *Collector {
	t.Helper()
	origin := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	c := NewCollector(append([]Option{WithShards(2), WithClock(func() int64 { return 0 }), WithOrigin(origin),
		WithSlices(10 * time.Second)}, opts...)...)
	for i := range int64(4) {
		sent := 100 + 10*i
		const end = 1100 // every response ends at 1100 ms
		c.Add(&Record{Index: i, SentNs: sent * ms, EndNs: end * ms, Streamed: true,
			TokenNs: []int64{(sent + 50) * ms, end * ms}, FirstContentNs: (sent + 50) * ms, InputTokens: 100,
			Usage: Usage{Present: true, PromptTokens: 100, CompletionTokens: 100}})
	}
	return c
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

// TestCostPerMillionTokens: $3.60 an hour at 400 output tokens/s is $2.50
// per million output tokens, and at 800 total tokens/s $1.25; the state
// keeps the price (its JSON, a stage's state), timeslices are priced too,
// and a run without a price has no cost.
func TestCostPerMillionTokens(t *testing.T) {
	t.Parallel()
	c := pricedRun(t, WithCostPerHour(3.6))
	s := c.Close()
	if got := s.Run[OutputTokenThroughput]; !near(got, 400) {
		t.Fatalf("output_token_throughput %v, want 400 (the test's premise)", got)
	}
	check := func(where string, run map[Tag]float64) {
		t.Helper()
		if got := run[CostPerMOutputTokens]; !near(got, 2.5) {
			t.Errorf("%s: cost_per_1m_output_tokens %v, want 2.5", where, got)
		}
		if got := run[CostPerMTotalTokens]; !near(got, 1.25) {
			t.Errorf("%s: cost_per_1m_total_tokens %v, want 1.25", where, got)
		}
	}
	check("summary", s.Run)
	if len(s.Timeslices) != 1 {
		t.Fatalf("%d timeslices, want 1", len(s.Timeslices))
	}
	check("timeslice", s.Timeslices[0].Run)
	b, err := json.Marshal(c.State())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"cost_per_hour_usd":3.6`) {
		t.Errorf("state JSON lacks the price: %.200s", b)
	}
	var back State
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	check("state read back", back.Summary().Run)
	check("stage 0's state", back.Stage(0).Summary().Run)
	var merged State
	merged.Merge(&back)
	check("merged state", merged.Summary().Run)

	plain := pricedRun(t).Close()
	for _, tag := range []Tag{CostPerMOutputTokens, CostPerMTotalTokens} {
		if _, ok := plain.Run[tag]; ok {
			t.Errorf("%s without a price", tag)
		}
	}
	// A price CheckCostPerHour refuses is no price.
	if _, ok := pricedRun(t, WithCostPerHour(-2)).Close().Run[CostPerMOutputTokens]; ok {
		t.Error("a negative price priced the run")
	}
}

// TestCostOfInputs: embeddings produce no output tokens; their cost per
// million tokens is over their inputs.
func TestCostOfInputs(t *testing.T) {
	t.Parallel()
	run := map[Tag]float64{InputTokenThroughput: 1000}
	addCost(run, 3.6)
	if _, ok := run[CostPerMOutputTokens]; ok {
		t.Error("an output token cost without output tokens")
	}
	if got := run[CostPerMTotalTokens]; !near(got, 1) {
		t.Errorf("cost_per_1m_total_tokens %v, want 1 ($3.60/h at 1000 input tokens/s)", got)
	}
}

func TestCheckCostPerHour(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		usd float64
		ok  bool
	}{{2.5, true}, {0.01, true}, {0, false}, {-1, false}, {math.NaN(), false}, {math.Inf(1), false}} {
		err := CheckCostPerHour(tc.usd)
		if (err == nil) != tc.ok {
			t.Errorf("CheckCostPerHour(%v) = %v, want ok %v", tc.usd, err, tc.ok)
		}
		if err != nil && !strings.Contains(err.Error(), "US dollars") {
			t.Errorf("CheckCostPerHour(%v) = %q: say what is wanted", tc.usd, err)
		}
	}
}

// TestCostAt: the cost at a search's capacity, its interval from the
// stage's throughput interval with the ends swapped; a throughput
// interval down to zero leaves the cost unbounded (null in JSON).
func TestCostAt(t *testing.T) {
	t.Parallel()
	st := StageSummary{OutputTokenThroughput: 1000, OutputTokenThroughputCI: &stats.Interval{Lo: 800, Hi: 1250}}
	c, ok := CostAt(3.6, st)
	if !ok || !near(c.PerMOutputTokens, 1) || c.CI == nil || !near(float64(c.CI.Lo), 0.8) || !near(float64(c.CI.Hi), 1.25) || c.Level != KneeLevel {
		t.Errorf("CostAt = %+v %v, want $1 per 1M, CI 0.8–1.25 at %v", c, c.CI, KneeLevel)
	}
	st.OutputTokenThroughputCI.Lo = 0
	c, _ = CostAt(3.6, st)
	b, err := json.Marshal(c)
	if err != nil || !strings.Contains(string(b), `"ci":{"lo":0.8,"hi":null}`) {
		t.Errorf("JSON %s (%v), want an unbounded upper end as null", b, err)
	}
	st.OutputTokenThroughputCI = nil
	if c, ok := CostAt(3.6, st); !ok || c.CI != nil {
		t.Errorf("without a throughput interval: %+v, want the cost alone", c)
	}
	if _, ok := CostAt(3.6, StageSummary{}); ok {
		t.Error("a cost at no throughput")
	}
	if _, ok := CostAt(0, st); ok {
		t.Error("a cost at no price")
	}
}

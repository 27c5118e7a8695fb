package metrics

import (
	"fmt"
	"math"

	"github.com/surgebench/surge/metrics/stats"
)

// The price of an answer: given what the server costs per hour (a GPU
// instance's price), what a million tokens cost at the throughput a run
// measured. A token the server produced in an hour costs the hour's price
// spread over every token of that hour, so
//
//	USD per 1M tokens = price per hour / (tokens per second × 3600) × 10⁶
//
// It is a steady-state price: the server is assumed busy at the measured
// throughput the whole hour it is paid for.

// CheckCostPerHour says what is wrong with a price per hour: it must be a
// finite number of US dollars above zero.
func CheckCostPerHour(usd float64) error {
	if !(usd > 0) || math.IsInf(usd, 0) {
		return fmt.Errorf("the cost per hour must be a positive number of US dollars (the server's hourly price, e.g. 2.5), got %v", usd)
	}
	return nil
}

// WithCostPerHour prices the run: the server costs usd US dollars per
// hour, so the summary (and each timeslice and sweep stage's own summary)
// adds cost_per_1m_output_tokens and cost_per_1m_total_tokens. The price
// travels with the state, so a merge of shards keeps it. A price that
// CheckCostPerHour refuses is ignored: the composer checks it first.
func WithCostPerHour(usd float64) Option {
	return func(c *Collector) {
		if CheckCostPerHour(usd) == nil {
			c.costPerHour = usd
		}
	}
}

// PerMillion is what a million tokens cost at tokensPerSec when the server
// costs usdPerHour (NaN when either is not positive).
func PerMillion(usdPerHour, tokensPerSec float64) float64 {
	if !(usdPerHour > 0) || !(tokensPerSec > 0) {
		return math.NaN()
	}
	return usdPerHour / (tokensPerSec * 3600) * 1e6
}

// addCost adds the cost metrics to run, a run-level metric set whose
// throughputs are computed, when the run has a price.
func addCost(run map[Tag]float64, usdPerHour float64) {
	if !(usdPerHour > 0) {
		return
	}
	if c := PerMillion(usdPerHour, run[OutputTokenThroughput]); !math.IsNaN(c) {
		run[CostPerMOutputTokens] = c
	}
	total, ok := run[TotalTokenThroughput]
	if !ok {
		// Embeddings and rankings: their tokens are the inputs.
		total = run[InputTokenThroughput]
	}
	if c := PerMillion(usdPerHour, total); !math.IsNaN(c) {
		run[CostPerMTotalTokens] = c
	}
}

// Cost is what a million output tokens cost at one load, with the interval
// its throughput's interval gives.
type Cost struct {
	// USDPerHour is the price it was computed from.
	USDPerHour float64 `json:"usd_per_hour"`
	// PerMOutputTokens is the cost of a million output tokens at the
	// load's output token throughput.
	PerMOutputTokens float64 `json:"usd_per_1m_output_tokens"`
	// CI is its confidence interval at Level (nil: the stage had too few
	// requests to give its throughput one). A throughput interval reaching
	// down to zero leaves the cost unbounded above: Hi is then +Inf, which
	// the JSON form writes as null.
	CI    *CostInterval `json:"ci,omitempty"`
	Level float64       `json:"level,omitempty"`
}

// CostInterval is a cost's confidence interval; an unbounded end is
// written as null.
type CostInterval struct {
	Lo JSONNum `json:"lo"`
	Hi JSONNum `json:"hi"`
}

// JSONNum is a number written as null when it is not finite.
type JSONNum float64

// MarshalJSON writes n, or null when it is NaN or infinite.
func (n JSONNum) MarshalJSON() ([]byte, error) {
	f := float64(n)
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return []byte("null"), nil
	}
	return fmt.Appendf(nil, "%g", f), nil
}

// CostAt prices one stage of a sweep or search, the load `surge search`
// found the SLO capacity at: the cost of a million output tokens at the
// stage's throughput, and its interval from the stage's throughput
// interval (a higher throughput is a lower cost, so the ends swap). Not ok
// when the price or the stage's throughput is not positive.
func CostAt(usdPerHour float64, st StageSummary) (Cost, bool) {
	c := Cost{USDPerHour: usdPerHour, PerMOutputTokens: PerMillion(usdPerHour, st.OutputTokenThroughput)}
	if math.IsNaN(c.PerMOutputTokens) {
		return Cost{}, false
	}
	if iv := st.OutputTokenThroughputCI; iv != nil {
		c.CI, c.Level = costInterval(usdPerHour, *iv), KneeLevel
	}
	return c, true
}

// costInterval turns a throughput interval into the cost's.
func costInterval(usdPerHour float64, thr stats.Interval) *CostInterval {
	hi := math.Inf(1)
	if thr.Lo > 0 {
		hi = PerMillion(usdPerHour, thr.Lo)
	}
	return &CostInterval{Lo: JSONNum(PerMillion(usdPerHour, thr.Hi)), Hi: JSONNum(hi)}
}

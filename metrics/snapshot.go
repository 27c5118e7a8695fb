package metrics

import (
	"time"

	"github.com/surgebench/surge/metrics/stats"
)

// Quantiles is a live summary of one latency distribution, in milliseconds.
type Quantiles struct {
	Count int64
	Avg   float64
	P50   float64
	P90   float64
	P99   float64
}

// Point is one second of the throughput timeline.
type Point struct {
	// Second is the whole second since the run's start.
	Second int
	// OutputTokens and Requests completed in that second (per second).
	OutputTokens float64
	Requests     float64
}

// StageSummary is the result of one stage of a sweep or ramp.
type StageSummary struct {
	Index int `json:"index"`
	// Mode is "concurrency" or "request_rate"; Value its target.
	Mode  string  `json:"mode"`
	Value float64 `json:"value"`
	// Label names a stage of a sweep over several parameters
	// ("isl=128, concurrency=4"); empty when Value says it.
	Label string `json:"label,omitempty"`

	RequestCount      int64 `json:"request_count"`
	ErrorRequestCount int64 `json:"error_request_count"`

	TTFT    Distribution `json:"time_to_first_token"`
	ITL     Distribution `json:"inter_token_latency"`
	Latency Distribution `json:"request_latency"`

	OutputTokenThroughput float64 `json:"output_token_throughput"`
	RequestThroughput     float64 `json:"request_throughput"`
	DurationSec           float64 `json:"benchmark_duration"`

	// TTFTP95CI, LatencyP95CI and OutputTokenThroughputCI are 95%
	// confidence intervals of the stage's p95 TTFT, p95 request latency
	// and output token throughput (see stageIntervals); nil when the stage
	// has too few requests to say.
	TTFTP95CI               *stats.Interval `json:"time_to_first_token_p95_ci,omitempty"`
	LatencyP95CI            *stats.Interval `json:"request_latency_p95_ci,omitempty"`
	OutputTokenThroughputCI *stats.Interval `json:"output_token_throughput_ci,omitempty"`
	// Knee marks the recommended operating point's stage (see the sweep docs).
	Knee bool `json:"knee,omitempty"`
	// TimeBreakdown is where the stage's time went (nil: no breakdown).
	TimeBreakdown *TimeBreakdown `json:"time_breakdown,omitempty"`
	// Little is Little's law over the stage (nil: too few requests).
	Little *LittleLaw `json:"-"`
}

// Distribution is the full statistics of one metric in display units.
type Distribution struct {
	Unit  string  `json:"unit"`
	Avg   float64 `json:"avg"`
	Min   float64 `json:"min"`
	Max   float64 `json:"max"`
	P1    float64 `json:"p1"`
	P5    float64 `json:"p5"`
	P10   float64 `json:"p10"`
	P25   float64 `json:"p25"`
	P50   float64 `json:"p50"`
	P75   float64 `json:"p75"`
	P90   float64 `json:"p90"`
	P95   float64 `json:"p95"`
	P99   float64 `json:"p99"`
	Std   float64 `json:"std"`
	Count int64   `json:"count"`
	// Sum is the sum of the values (AIPerf's sum, schema 1.1).
	Sum float64 `json:"sum"`
}

// Snapshot is the live state of a run, merged from all shards. It is a plain
// value: the dashboard may keep it without synchronisation.
type Snapshot struct {
	// Elapsed is the time since the run's start.
	Elapsed time.Duration
	// Phase is the phase being issued now.
	Phase Phase

	// Started counts profile requests sent, Finished those that completed
	// (success or failure), Failed the failures; InFlight counts requests of
	// any phase on the wire now.
	Started  int64
	Finished int64
	Failed   int64
	InFlight int64
	// Concurrency is the concurrency cap in force (0: unlimited).
	Concurrency int
	// OutputTokens counted so far, as streamed (live, may be approximate).
	OutputTokens int64
	// ReasoningSeen is set once any reasoning content arrived (the dashboard
	// then shows TTFO).
	ReasoningSeen bool

	// Run holds whole-run quantiles and Window those of the last 10 s, keyed
	// by metric tag: time_to_first_token, time_to_first_output_token,
	// inter_token_latency, request_latency.
	Run    map[string]Quantiles
	Window map[string]Quantiles

	// Timeline is the per-second throughput, oldest first.
	Timeline []Point
	// Errors counts failed requests by error type.
	Errors map[string]int64
	// SchedulerLag is actual minus intended send time.
	SchedulerLag Quantiles
	// ReadDelay is the client's read delay per streamed event (read time −
	// kernel receive time), over the finished requests; ReadDelayMax its
	// largest value. Count 0: not measured.
	ReadDelay    Quantiles
	ReadDelayMax float64

	// TimeBreakdown is where the profile's requests' time went so far
	// (nil: none had a breakdown yet).
	TimeBreakdown *TimeBreakdown

	// Stages lists the sweep/ramp stages finished so far.
	Stages []StageSummary
	// Stage is the index of the stage in progress.
	Stage int

	// Warnings are the caveats found so far (Collector.Warn), oldest first.
	Warnings []string
}

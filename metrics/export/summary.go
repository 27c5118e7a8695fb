package export

import (
	"encoding/json"
	"io"
	"maps"
	"math"
	"slices"
	"time"

	"github.com/surgebench/surge/metrics"
)

// SchemaVersion is the version of AIPerf's profile_export_aiperf.json
// schema the JSON summary follows: 1.1 added count and sum to every
// distribution, 1.2 and 1.3 run_info, 1.4 warmup_metrics, 1.5 the
// error-adjusted adj_* views, the http_req_* additions and AIPerf's
// server-metrics and GPU telemetry shapes.
const SchemaVersion = "1.5"

// AIPerfVersion is the AIPerf release whose files surge's follow
// (aiperf_version: tools that check it for a schema find one they know);
// surge_version beside it names surge's own.
const AIPerfVersion = "0.8.0"

// Run is what the summary export needs beyond the metrics.
type Run struct {
	SurgeVersion string
	// BenchmarkID identifies the run (AIPerf's benchmark_id; "": omitted).
	BenchmarkID  string
	Start, End   time.Time
	WasCancelled bool
	// InputConfig is the effective configuration, secrets already redacted.
	InputConfig any
	// RunInfo describes the target and environment.
	RunInfo any
	// Telemetry is the telemetry_data value (nil: omitted).
	Telemetry any
	// Extra holds derived values added at the top level (energy per token).
	Extra map[string]float64
	// Shards holds the per-shard sections of a merged export (`surge
	// merge`): each shard's own summary; nil for a single host's run.
	Shards []any
	// Fingerprint is the run's fingerprint (metrics/fingerprint; nil:
	// omitted).
	Fingerprint any
}

// StateFile is the export's sidecar holding the run's metrics state
// (metrics.State: every distribution's digest and exact moments), so
// exports of the shards of one plan can be merged. It is surge's own file:
// AIPerf's files keep their shape.
const StateFile = "profile_export_surge_state.json"

// JSON writes profile_export_aiperf.json: a flat object keyed by metric tag
// (distributions carry unit, avg, min, max, p1…p99, std, count, sum;
// run-level metrics unit and avg), then the run's metadata.
func JSON(w io.Writer, s *metrics.Summary, run Run) error {
	o := newObject()
	o.set("schema_version", SchemaVersion)
	o.set("aiperf_version", AIPerfVersion)
	o.set("surge_version", run.SurgeVersion)
	if run.BenchmarkID != "" {
		o.set("benchmark_id", run.BenchmarkID)
	}
	addMetrics(o, s)
	for _, k := range slices.Sorted(maps.Keys(run.Extra)) {
		o.set(k, run.Extra[k])
	}
	o.set("start_time", run.Start.UTC().Format(time.RFC3339Nano))
	o.set("end_time", run.End.UTC().Format(time.RFC3339Nano))
	o.set("was_cancelled", run.WasCancelled)
	if s.TokenSource != "" { // none for types that generate no tokens
		o.set("token_count_source", s.TokenSource)
	}
	if s.InputTokenSource != "" {
		o.set("input_token_count_source", s.InputTokenSource)
	}
	if d := s.UsageDistrust; d != nil {
		o.set("server_usage", map[string]any{"believed": false, "sign": d.Sign, "detail": d.Detail,
			"requests_counted_without_it": s.UsageIgnored})
	}
	if t := s.TokensPerEvent; t != nil {
		// inter_token_latency is the server's delivery cadence here.
		o.set("itl_batched", true)
		o.set("tokens_per_event", tokensPerEventValue(t))
	}
	if s.TimestampSource != "" {
		o.set("timestamp_source", s.TimestampSource)
		o.set("first_token_shared_read", runMetric{Unit: "requests", Avg: float64(s.FirstTokenShared)})
	}
	o.set("scheduler_lag", s.SchedulerLag)
	o.set("connection_retries", runMetric{Unit: "requests", Avg: float64(s.ConnectionRetries)})
	if c := s.ServerTokens; c != nil {
		o.set("server_token_counts", serverTokenCounts(c))
	}
	if n := s.EmptyResponses(); n > 0 {
		// Counted among the errors too; the count alone says how many.
		o.set("empty_response_count", runMetric{Unit: "requests", Avg: float64(n)})
	}
	if s.RetryDuplicates > 0 {
		o.set("connection_retry_duplicates", runMetric{Unit: "requests", Avg: float64(s.RetryDuplicates)})
	}
	o.set("achieved_request_rate", runMetric{Unit: "requests/sec", Avg: roundTo(s.SendRate)})
	o.set("intended_request_rate", runMetric{Unit: "requests/sec", Avg: roundTo(s.IntendedRate)})
	if s.Precision != nil {
		o.set("precision", precisionValue(s.Precision))
	}
	if s.SteadyState != nil {
		o.set("steady_state", steadyValue(s.SteadyState))
	}
	if s.Stages != nil {
		o.set("stages", s.Stages)
		o.set("knee", kneeOf(s))
	}
	if s.Sessions != nil {
		o.set("sessions", sessionsValue(s.Sessions))
	}
	if s.Warmup != nil {
		w := newObject()
		addMetrics(w, s.Warmup)
		w.set("error_summary", errorSummary(s.Warmup))
		o.set("warmup_metrics", w)
	}
	o.set("error_summary", errorSummary(s))
	if run.Telemetry != nil {
		o.set("telemetry_data", run.Telemetry)
	}
	o.set("warnings", nonNil(s.Warnings))
	if sg := surgeSection(s); sg != nil {
		o.set("surge", sg)
	}
	o.set("input_config", run.InputConfig)
	o.set("run_info", run.RunInfo)
	if run.Fingerprint != nil {
		o.set("fingerprint", run.Fingerprint)
	}
	if run.Shards != nil {
		o.set("shards", run.Shards)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(o)
}

// tokensPerEventValue is the JSON of a batching server's tokens per event.
func tokensPerEventValue(t *metrics.TokensPerEvent) map[string]any {
	hist := map[string]int64{}
	for i, n := range t.Hist {
		if n > 0 {
			hist[t.Buckets[i]] = n
		}
	}
	return map[string]any{"batched_requests": t.Batched, "counted_requests": t.Counted, "single_event_requests": t.Single,
		"avg": roundTo(t.Mean), "max": t.Max, "first_event_share": roundTo(t.FirstShare), "events_by_tokens": hist}
}

// kneeOf reports a sweep's knee and recommended operating point (null
// when the sweep never saturated).
func kneeOf(s *metrics.Summary) any {
	if v := s.KneeVerdict; v.Inconclusive && v.At >= 0 && v.At < len(s.Stages) {
		// The stages' intervals could not settle it: no knee is named.
		return map[string]any{
			"mode": s.Stages[v.At].Mode, "inconclusive": true, "unsettled_stage": s.Stages[v.At].Index,
			"unsettled_value": s.Stages[v.At].Value, "suggested_requests_per_stage": v.Suggested,
		}
	}
	if s.Knee < 0 || s.Knee >= len(s.Stages) || s.Operating < 0 {
		return nil
	}
	k, op := s.Stages[s.Knee], s.Stages[s.Operating]
	return map[string]any{
		"mode": k.Mode, "knee_stage": k.Index, "knee_value": k.Value,
		"recommended_stage": op.Index, "recommended_value": op.Value,
	}
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func errorSummary(s *metrics.Summary) []metrics.ErrorCount {
	if s.Errors == nil {
		return []metrics.ErrorCount{}
	}
	return s.Errors
}

// distDefs lists every distribution the files export: AIPerf's request
// metrics, the http_req_* breakdown, then the client's read delay.
func distDefs() []metrics.Def {
	defs := append([]metrics.Def{}, metrics.RequestDefs...)
	defs = append(defs, metrics.AdjustedDefs...)
	defs = append(defs, metrics.NetworkAdjustedDefs...)
	defs = append(defs, metrics.HTTPDefs...)
	return append(defs, metrics.ClientReadDelayDef)
}

func addMetrics(o *object, s *metrics.Summary) { addMetricsOf(o, s.Metrics, s.Run) }

// addMetricsOf adds distributions and run-level metrics to o, keyed by tag.
func addMetricsOf(o *object, dists map[metrics.Tag]metrics.Distribution, run map[metrics.Tag]float64) {
	for _, d := range distDefs() {
		if dist, ok := dists[d.Tag]; ok {
			o.set(string(d.Tag), distValue(dist))
		}
	}
	for _, d := range slices.Concat(metrics.RunDefs, []metrics.Def{metrics.NetworkRTTDef}) {
		if v, ok := run[d.Tag]; ok {
			o.set(string(d.Tag), runMetric{Unit: d.Unit, Avg: roundTo(v)})
		}
	}
}

type runMetric struct {
	Unit string  `json:"unit"`
	Avg  float64 `json:"avg"`
}

// roundTo keeps exports readable: six decimals are far below any timer's
// resolution. Values too large to have them (epoch nanoseconds) are kept as
// they are.
func roundTo(v float64) float64 {
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return 0
	case math.Abs(v) >= 1e12:
		return v
	}
	return math.Round(v*1e6) / 1e6
}

// distValue is a distribution as the JSON has it: its unbounded values
// (an error-adjusted view's) null and its undefined std left out, as
// AIPerf's models serialize infinity and None.
func distValue(d metrics.Distribution) any {
	if !math.IsInf(d.Max, 1) && !math.IsNaN(d.Std) {
		return round(d)
	}
	o := newObject()
	o.set("unit", d.Unit)
	num := func(k string, v float64) {
		if math.IsInf(v, 0) || math.IsNaN(v) {
			o.set(k, nil)
			return
		}
		o.set(k, roundTo(v))
	}
	num("avg", d.Avg)
	num("min", d.Min)
	num("max", d.Max)
	for i, v := range []float64{d.P1, d.P5, d.P10, d.P25, d.P50, d.P75, d.P90, d.P95, d.P99} {
		num(pctKeys[i], v)
	}
	o.set("count", d.Count)
	num("sum", d.Sum)
	return o
}

// pctKeys names the percentiles of a distribution.
var pctKeys = []string{"p1", "p5", "p10", "p25", "p50", "p75", "p90", "p95", "p99"}

func round(d metrics.Distribution) metrics.Distribution {
	for _, p := range []*float64{&d.Avg, &d.Min, &d.Max, &d.P1, &d.P5, &d.P10, &d.P25, &d.P50, &d.P75, &d.P90, &d.P95, &d.P99, &d.Std, &d.Sum} {
		*p = roundTo(*p)
	}
	return d
}

// tokenCounts is one side's token counts in server_token_counts (null:
// unknown).
type tokenCounts struct {
	Prompt       *float64 `json:"prompt_tokens"`
	Output       *float64 `json:"output_tokens"`
	CachedPrompt *float64 `json:"cached_prompt_tokens"`
}

// serverTokenCounts is surge's server_token_counts: the server's own
// counts (its /metrics counters' increase), surge's, and how far surge's
// are off the server's in percent.
func serverTokenCounts(c *metrics.TokenComparison) any {
	num := func(v float64) *float64 {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil
		}
		return &v
	}
	return struct {
		Server        tokenCounts `json:"server"`
		Families      []string    `json:"server_families,omitempty"`
		WithWarmup    bool        `json:"server_window_includes_warmup"`
		Client        tokenCounts `json:"surge"`
		PromptDiffPct *float64    `json:"prompt_diff_pct"`
		OutputDiffPct *float64    `json:"output_diff_pct"`
		Failed        int64       `json:"failed_requests"`
	}{
		Server:        tokenCounts{c.Server.Prompt, c.Server.Output, c.Server.CachedPrompt},
		Families:      c.Server.Families,
		WithWarmup:    c.Server.WithWarmup,
		Client:        tokenCounts{num(c.ClientPrompt), num(c.ClientOutput), num(c.ClientCachedPrompt)},
		PromptDiffPct: num(metrics.DiffPct(c.ClientPrompt, c.Server.Prompt)),
		OutputDiffPct: num(metrics.DiffPct(c.ClientOutput, c.Server.Output)),
		Failed:        c.Failed,
	}
}

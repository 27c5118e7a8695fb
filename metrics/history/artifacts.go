package history

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/surgebench/surge/metrics"
	"github.com/surgebench/surge/metrics/artifact"
	"github.com/surgebench/surge/metrics/fingerprint"
	"github.com/surgebench/surge/metrics/stats"
)

type importConfig struct {
	label string
}

// ImportOption configures FromArtifacts.
type ImportOption func(*importConfig)

// WithLabel names the imported run (its every row).
func WithLabel(label string) ImportOption { return func(c *importConfig) { c.label = label } }

// FromArtifacts reads the artifact folder dir (a run, a sweep in either
// layout, or a folder of repeated runs; surge's or AIPerf's) and returns
// its rows: the run, then each stage of a sweep; for repeated runs each
// run and its stages, numbered from 1. Intervals the summary does not
// give are computed from the records where they are present (a whole
// run's p95 and throughput intervals, as a sweep stage's are). The label
// is WithLabel's, else run_info.history_label.
func FromArtifacts(dir string, opts ...ImportOption) ([]Row, error) {
	var cfg importConfig
	for _, o := range opts {
		o(&cfg)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	if labels := artifact.RepeatLabels(abs); labels != nil {
		runs, err := artifact.LoadRepeats(abs, labels, artifact.WithoutRecords())
		if err != nil {
			return nil, err
		}
		for i, r := range runs {
			if r.Summary == nil || r.Summary.Precision == nil {
				if runs[i], err = artifact.Load(r.Dir); err != nil {
					return nil, err
				}
			}
		}
		// The set's id: its first run's, so a re-import matches.
		uid := "repeats:" + runUID(runs[0])
		var out []Row
		for i, r := range runs {
			out = append(out, rowsOf(r, uid, i+1, cfg)...)
		}
		return out, nil
	}
	r, err := loadRun(abs)
	if err != nil {
		return nil, err
	}
	return rowsOf(r, runUID(r), 0, cfg), nil
}

// loadRun reads a run as the history needs it: surge's own summary holds
// every statistic and interval a row keeps, so its per-request records
// (which grow with the run) are read only for a folder without one (an
// AIPerf run, an older surge's).
func loadRun(dir string) (*artifact.Run, error) {
	r, err := artifact.Load(dir, artifact.WithoutRecords())
	if err != nil || (r.Summary != nil && r.Summary.Precision != nil) {
		return r, err
	}
	return artifact.Load(dir)
}

// runUID is a run's benchmark_id, else a hash of its folder and start.
func runUID(r *artifact.Run) string {
	if id := benchmarkID(r.Summary); id != "" {
		return id
	}
	start := ""
	if r.Summary != nil {
		start = r.Summary.StartTime
	}
	h := sha256.Sum256([]byte("dir " + r.Dir + "\nstart " + start))
	return "dir:" + hex.EncodeToString(h[:8])
}

func benchmarkID(s *artifact.Summary) string {
	if s == nil {
		return ""
	}
	if id, ok := s.RunInfo["benchmark_id"].(string); ok && id != "" {
		return id
	}
	var id string
	if raw, ok := s.Raw["benchmark_id"]; ok {
		id = strings.Trim(string(raw), `"`)
	}
	return id
}

// rowsOf is a run's row and its stages'.
func rowsOf(r *artifact.Run, uid string, repeat int, cfg importConfig) []Row {
	whole := Row{RunUID: uid, BenchmarkID: benchmarkID(r.Summary), Kind: KindRun, Repeat: repeat, Stage: -1, Dir: r.Dir,
		Label: cfg.label, Fingerprint: fingerprintOf(r.Summary), Headline: blankHeadline()}
	s := r.Summary
	sweep := s != nil && len(s.Stages) > 1
	if s != nil {
		whole.StartedAt, whole.EndedAt = parseTime(s.StartTime), parseTime(s.EndTime)
		whole.Cancelled = s.WasCancelled
		if whole.Label == "" {
			whole.Label, _ = s.RunInfo["history_label"].(string)
		}
		if vals := floats(s.RunInfo["stage_values"]); len(vals) == 1 {
			whole.LoadValue = vals[0]
		}
	}
	fromSummary(&whole, r)
	if !sweep {
		recordIntervals(&whole, r.Profile(), s)
		return []Row{whole}
	}
	out := []Row{whole}
	folders := stageFolders(s)
	for i, st := range s.Stages {
		row := whole
		row.Kind, row.Stage, row.Metrics, row.Headline = KindStage, st.Index, nil, blankHeadline()
		row.Cancelled = whole.Cancelled
		row.LoadMode, row.LoadValue = st.Mode, st.Value
		sub := (*artifact.Run)(nil)
		if i < len(folders) {
			if sr, err := loadRun(filepath.Join(r.Dir, folders[i])); err == nil && sr.Summary != nil {
				sub = sr
			}
		}
		if sub != nil {
			row.Dir = sub.Dir
			row.StartedAt, row.EndedAt = parseTime(sub.Summary.StartTime), parseTime(sub.Summary.EndTime)
			fromSummary(&row, sub)
		} else {
			fromStage(&row, st)
		}
		row.TTFTP95CI, row.LatencyP95CI, row.OutputTokenThroughputCI = interval(st.TTFTP95CI), interval(st.LatencyP95CI), interval(st.OutputTokenThroughputCI)
		out = append(out, row)
	}
	return out
}

// blankHeadline is a headline with nothing known.
func blankHeadline() Headline {
	n := math.NaN()
	return Headline{DurationSec: n, RequestThroughput: n, OutputTokenThroughput: n, TotalTokenThroughput: n,
		TTFTP50: n, TTFTP95: n, TTFTP99: n, ITLP50: n, ITLP99: n, LatencyP50: n, LatencyP95: n, LatencyP99: n,
		CostPerHour: n, CostPerMOutputTokens: n, CostPerMTotalTokens: n}
}

func interval(r *artifact.Range) *Interval {
	if r == nil {
		return nil
	}
	return &Interval{Lo: r.Lo, Hi: r.Hi}
}

func stageFolders(s *artifact.Summary) []string {
	raw, _ := s.RunInfo["stage_folders"].([]any)
	var out []string
	for _, v := range raw {
		n, _ := v.(string)
		if strings.ContainsAny(n, `/\`) || n == ".." {
			n = "" // never a path out of the run's folder
		}
		out = append(out, n)
	}
	return out
}

func parseTime(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}
	}
	return t
}

func floats(v any) []float64 {
	raw, _ := v.([]any)
	var out []float64
	for _, x := range raw {
		if f, ok := x.(float64); ok {
			out = append(out, f)
		}
	}
	return out
}

// fingerprintOf reads what a run measured from its summary's
// input_config, run_info and fingerprint.
func fingerprintOf(s *artifact.Summary) Fingerprint {
	f := Fingerprint{LoadValue: math.NaN()}
	if s == nil {
		return f
	}
	cfg := fingerprint.Flatten(s.InputConfig)
	pick := func(keys ...string) any {
		for _, k := range keys {
			if v, ok := cfg[k]; ok && v != nil && v != "" {
				return v
			}
		}
		return nil
	}
	f.Model = joined(pick("endpoint.model_names", "model_names", "model"))
	f.EndpointType, _ = pick("endpoint.type", "endpoint_type").(string)
	f.Endpoint, _ = s.RunInfo["endpoint"].(string)
	f.Target = cleanTarget(s.RunInfo["target_url"])
	if srv, ok := s.RunInfo["server"].(map[string]any); ok {
		f.Engine, _ = srv["engine"].(string)
		f.ServerVersion, _ = srv["version"].(string)
		f.GPU = gpuSummary(srv["gpus"])
	}
	str := func(m map[string]any, k string) string { v, _ := m[k].(string); return v }
	fp := s.Fingerprint
	f.ServerHash, f.Workload, f.Config, f.Dataset, f.Tokenizer = str(fp, "server"), str(fp, "workload"), str(fp, "config"), str(fp, "dataset"), str(fp, "tokenizer")
	f.LoadMode, _ = s.RunInfo["mode"].(string)
	f.SurgeVersion = s.Version
	if cores, ok := s.RunInfo["client_cores"].(map[string]any); ok {
		if v, ok := cores["cpus"].(float64); ok {
			f.ClientCPUs = int(v)
		}
		if v, ok := cores["gomaxprocs"].(float64); ok {
			f.ClientGOMAXPROCS = int(v)
		}
	}
	return f
}

// joined writes a model name or a list of them.
func joined(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case []any:
		var parts []string
		for _, p := range x {
			if s, ok := p.(string); ok && s != "" {
				parts = append(parts, s)
			}
		}
		return strings.Join(parts, ",")
	}
	return ""
}

// cleanTarget is the target's scheme://host:port: a URL's credentials,
// path and query never reach the history.
func cleanTarget(v any) string {
	s, _ := v.(string)
	if s == "" {
		return ""
	}
	if !strings.Contains(s, "://") {
		s = "http://" + s
	}
	u, err := url.Parse(s)
	if err != nil || u.Host == "" {
		return ""
	}
	return u.Scheme + "://" + u.Host
}

// gpuSummary writes run_info.server.gpus ([{name, driver}]) as "2× NAME
// (driver V)".
func gpuSummary(v any) string {
	raw, _ := v.([]any)
	count := map[string]int{}
	var names, drivers []string
	for _, g := range raw {
		m, _ := g.(map[string]any)
		name, _ := m["name"].(string)
		if name == "" {
			name = "GPU"
		}
		if count[name] == 0 {
			names = append(names, name)
		}
		count[name]++
		if d, _ := m["driver"].(string); d != "" && !slices.Contains(drivers, d) {
			drivers = append(drivers, d)
		}
	}
	var parts []string
	for _, n := range names {
		parts = append(parts, fmt.Sprintf("%d× %s", count[n], n))
	}
	out := strings.Join(parts, " + ")
	if len(drivers) > 0 {
		out += " (driver " + strings.Join(drivers, ", ") + ")"
	}
	return out
}

// keptStats are the statistics of a per-request metric the history keeps.
var keptStats = []string{"avg", "min", "max", "p50", "p90", "p95", "p99", "std"}

// breakdownStats are the statistics kept of a part of the time
// breakdown (metric time_breakdown_<part>): the summary has no others.
var breakdownStats = []string{"avg", "p50", "p90", "p99"}

// skipped are run-level values that say when, not how well.
var skipped = map[string]bool{"min_request_timestamp": true, "max_response_timestamp": true}

// fromSummary fills a row's headline and statistics from its run's
// summary, or from its records when it has none (an AIPerf JSONL).
func fromSummary(row *Row, r *artifact.Run) {
	stat := func(tag string) (artifact.Stat, bool) {
		if r.Summary != nil {
			if st, ok := r.Summary.Metrics[tag]; ok {
				return st, true
			}
		}
		if vals := r.Values(tag); len(vals) > 0 {
			st := artifact.StatOf(vals)
			st.Unit = r.Unit(tag)
			return st, true
		}
		if v, unit, ok := r.RunLevel(tag); ok {
			return artifact.Stat{Unit: unit, Avg: v}, true
		}
		return artifact.Stat{}, false
	}
	tags := []string{"time_to_first_token", "inter_token_latency", "request_latency", "output_sequence_length",
		"input_sequence_length", "request_count", "error_request_count", "benchmark_duration", "request_throughput",
		"output_token_throughput"}
	if r.Summary != nil {
		for tag := range r.Summary.Metrics {
			if !slices.Contains(tags, tag) {
				tags = append(tags, tag)
			}
		}
	}
	slices.Sort(tags)
	for _, tag := range tags {
		st, ok := stat(tag)
		if !ok || skipped[tag] {
			continue
		}
		if st.Count == 0 {
			row.Metrics = append(row.Metrics, Metric{tag, "avg", st.Avg, st.Unit})
			continue
		}
		stats := keptStats
		if strings.HasPrefix(tag, "time_breakdown_") {
			stats = breakdownStats // a part's summary has these alone
		}
		for _, name := range stats {
			v, _ := st.Get(name)
			row.Metrics = append(row.Metrics, Metric{tag, name, v, st.Unit})
		}
	}
	h := &row.Headline
	get := func(tag, name string) float64 { v, _ := row.Value(tag, name); return v }
	h.Requests, h.Errors = int64(zeroNaN(get("request_count", "avg"))), int64(zeroNaN(get("error_request_count", "avg")))
	h.DurationSec = get("benchmark_duration", "avg")
	h.RequestThroughput, h.OutputTokenThroughput = get("request_throughput", "avg"), get("output_token_throughput", "avg")
	h.TotalTokenThroughput = get("total_token_throughput", "avg")
	h.TTFTP50, h.TTFTP95, h.TTFTP99 = get("time_to_first_token", "p50"), get("time_to_first_token", "p95"), get("time_to_first_token", "p99")
	h.ITLP50, h.ITLP99 = get("inter_token_latency", "p50"), get("inter_token_latency", "p99")
	h.LatencyP50, h.LatencyP95, h.LatencyP99 = get("request_latency", "p50"), get("request_latency", "p95"), get("request_latency", "p99")
	h.CostPerMOutputTokens = get(string(metrics.CostPerMOutputTokens), "avg")
	h.CostPerMTotalTokens = get(string(metrics.CostPerMTotalTokens), "avg")
	// The price the run was given (input_config), else the one its costs
	// came from: cost × tokens per hour (rounded as the exports are).
	h.CostPerHour = h.CostPerMOutputTokens * h.OutputTokenThroughput * 3600 / 1e6
	if r.Summary != nil {
		if v, ok := fingerprint.Flatten(r.Summary.InputConfig)["output.cost_per_hour_usd"].(float64); ok && v > 0 {
			h.CostPerHour = v
		}
	}
}

func zeroNaN(f float64) float64 {
	if math.IsNaN(f) {
		return 0
	}
	return f
}

// fromStage fills a stage's row from its entry in the sweep's summary
// (the single-folder layout, with no summary of its own).
func fromStage(row *Row, st artifact.Stage) {
	for _, d := range []struct {
		tag string
		s   artifact.Stat
	}{{"time_to_first_token", st.TTFT}, {"inter_token_latency", st.ITL}, {"request_latency", st.Latency}} {
		if d.s.Count == 0 {
			continue
		}
		for _, name := range keptStats {
			v, _ := d.s.Get(name)
			row.Metrics = append(row.Metrics, Metric{d.tag, name, v, d.s.Unit})
		}
	}
	for _, m := range []struct {
		tag, unit string
		v         float64
	}{{"request_count", "requests", st.RequestCount}, {"error_request_count", "requests", st.ErrorRequestCount},
		{"benchmark_duration", "sec", st.DurationSec}, {"request_throughput", "requests/sec", st.RequestThroughput},
		{"output_token_throughput", "tokens/sec", st.OutputTokenThroughput}} {
		row.Metrics = append(row.Metrics, Metric{m.tag, "avg", m.v, m.unit})
	}
	h := &row.Headline
	h.Requests, h.Errors, h.DurationSec = int64(st.RequestCount), int64(st.ErrorRequestCount), st.DurationSec
	h.RequestThroughput, h.OutputTokenThroughput = st.RequestThroughput, st.OutputTokenThroughput
	h.TTFTP50, h.TTFTP95, h.TTFTP99 = st.TTFT.P50, st.TTFT.P95, st.TTFT.P99
	h.ITLP50, h.ITLP99 = st.ITL.P50, st.ITL.P99
	h.LatencyP50, h.LatencyP95, h.LatencyP99 = st.Latency.P50, st.Latency.P95, st.Latency.P99
	for _, f := range []*float64{&h.TTFTP50, &h.TTFTP95, &h.TTFTP99, &h.ITLP50, &h.ITLP99, &h.LatencyP50, &h.LatencyP95, &h.LatencyP99} {
		if *f == 0 {
			*f = math.NaN() // a stage entry without the metric
		}
	}
}

// recordIntervals gives a whole run the intervals a sweep stage has: its
// summary's own where it wrote them (surge's precision: distribution-free
// p95s, the throughput's batch means), else the same computed from its
// successful records.
func recordIntervals(row *Row, recs []artifact.Record, s *artifact.Summary) {
	if s != nil && s.Precision != nil {
		p := s.Precision
		row.TTFTP95CI = fromPrecision(p.Percentiles["time_to_first_token"]["p95"])
		row.LatencyP95CI = fromPrecision(p.Percentiles["request_latency"]["p95"])
		row.OutputTokenThroughputCI = fromPrecision(p.Throughputs["output_token_throughput"])
		return
	}
	var ttft, lat []float64
	var ok []artifact.Record
	for _, r := range recs {
		if r.Failed() {
			continue
		}
		ok = append(ok, r)
		if v, has := r.Metrics["time_to_first_token"]; has {
			ttft = append(ttft, v)
		}
		if v, has := r.Metrics["request_latency"]; has {
			lat = append(lat, v)
		}
	}
	p95 := func(vals []float64) *Interval {
		if len(vals) < 2 {
			return nil
		}
		iv := stats.QuantileInterval(vals, 0.95, metrics.KneeLevel)
		return &Interval{Lo: iv.Lo, Hi: iv.Hi}
	}
	row.TTFTP95CI, row.LatencyP95CI = p95(ttft), p95(lat)
	if t := row.OutputTokenThroughput; t > 0 && len(lat) >= 2 {
		meanLat, _ := stats.MeanVar(lat)
		row.OutputTokenThroughputCI = throughputInterval(ok, t, meanLat)
	}
}

// binNs is the width of the token-rate series batch means are taken of
// (metrics' own).
const binNs = int64(100 * time.Millisecond)

// throughputInterval is the batch-means interval of output throughput t
// from records: each request's output tokens spread over its decode (first
// token to end) in 100 ms bins, batches at least a mean latency long, as
// metrics computes a run's own.
func throughputInterval(recs []artifact.Record, t, meanLatMs float64) *Interval {
	from, to := int64(math.MaxInt64), int64(0)
	for _, r := range recs {
		if r.StartNs > 0 && r.EndNs > r.StartNs {
			from, to = min(from, r.StartNs), max(to, r.EndNs)
		}
	}
	if to-from < 2*binNs {
		return nil
	}
	bins := make([]float64, (to-from)/binNs)
	for _, r := range recs {
		osl := r.Metrics["output_sequence_length"]
		if !(osl > 0) || r.EndNs <= r.StartNs {
			continue
		}
		a := r.StartNs + int64(r.Metrics["time_to_first_token"]*float64(time.Millisecond))
		a = min(max(a, r.StartNs), r.EndNs)
		ia, ib := int((a-from)/binNs), int((r.EndNs-from)/binNs)
		ia, ib = min(ia, len(bins)-1), min(ib, len(bins)-1)
		per := osl / float64(ib-ia+1)
		for i := ia; i <= ib; i++ {
			bins[i] += per
		}
	}
	minSize := max(1, int(math.Ceil(meanLatMs*float64(time.Millisecond)/float64(binNs))))
	bm := stats.BatchMeansCI(bins, minSize, metrics.KneeLevel)
	if math.IsInf(bm.Half, 0) || !(bm.Mean > 0) {
		return nil
	}
	rel := bm.Half / bm.Mean
	return &Interval{Lo: max(0, t*(1-rel)), Hi: t * (1 + rel)}
}

// fromPrecision is a summary's interval as a row keeps it (nil when the
// summary has none: a zero value).
func fromPrecision(iv artifact.Interval) *Interval {
	if iv.N == 0 && iv.Lo == 0 && iv.Hi == 0 {
		return nil
	}
	return &Interval{Lo: iv.Lo, Hi: iv.Hi}
}

// exists reports whether dir is still there (a pruned artifact folder is
// not, though its row stays).
func exists(dir string) bool {
	_, err := os.Stat(dir)
	return err == nil
}

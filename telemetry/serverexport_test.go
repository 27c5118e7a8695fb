package telemetry

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/surgebench/surge/metrics/export/shape"
)

// serverExportShape is AIPerf's ServerMetricsExportData (common/models/
// server_metrics_models.py): its dataclasses forbid extra keys, and it is
// dumped with exclude_none, so every optional field may be absent. surge
// adds surge_version at the top.
var serverExportShape = func() shape.Shape {
	num := func(names ...string) map[string]shape.Shape {
		m := map[string]shape.Shape{}
		for _, n := range names {
			m[n] = shape.Number
		}
		return m
	}
	statFields := num("avg", "min", "max", "std", "p1", "p5", "p10", "p25", "p50", "p75", "p90", "p95", "p99",
		"total", "rate", "rate_avg", "rate_min", "rate_max", "rate_std", "sum", "count_rate", "sum_rate",
		"p1_estimate", "p5_estimate", "p10_estimate", "p25_estimate", "p50_estimate", "p75_estimate",
		"p90_estimate", "p95_estimate", "p99_estimate")
	statFields["count"] = shape.Integer
	var optional []string
	for k := range statFields {
		optional = append(optional, k)
	}
	stats := shape.Model{Fields: statFields, Optional: optional}
	series := shape.Model{
		Fields: map[string]shape.Shape{"endpoint_url": shape.String, "labels": shape.Dict(shape.String), "stats": stats,
			"timeslices": shape.List(shape.Object), "buckets": shape.Dict(shape.Integer)},
		Optional: []string{"endpoint_url", "labels", "stats", "timeslices", "buckets"},
	}
	metric := shape.Model{
		Fields: map[string]shape.Shape{"type": shape.String, "description": shape.String, "unit": shape.String,
			"series": shape.List(series)},
		Optional: []string{"unit"},
	}
	info := shape.Model{
		Fields: map[string]shape.Shape{"total_fetches": shape.Integer, "first_fetch_ns": shape.Integer,
			"last_fetch_ns": shape.Integer, "avg_fetch_latency_ms": shape.Number, "unique_updates": shape.Integer,
			"first_update_ns": shape.Integer, "last_update_ns": shape.Integer, "duration_seconds": shape.Number,
			"avg_update_interval_ms": shape.Number, "median_update_interval_ms": shape.Number},
		Optional: []string{"median_update_interval_ms"},
	}
	return shape.Model{
		Fields: map[string]shape.Shape{
			"schema_version": shape.String, "aiperf_version": shape.String, "benchmark_id": shape.String,
			"summary": shape.Model{
				Fields: map[string]shape.Shape{"endpoints_configured": shape.List(shape.String),
					"endpoints_successful": shape.List(shape.String), "start_time": shape.String, "end_time": shape.String,
					"endpoint_info": shape.Dict(info)},
				Optional: []string{"endpoint_info"},
			},
			"metrics":      shape.Dict(metric),
			"input_config": shape.Object,
		},
		Optional: []string{"aiperf_version", "benchmark_id"},
		Extra:    map[string]shape.Shape{"surge_version": shape.String},
	}
}()

// scrapes are five scrapes a second apart: a gauge (1, 2, 3, 4, 4), a
// counter (100, 150, 150, 400, 400), one that resets (10, 20, 5), a
// histogram that gains 10 observations, one that gains none, a summary
// (left out, as AIPerf does), an untyped family (a gauge) and an _info
// family. The last scrape repeats the fourth: not an update.
func scrapes() []ServerSample {
	const t0 = int64(1_800_000_000_000_000_000)
	gauge := []float64{1, 2, 3, 4, 4}
	counter := []float64{100, 150, 150, 400, 400}
	reset := []float64{10, 20, 5, 5, 5}
	m := map[string]string{"model_name": "m"}
	hist := func(count, sum float64, b ...float64) Sample {
		return Sample{Labels: m, Count: count, Sum: sum, Value: math.NaN(),
			Buckets: []Bucket{{0.5, b[0]}, {1, b[1]}, {math.Inf(1), b[2]}}}
	}
	var out []ServerSample
	for i := range 5 {
		h := hist(2, 0.6, 1, 2, 2)
		if i >= 3 {
			h = hist(12, 8.6, 3, 10, 12)
		} else if i > 0 {
			h = hist(5, 2.6, 2, 4, 5)
		}
		out = append(out, ServerSample{URL: "http://s:8000/metrics", WallNs: t0 + int64(i)*1e9, Took: 2 * time.Millisecond,
			Families: []Family{
				{Name: "vllm:num_requests_running", Type: "gauge", Help: "Number of requests in model execution batches.",
					Samples: []Sample{{Labels: m, Value: gauge[i], Sum: math.NaN(), Count: math.NaN()}}},
				{Name: "vllm:generation_tokens_total", Type: "counter", Help: "Number of generation tokens processed.",
					Samples: []Sample{{Labels: m, Value: counter[i]}}},
				{Name: "restarts_total", Type: "counter", Samples: []Sample{{Value: reset[min(i, 2)]}}},
				{Name: "vllm:e2e_request_latency_seconds", Type: "histogram", Help: "Histogram of e2e request latency in seconds.",
					Samples: []Sample{h}},
				{Name: "idle_seconds", Type: "histogram", Samples: []Sample{hist(4, 1, 2, 4, 4)}},
				{Name: "go_gc_duration_seconds", Type: "summary", Samples: []Sample{{Count: 1, Sum: 0.1, Quantiles: []Quantile{{0.5, 0.1}}}}},
				{Name: "cache_config_info", Type: "gauge", Samples: []Sample{{Labels: map[string]string{"block_size": "16", "dtype": "auto"}, Value: 1}}},
				{Name: "load", Type: "untyped", Help: "Load (0-1).", Samples: []Sample{{Value: 0.5}}},
			}})
	}
	return out
}

func exportOf(t *testing.T, ss []ServerSample) *ServerExport {
	t.Helper()
	c := New(ServerMetrics("http://s:8000/metrics", "http://down:8000/metrics"), Start(time.Unix(0, ss[0].WallNs)))
	c.keep(nil, ss)
	m := c.ServerExport()
	if m == nil {
		t.Fatal("no export from five scrapes")
	}
	return m
}

// TestServerExportStats checks each type's statistics as AIPerf computes
// them: a gauge over its readings (sample std), a counter's increase from
// the first reading (0 after a reset) over the time between them, a
// histogram's observations in the run and their percentiles from the
// buckets' increase.
func TestServerExportStats(t *testing.T) {
	t.Parallel()
	m := exportOf(t, scrapes())
	f := func(v float64) *float64 { return &v }
	i := func(v int64) *int64 { return &v }
	want := map[string]SeriesStats{
		"vllm:num_requests_running": {Avg: f(2.8), Min: f(1), Max: f(4), Std: f(math.Sqrt(6.8 / 4)), P1: f(1.04), P5: f(1.2),
			P10: f(1.4), P25: f(2), P50: f(3), P75: f(4), P90: f(4), P95: f(4), P99: f(4)},
		"vllm:generation_tokens_total": {Total: f(300), Rate: f(75)},
		"restarts_total":               {Total: f(0), Rate: f(0)},
		// Buckets' increase, cumulative: ≤0.5: 2, ≤1: 8, +Inf: 10. The
		// median's rank 5 falls in (0.5, 1]: 0.5 + 0.5·(5−2)/(8−2).
		"vllm:e2e_request_latency_seconds": {Count: i(10), Sum: f(8), Avg: f(0.8), CountRate: f(2.5), SumRate: f(2),
			P1Estimate: f(0.025), P5Estimate: f(0.125), P10Estimate: f(0.25), P25Estimate: f(0.5 + 0.5*0.5/6),
			P50Estimate: f(0.75), P75Estimate: f(0.5 + 0.5*5.5/6), P90Estimate: f(1), P95Estimate: f(1), P99Estimate: f(1)},
		"idle_seconds": {Count: i(0)},
		"load":         {Avg: f(0.5), Min: f(0.5), Max: f(0.5), Std: f(0), P1: f(0.5), P5: f(0.5), P10: f(0.5), P25: f(0.5), P50: f(0.5), P75: f(0.5), P90: f(0.5), P95: f(0.5), P99: f(0.5)},
	}
	for name, w := range want {
		md, ok := m.Metrics[name]
		if !ok || len(md.Series) != 1 {
			t.Errorf("%s: %+v, want one series", name, md)
			continue
		}
		if d := cmp.Diff(w, md.Series[0].Stats, cmpopts.EquateApprox(1e-9, 1e-12)); d != "" {
			t.Errorf("%s stats (-want +got):\n%s", name, d)
		}
	}
	if _, ok := m.Metrics["go_gc_duration_seconds"]; ok {
		t.Error("a summary family was exported; AIPerf keeps none")
	}
	h := m.Metrics["vllm:e2e_request_latency_seconds"]
	if d := cmp.Diff(map[string]int64{"0.5": 2, "1": 8, "+Inf": 10}, h.Series[0].Buckets); d != "" {
		t.Errorf("histogram buckets (-want +got):\n%s", d)
	}
	if h.Type != TypeHistogram || h.Unit != "seconds" || m.Metrics["load"].Type != TypeGauge || m.Metrics["load"].Unit != "ratio" {
		t.Errorf("types and units: histogram %s %q, untyped %s %q", h.Type, h.Unit, m.Metrics["load"].Type, m.Metrics["load"].Unit)
	}
	if s := h.Series[0]; s.EndpointURL != "http://s:8000/metrics" || s.Labels["model_name"] != "m" {
		t.Errorf("series identity %q %v", s.EndpointURL, s.Labels)
	}
	// Five fetches, four updates (the last repeats the fourth), a second apart.
	med := 1000.0
	wantInfo := EndpointInfo{TotalFetches: 5, FirstFetchNs: 1_800_000_000_000_000_000, LastFetchNs: 1_800_000_004_000_000_000,
		AvgFetchLatencyMs: 2, UniqueUpdates: 4, FirstUpdateNs: 1_800_000_000_000_000_000, LastUpdateNs: 1_800_000_003_000_000_000,
		DurationSeconds: 3, AvgUpdateIntervalMs: 1000, MedianUpdateIntervalMs: &med}
	if d := cmp.Diff(wantInfo, m.Endpoints["http://s:8000/metrics"]); d != "" {
		t.Errorf("endpoint info (-want +got):\n%s", d)
	}
	if len(m.Configured) != 2 || len(m.Successful) != 1 || m.Successful[0] != "http://s:8000/metrics" {
		t.Errorf("configured %v, successful %v", m.Configured, m.Successful)
	}
}

// TestServerExportFiles pins server_metrics_export.json and .csv (goldens,
// -update rewrites them) and holds the JSON, and AIPerf's own example, to
// AIPerf's model key by key and type by type.
func TestServerExportFiles(t *testing.T) {
	t.Parallel()
	m := exportOf(t, scrapes())
	m.End = time.Unix(0, 1_800_000_004_000_000_000)
	h := ExportHeader{AIPerfVersion: "0.8.0", SurgeVersion: "test", BenchmarkID: "3f1c2a9e-0b4d-4e57-9a61-5c2d7e8f9a10",
		InputConfig: map[string]any{"model": "m", "concurrency": 4}}
	var js, cs bytes.Buffer
	if err := m.WriteJSON(&js, h); err != nil {
		t.Fatal(err)
	}
	if err := m.WriteCSV(&cs, h); err != nil {
		t.Fatal(err)
	}
	for name, got := range map[string][]byte{"server_metrics_export.json": js.Bytes(), "server_metrics_export.csv": cs.Bytes()} {
		path := filepath.Join("testdata", name)
		if *update {
			if err := os.WriteFile(path, got, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run go test ./telemetry -update)", err)
		}
		if d := cmp.Diff(string(want), string(got)); d != "" {
			t.Errorf("%s differs from its golden (-want +got):\n%s", name, d)
		}
	}
	for _, e := range shape.Check("surge's server_metrics_export.json", js.Bytes(), serverExportShape) {
		t.Error(e)
	}
	aiperf, err := os.ReadFile(filepath.Join("..", "metrics", "export", "testdata", "aiperf", "server_metrics_export.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range shape.Check("AIPerf's server_metrics_export.json", aiperf, serverExportShape) {
		t.Error(e)
	}
	// Every metric, series and stat key of AIPerf's example is one surge
	// writes for a family of that type.
	var a, s struct {
		Metrics map[string]struct {
			Type   string `json:"type"`
			Series []struct {
				Stats map[string]any `json:"stats"`
			} `json:"series"`
		} `json:"metrics"`
	}
	if err := json.Unmarshal(aiperf, &a); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(js.Bytes(), &s); err != nil {
		t.Fatal(err)
	}
	ours := map[string]map[string]bool{}
	for _, md := range s.Metrics {
		for _, se := range md.Series {
			if ours[md.Type] == nil {
				ours[md.Type] = map[string]bool{}
			}
			for k := range se.Stats {
				ours[md.Type][k] = true
			}
		}
	}
	for name, md := range a.Metrics {
		for k := range md.Series[0].Stats {
			if !ours[md.Type][k] {
				t.Errorf("AIPerf's %s (%s) has stat %q that surge's %s families lack", name, md.Type, k, md.Type)
			}
		}
	}

	// The CSV: the comment header, then sections gauge, counter,
	// histogram, info, each row as wide as its header.
	text := cs.String()
	if !strings.HasPrefix(text, "# AIPerf Server Metrics Export (CSV)\n# aiperf_version: 0.8.0\n# schema_version: 1.0\n# benchmark_id: 3f1c2a9e") {
		t.Errorf("CSV header:\n%s", text[:min(200, len(text))])
	}
	var body []string
	for l := range strings.SplitSeq(text, "\n") {
		if !strings.HasPrefix(l, "#") {
			body = append(body, l)
		}
	}
	r := csv.NewReader(strings.NewReader(strings.Join(body, "\n")))
	r.FieldsPerRecord = -1
	recs, err := r.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var headers []string
	width := 0
	for _, rec := range recs {
		if rec[0] == "Endpoint" {
			headers, width = append(headers, strings.Join(rec[:4], ",")), len(rec)
			continue
		}
		if len(rec) != width {
			t.Errorf("row %v has %d cells, its header %d", rec, len(rec), width)
		}
	}
	if d := cmp.Diff([]string{"Endpoint,Type,Metric,Unit", "Endpoint,Type,Metric,Unit", "Endpoint,Type,Metric,Unit",
		"Endpoint,Metric,Key,Value"}, headers); d != "" {
		t.Errorf("CSV sections (-want +got):\n%s", d)
	}
	for _, want := range []string{"s:8000,gauge,vllm:num_requests_running,,2.8000,1.0000,4.0000,",
		"s:8000,counter,vllm:generation_tokens_total,tokens,300.0000,75.0000,,,,,m,",
		"s:8000,histogram,vllm:e2e_request_latency_seconds,seconds,10,2.5000,8.0000,2.0000,0.8000,",
		"0.5=2;1=8;+Inf=10", "s:8000,cache_config_info,block_size,16,"} {
		if !strings.Contains(text, want) {
			t.Errorf("CSV lacks %q:\n%s", want, text)
		}
	}
}

// TestServerExportBounds: a gauge read past maxGaugePoints keeps at most
// that many readings, every other one, and its statistics still span them.
func TestServerExportBounds(t *testing.T) {
	t.Parallel()
	var ss seriesStore
	ss.stride = 1
	n := 3*maxGaugePoints + 7
	for i := range n {
		ss.add(TypeGauge, int64(i), Sample{Value: float64(i)})
	}
	if len(ss.vals) > maxGaugePoints || len(ss.vals) < maxGaugePoints/4 {
		t.Fatalf("%d readings kept of %d, want at most %d", len(ss.vals), n, maxGaugePoints)
	}
	s, _ := ss.series(TypeGauge)
	if *s.Stats.Min != 0 || *s.Stats.Max < float64(n)*0.99 || math.Abs(*s.Stats.P50-float64(n)/2) > float64(n)*0.01 {
		t.Errorf("thinned stats min %v max %v p50 %v over 0…%d", *s.Stats.Min, *s.Stats.Max, *s.Stats.P50, n-1)
	}
}

// TestInferUnit follows AIPerf's order: a range in the HELP text, a unit
// it names, then the name's suffix (longest first).
func TestInferUnit(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, help, want string }{
		{"vllm:kv_cache_usage_perc", "KV-cache usage. 1 means 100 percent usage.", "ratio"},
		{"vllm:kv_cache_usage_perc", "", "percent"},
		{"x_ratio", "GPU busy (0-100)", "percent"},
		{"vllm:time_to_first_token_seconds", "Histogram of time to first token in seconds.", "seconds"},
		{"queue_time", "Time in queue (ms)", "milliseconds"},
		{"vllm:prompt_tokens_total", "", "tokens"},
		{"http_requests_total", "", "requests"},
		{"process_resident_memory_bytes", "", "bytes"},
		{"vllm:request_success_total", "", "count"},
		{"sglang:num_running_reqs", "", "requests"},
		{"vllm:num_requests_running", "Number of requests.", ""},
		{"build_info", "", "info"},
	} {
		if got := InferUnit(tc.name, tc.help); got != tc.want {
			t.Errorf("InferUnit(%q, %q) = %q, want %q", tc.name, tc.help, got, tc.want)
		}
	}
}

// BenchmarkServerStoreAdd is the cost of keeping one scrape for the
// server-metrics export: a vLLM-sized scrape of 40 gauges, 40 counters and
// 20 histograms of 12 buckets, each over 4 label sets.
func BenchmarkServerStoreAdd(b *testing.B) {
	var fams []Family
	for f := range 100 {
		fam := Family{Name: "family_" + strconv.Itoa(f), Type: []string{"gauge", "counter", "histogram"}[min(f/40, 2)]}
		for l := range 4 {
			x := Sample{Labels: map[string]string{"model_name": "m", "engine": strconv.Itoa(l)}, Value: float64(f), Sum: math.NaN(), Count: math.NaN()}
			if fam.Type == "histogram" {
				x.Sum, x.Count = 10, 12
				for i := range 12 {
					x.Buckets = append(x.Buckets, Bucket{UpperBound: float64(i + 1), Count: float64(i + 1)})
				}
			}
			fam.Samples = append(fam.Samples, x)
		}
		fams = append(fams, fam)
	}
	var st srvStore
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		s := ServerSample{URL: "http://s/metrics", WallNs: int64(i), Families: fams}
		st.add(&s, false)
	}
}

// TestWarmupIsTheBaseline: the scrapes taken during the warmup are not the
// run's. A gauge's statistics cover the scrapes after it, a counter's and
// a histogram's increase starts at the warmup's last scrape, in the server
// export and in telemetry_data alike; the JSONL sink keeps every scrape.
func TestWarmupIsTheBaseline(t *testing.T) {
	t.Parallel()
	ss := scrapes()
	measuring := true
	var sink bytes.Buffer
	c := New(ServerMetrics("http://s:8000/metrics"), Start(time.Unix(0, ss[0].WallNs)), ServerSink(&sink),
		Measuring(func() bool { return measuring }))
	// Scrape 0 before the warmup starts, 1 and 2 during it, 3 and 4 after.
	for i, s := range ss {
		measuring = i == 0 || i >= 3
		c.keep(nil, []ServerSample{s})
	}
	m := c.ServerExport()
	f := func(v float64) *float64 { return &v }
	stats := func(name string) SeriesStats { return m.Metrics[name].Series[0].Stats }
	if g := stats("vllm:num_requests_running"); *g.Avg != 4 || *g.Min != 4 {
		t.Errorf("gauge avg %v min %v, want 4 and 4 (the readings after the warmup)", *g.Avg, *g.Min)
	}
	// Counter 150 at the warmup's last scrape, 400 at the end; the
	// histogram 5 observations then, 12 at the end.
	if d := cmp.Diff(SeriesStats{Total: f(250), Rate: f(125)}, stats("vllm:generation_tokens_total")); d != "" {
		t.Errorf("counter (-want +got):\n%s", d)
	}
	if h := stats("vllm:e2e_request_latency_seconds"); *h.Count != 7 || math.Abs(*h.Sum-6) > 1e-9 {
		t.Errorf("histogram count %d sum %v, want 7 and 6", *h.Count, *h.Sum)
	}
	if m.Start.Before(time.Unix(0, ss[0].WallNs)) || m.Start.Equal(time.Unix(0, ss[0].WallNs)) {
		t.Errorf("export start %v is the run's start, want the warmup's end", m.Start)
	}
	d := c.Summary()
	sv := d.Servers["http://s:8000/metrics"]
	if got := sv.Series[`vllm:generation_tokens_total{model_name="m"}`]; got.Delta == nil || *got.Delta != 250 {
		t.Errorf("telemetry_data counter increase %+v, want 250", got)
	}
	if n := len(c.ServerSamples()); n != 2 {
		t.Errorf("%d scrapes kept for the summaries, want the 2 after the warmup", n)
	}
	if n := strings.Count(sink.String(), "\n"); n != 5 {
		t.Errorf("%d JSONL lines, want all 5 scrapes", n)
	}
}

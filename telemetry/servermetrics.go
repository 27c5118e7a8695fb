package telemetry

import (
	"cmp"
	"encoding/binary"
	"hash/fnv"
	"math"
	"regexp"
	"slices"
	"strings"
	"time"
)

// The run's server metrics as AIPerf's server_metrics_export.json and .csv
// summarise them (its server_metrics/export_stats.py): every family each
// endpoint exported, each series (label set) over the run. A gauge's
// statistics are over its readings; a counter's are its increase and rate;
// a histogram's the observations during the run (count, sum, rates, the
// buckets' increase and percentiles estimated from them).

// ServerExport is the run's server-metrics summary: AIPerf's
// ServerMetricsResults, metrics first (its "hybrid" export shape).
type ServerExport struct {
	// Start and End span the collection: the run's start and the last
	// answer.
	Start, End time.Time
	// Configured lists every /metrics URL scraped; Successful those that
	// answered at least once.
	Configured, Successful []string
	// Endpoints holds each answering URL's collection statistics.
	Endpoints map[string]EndpointInfo
	// Metrics is keyed by family name; each series names its endpoint.
	Metrics map[string]*MetricData
}

// EndpointInfo is AIPerf's ServerMetricsEndpointInfo: how one endpoint was
// scraped. An update is a scrape whose values differ from the previous one.
type EndpointInfo struct {
	TotalFetches           int      `json:"total_fetches"`
	FirstFetchNs           int64    `json:"first_fetch_ns"`
	LastFetchNs            int64    `json:"last_fetch_ns"`
	AvgFetchLatencyMs      float64  `json:"avg_fetch_latency_ms"`
	UniqueUpdates          int      `json:"unique_updates"`
	FirstUpdateNs          int64    `json:"first_update_ns"`
	LastUpdateNs           int64    `json:"last_update_ns"`
	DurationSeconds        float64  `json:"duration_seconds"`
	AvgUpdateIntervalMs    float64  `json:"avg_update_interval_ms"`
	MedianUpdateIntervalMs *float64 `json:"median_update_interval_ms,omitempty"`
}

// Prometheus types as AIPerf's export names them; an untyped family is a
// gauge there.
const (
	TypeGauge     = "gauge"
	TypeCounter   = "counter"
	TypeHistogram = "histogram"
)

// MetricData is AIPerf's ServerMetricData: one family, a series per
// endpoint and label set.
type MetricData struct {
	Type        string `json:"type"`
	Description string `json:"description"`
	// Unit is inferred from the HELP text and the name's suffix as AIPerf
	// does ("" when neither tells).
	Unit   string   `json:"unit,omitempty"`
	Series []Series `json:"series"`
}

// Series is AIPerf's ServerSeries: one label set of one endpoint, its
// statistics, and for a histogram the buckets' increase (upper bound →
// observations, cumulative; absent after a reset).
type Series struct {
	EndpointURL string            `json:"endpoint_url"`
	Labels      map[string]string `json:"labels,omitempty"`
	Stats       SeriesStats       `json:"stats"`
	Buckets     map[string]int64  `json:"buckets,omitempty"`
}

// SeriesStats is AIPerf's ServerSeriesStats: the fields of the family's
// type are set, the others absent. Gauge: avg, min, max, std, p1…p99.
// Counter: total, rate. Histogram: count, sum, avg, count_rate, sum_rate,
// p1_estimate…p99_estimate (only count for a histogram with no
// observations during the run).
type SeriesStats struct {
	Avg         *float64 `json:"avg,omitempty"`
	Min         *float64 `json:"min,omitempty"`
	Max         *float64 `json:"max,omitempty"`
	Std         *float64 `json:"std,omitempty"`
	P1          *float64 `json:"p1,omitempty"`
	P5          *float64 `json:"p5,omitempty"`
	P10         *float64 `json:"p10,omitempty"`
	P25         *float64 `json:"p25,omitempty"`
	P50         *float64 `json:"p50,omitempty"`
	P75         *float64 `json:"p75,omitempty"`
	P90         *float64 `json:"p90,omitempty"`
	P95         *float64 `json:"p95,omitempty"`
	P99         *float64 `json:"p99,omitempty"`
	Total       *float64 `json:"total,omitempty"`
	Rate        *float64 `json:"rate,omitempty"`
	Count       *int64   `json:"count,omitempty"`
	Sum         *float64 `json:"sum,omitempty"`
	CountRate   *float64 `json:"count_rate,omitempty"`
	SumRate     *float64 `json:"sum_rate,omitempty"`
	P1Estimate  *float64 `json:"p1_estimate,omitempty"`
	P5Estimate  *float64 `json:"p5_estimate,omitempty"`
	P10Estimate *float64 `json:"p10_estimate,omitempty"`
	P25Estimate *float64 `json:"p25_estimate,omitempty"`
	P50Estimate *float64 `json:"p50_estimate,omitempty"`
	P75Estimate *float64 `json:"p75_estimate,omitempty"`
	P90Estimate *float64 `json:"p90_estimate,omitempty"`
	P95Estimate *float64 `json:"p95_estimate,omitempty"`
	P99Estimate *float64 `json:"p99_estimate,omitempty"`
}

// maxGaugePoints bounds the readings kept of one gauge series: past it,
// every other reading is dropped and only every other one kept from then
// on (18 h of 1 s scrapes before the first thinning).
const maxGaugePoints = 1 << 16

// srvStore accumulates every scrape of every endpoint for ServerExport,
// keeping of each series what its statistics need: a gauge's readings
// (bounded), a counter's and a histogram's first and last values.
type srvStore struct {
	eps   map[string]*epStore
	order []string
}

type epStore struct {
	fetches             int
	firstFetch, lastFet int64
	latency             time.Duration
	updates             []int64 // wall times of the scrapes that changed something
	lastHash            uint64
	fams                map[string]*famStore
}

type famStore struct {
	typ, help string
	series    map[string]*seriesStore
}

type seriesStore struct {
	labels map[string]string
	// Gauges: readings, thinned past maxGaugePoints.
	vals          []float64
	n, stride     int
	first, last   histPoint
	seen, stepped bool // stepped: a counter or histogram went down (reset)
}

// histPoint is one reading of a counter (value in sum) or a histogram.
type histPoint struct {
	ns         int64
	sum, count float64
	buckets    []Bucket
}

// add stores one scrape; a baseline (the warmup's) only sets where the
// counters' and histograms' increases start and drops the gauge readings
// so far.
func (st *srvStore) add(s *ServerSample, baseline bool) {
	if st.eps == nil {
		st.eps = map[string]*epStore{}
	}
	ep, ok := st.eps[s.URL]
	if !ok {
		ep = &epStore{fams: map[string]*famStore{}, firstFetch: s.WallNs}
		st.eps[s.URL] = ep
		st.order = append(st.order, s.URL)
	}
	ep.fetches++
	ep.lastFet = s.WallNs
	if baseline {
		for _, fs := range ep.fams {
			for _, ss := range fs.series {
				ss.reset()
			}
		}
	}
	ep.latency += s.Took
	h := fnv.New64a()
	for _, f := range s.Families {
		typ := f.Type
		switch typ {
		case "summary":
			continue // AIPerf keeps no summaries
		case TypeCounter, TypeHistogram:
		default:
			typ = TypeGauge
		}
		fs, ok := ep.fams[f.Name]
		if !ok {
			fs = &famStore{typ: typ, help: f.Help, series: map[string]*seriesStore{}}
			ep.fams[f.Name] = fs
		}
		if fs.typ != typ {
			continue // a family that changed type mid-run keeps its first
		}
		for _, x := range f.Samples {
			key := labelKey(x.Labels)
			ss, ok := fs.series[key]
			if !ok {
				ss = &seriesStore{labels: x.Labels, stride: 1}
				fs.series[key] = ss
			}
			if !baseline || typ != TypeGauge {
				ss.add(typ, s.WallNs, x)
			}
			h.Write([]byte(f.Name))
			h.Write([]byte(key))
			// Each on its own: a gauge's Sum and Count are NaN.
			var b [24]byte
			binary.LittleEndian.PutUint64(b[:], math.Float64bits(x.Value))
			binary.LittleEndian.PutUint64(b[8:], math.Float64bits(x.Sum))
			binary.LittleEndian.PutUint64(b[16:], math.Float64bits(x.Count))
			h.Write(b[:])
		}
	}
	if sum := h.Sum64(); len(ep.updates) == 0 || sum != ep.lastHash {
		ep.updates = append(ep.updates, s.WallNs)
		ep.lastHash = sum
	}
}

// labelKey is a label set's identity: its pairs sorted.
func labelKey(l map[string]string) string {
	if len(l) == 0 {
		return ""
	}
	keys := make([]string, 0, len(l))
	for k := range l {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b strings.Builder
	for _, k := range keys {
		b.WriteString(k)
		b.WriteByte('=')
		b.WriteString(l[k])
		b.WriteByte(0xff)
	}
	return b.String()
}

func (ss *seriesStore) add(typ string, ns int64, x Sample) {
	finite := func(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
	switch typ {
	case TypeGauge:
		if !finite(x.Value) {
			return
		}
		ss.n++
		if (ss.n-1)%ss.stride != 0 {
			return
		}
		ss.vals = append(ss.vals, x.Value)
		if len(ss.vals) >= maxGaugePoints {
			kept := ss.vals[:0]
			for i := 0; i < len(ss.vals); i += 2 {
				kept = append(kept, ss.vals[i])
			}
			ss.vals, ss.stride = kept, ss.stride*2
		}
	case TypeCounter:
		if !finite(x.Value) {
			return
		}
		ss.point(histPoint{ns: ns, sum: x.Value})
	case TypeHistogram:
		if !finite(x.Sum) || !finite(x.Count) || x.Buckets == nil {
			return
		}
		ss.point(histPoint{ns: ns, sum: x.Sum, count: x.Count, buckets: x.Buckets})
	}
}

// reset forgets the series' readings: the next is its first.
func (ss *seriesStore) reset() {
	ss.vals, ss.n, ss.stride = nil, 0, 1
	ss.seen, ss.stepped = false, false
}

// point records a counter's or histogram's reading as the last, the first
// if none came before, noting a reset (a value that went down).
func (ss *seriesStore) point(p histPoint) {
	if !ss.seen {
		ss.first, ss.seen = p, true
	} else if p.sum < ss.last.sum || p.count < ss.last.count {
		ss.stepped = true
	}
	ss.last = p
}

// ServerExport summarises every scrape so far as AIPerf's server-metrics
// export does; nil when no endpoint answered.
func (c *Collector) ServerExport() *ServerExport {
	c.mu.Lock()
	defer c.mu.Unlock()
	m := c.srvStore.summary()
	if m == nil {
		return nil
	}
	m.Start = c.start
	if !c.from.IsZero() {
		m.Start = c.from // the warmup's scrapes were the baseline
	}
	for _, s := range c.servers {
		m.Configured = append(m.Configured, sourceName(s))
	}
	return m
}

func (st *srvStore) summary() *ServerExport {
	if len(st.order) == 0 {
		return nil
	}
	m := &ServerExport{Endpoints: map[string]EndpointInfo{}, Metrics: map[string]*MetricData{}}
	var last int64
	for _, u := range st.order {
		ep := st.eps[u]
		m.Successful = append(m.Successful, u)
		m.Endpoints[u] = ep.info()
		last = max(last, ep.lastFet)
		for name, fs := range ep.fams {
			md, ok := m.Metrics[name]
			if !ok {
				md = &MetricData{Type: fs.typ, Description: fs.help, Unit: InferUnit(name, fs.help)}
				m.Metrics[name] = md
			}
			if md.Type != fs.typ {
				continue // two endpoints disagree on the type: the first wins
			}
			for _, ss := range fs.series {
				if s, ok := ss.series(fs.typ); ok {
					s.EndpointURL = u
					md.Series = append(md.Series, s)
				}
			}
		}
	}
	for name, md := range m.Metrics {
		if len(md.Series) == 0 {
			delete(m.Metrics, name)
			continue
		}
		slices.SortFunc(md.Series, func(a, b Series) int {
			return cmp.Or(cmp.Compare(a.EndpointURL, b.EndpointURL), cmp.Compare(labelKey(a.Labels), labelKey(b.Labels)))
		})
	}
	m.End = time.Unix(0, last)
	return m
}

func (ep *epStore) info() EndpointInfo {
	in := EndpointInfo{TotalFetches: ep.fetches, FirstFetchNs: ep.firstFetch, LastFetchNs: ep.lastFet,
		UniqueUpdates: len(ep.updates)}
	if ep.fetches > 0 {
		in.AvgFetchLatencyMs = float64(ep.latency) / float64(ep.fetches) / 1e6
	}
	if n := len(ep.updates); n > 0 {
		in.FirstUpdateNs, in.LastUpdateNs = ep.updates[0], ep.updates[n-1]
		in.DurationSeconds = float64(in.LastUpdateNs-in.FirstUpdateNs) / 1e9
		if n > 1 {
			in.AvgUpdateIntervalMs = in.DurationSeconds * 1e3 / float64(n-1)
			gaps := make([]float64, n-1)
			for i := range gaps {
				gaps[i] = float64(ep.updates[i+1]-ep.updates[i]) / 1e6
			}
			slices.Sort(gaps)
			med := percentile(gaps, 50)
			in.MedianUpdateIntervalMs = &med
		}
	}
	return in
}

// series computes one series' statistics; false when it has no reading.
func (ss *seriesStore) series(typ string) (Series, bool) {
	s := Series{Labels: ss.labels}
	f := func(v float64) *float64 { return &v }
	switch typ {
	case TypeGauge:
		if len(ss.vals) == 0 {
			return s, false
		}
		vals := slices.Clone(ss.vals)
		st := statsOf("", vals)
		s.Stats = SeriesStats{Avg: f(st.Avg), Min: f(st.Min), Max: f(st.Max), Std: f(st.Std), P1: f(st.P1), P5: f(st.P5),
			P10: f(st.P10), P25: f(st.P25), P50: f(st.P50), P75: f(st.P75), P90: f(st.P90), P95: f(st.P95), P99: f(st.P99)}
	case TypeCounter:
		if !ss.seen {
			return s, false
		}
		// As AIPerf: the increase from the first reading, 0 after a reset.
		total := max(ss.last.sum-ss.first.sum, 0)
		rate := 0.0
		if d := float64(ss.last.ns-ss.first.ns) / 1e9; d > 0 {
			rate = total / d
		}
		s.Stats = SeriesStats{Total: &total, Rate: &rate}
	case TypeHistogram:
		if !ss.seen {
			return s, false
		}
		s.Stats, s.Buckets = ss.histogram()
	}
	return s, true
}

// histogram is a histogram series' observations during the run: AIPerf's
// count, sum, avg, rates, the buckets' increase and percentiles estimated
// from them (linearly within a bucket, as Prometheus's histogram_quantile;
// AIPerf fits a polynomial, so its estimates differ slightly).
func (ss *seriesStore) histogram() (SeriesStats, map[string]int64) {
	first, last := ss.first, ss.last
	count := int64(last.count - first.count)
	sum := last.sum - first.sum
	deltas := make([]Bucket, 0, len(last.buckets))
	buckets := map[string]int64{}
	for _, b := range last.buckets {
		prev := 0.0
		for _, a := range first.buckets {
			if a.UpperBound == b.UpperBound {
				prev = a.Count
			}
		}
		if b.Count < prev {
			buckets = nil // a reset: AIPerf leaves the buckets out
			break
		}
		deltas = append(deltas, Bucket{UpperBound: b.UpperBound, Count: b.Count - prev})
		buckets[formatLE(b.UpperBound)] = int64(b.Count - prev)
	}
	if count <= 0 {
		zero := int64(0)
		return SeriesStats{Count: &zero}, buckets
	}
	f := func(v float64) *float64 { return &v }
	st := SeriesStats{Count: &count, Sum: f(sum), Avg: f(sum / float64(count))}
	if d := float64(last.ns-first.ns) / 1e9; d > 0 {
		st.CountRate, st.SumRate = f(float64(count)/d), f(sum/d)
	}
	if buckets != nil {
		q := func(p float64) *float64 {
			v := bucketQuantile(p, deltas)
			if math.IsNaN(v) {
				return nil
			}
			return &v
		}
		st.P1Estimate, st.P5Estimate, st.P10Estimate = q(0.01), q(0.05), q(0.10)
		st.P25Estimate, st.P50Estimate, st.P75Estimate = q(0.25), q(0.50), q(0.75)
		st.P90Estimate, st.P95Estimate, st.P99Estimate = q(0.90), q(0.95), q(0.99)
	}
	return st, buckets
}

// unitSuffixes map a Prometheus name's ending to its unit, longest first,
// as AIPerf's parse_unit_from_metric_name does.
var unitSuffixes = func() [][2]string {
	s := [][2]string{
		{"_seconds", "seconds"}, {"_seconds_total", "seconds"}, {"_milliseconds", "milliseconds"}, {"_ms", "milliseconds"},
		{"_ms_total", "milliseconds"}, {"_nanoseconds", "nanoseconds"}, {"_ns", "nanoseconds"}, {"_ns_total", "nanoseconds"},
		{"_bytes", "bytes"}, {"_kilobytes", "kilobytes"}, {"_megabytes", "megabytes"}, {"_gigabytes", "gigabytes"},
		{"_bytes_total", "bytes"}, {"_total", "count"}, {"_count", "count"}, {"_tokens", "tokens"},
		{"_tokens_total", "tokens"}, {"_requests", "requests"}, {"_requests_total", "requests"}, {"_messages", "messages"},
		{"_messages_total", "messages"}, {"_blocks", "blocks"}, {"_connections", "connections"}, {"_clients", "clients"},
		{"_services", "services"}, {"_endpoints", "endpoints"}, {"_errors", "errors"}, {"_errors_total", "errors"},
		{"_hits", "hits"}, {"_hits_total", "hits"}, {"_misses", "misses"}, {"_misses_total", "misses"},
		{"_queries", "queries"}, {"_preemptions", "preemptions"}, {"_preemptions_total", "preemptions"},
		{"_reqs", "requests"}, {"_gb_s", "GB/s"}, {"_ratio", "ratio"}, {"_percent", "percent"}, {"_perc", "percent"},
		{"_celsius", "celsius"}, {"_volts", "volts"}, {"_amperes", "amperes"}, {"_joules", "joules"},
		{"_watts", "watts"}, {"_meters", "meters"}, {"_info", "info"},
	}
	slices.SortStableFunc(s, func(a, b [2]string) int { return cmp.Compare(len(b[0]), len(a[0])) })
	return s
}()

// Unit patterns AIPerf reads in HELP text, in its order: a 0–1 or 0–100
// range first, then a unit named in words or in parentheses.
var (
	ratioHelp = []*regexp.Regexp{
		regexp.MustCompile(`(?i)\(0\.0\s*[-–—to]+\s*1\.0\)`), regexp.MustCompile(`(?i)\(0\s*[-–—to]+\s*1\)`),
		regexp.MustCompile(`(?i)\b0\.0\s*[-–—to]+\s*1\.0\b`),
		regexp.MustCompile(`(?i)\brange\s+0(?:\.0)?\s*(?:[-–—]|to)\s*1(?:\.0)?\b`),
		regexp.MustCompile(`(?i)(?:\b|\()1(?:\.0)?\s*(?:means|is|equals?|==?)\s*100\s*(?:%|percent)`),
	}
	percentHelp = []*regexp.Regexp{
		regexp.MustCompile(`(?i)\(0\s*[-–—to]+\s*100\)`), regexp.MustCompile(`(?i)\(0\.0\s*[-–—to]+\s*100\.0\)`),
		regexp.MustCompile(`(?i)\b0\s*[-–—to]+\s*100\s*%`), regexp.MustCompile(`(?i)\brange\s+0\s*[-–—to]+\s*100\b`),
	}
	unitHelp = []struct {
		re   *regexp.Regexp
		unit string
	}{
		{regexp.MustCompile(`(?i)\bin\s+seconds?\b`), "seconds"}, {regexp.MustCompile(`(?i)\bin\s+milliseconds?\b`), "milliseconds"},
		{regexp.MustCompile(`(?i)\bin\s+ms\b`), "milliseconds"}, {regexp.MustCompile(`(?i)\bin\s+nanoseconds?\b`), "nanoseconds"},
		{regexp.MustCompile(`(?i)\bin\s+ns\b`), "nanoseconds"}, {regexp.MustCompile(`(?i)\bin\s+bytes?\b`), "bytes"},
		{regexp.MustCompile(`(?i)\bin\s+GB/s\b`), "GB/s"}, {regexp.MustCompile(`(?i)\bin\s+MB/s\b`), "MB/s"},
		{regexp.MustCompile(`(?i)\bin\s+tokens?/s(?:ec(?:ond)?)?\b`), "tokens/s"},
		{regexp.MustCompile(`(?i)\bin\s+requests?/s(?:ec(?:ond)?)?\b`), "requests/s"},
		{regexp.MustCompile(`(?i)\(seconds?\)`), "seconds"}, {regexp.MustCompile(`(?i)\(milliseconds?\)`), "milliseconds"},
		{regexp.MustCompile(`(?i)\(ms\)`), "milliseconds"}, {regexp.MustCompile(`(?i)\(nanoseconds?\)`), "nanoseconds"},
		{regexp.MustCompile(`(?i)\(ns\)`), "nanoseconds"}, {regexp.MustCompile(`(?i)\(bytes?\)`), "bytes"},
		{regexp.MustCompile(`(?i)\(GB/s\)`), "GB/s"}, {regexp.MustCompile(`(?i)\(MB/s\)`), "MB/s"},
		{regexp.MustCompile(`(?i)\(tokens?/s(?:ec(?:ond)?)?\)`), "tokens/s"},
		{regexp.MustCompile(`(?i)\(requests?/s(?:ec(?:ond)?)?\)`), "requests/s"},
	}
)

// InferUnit is a family's unit as AIPerf infers it: a 0–1 or 0–100 range
// in the HELP text (ratio, percent), a unit the HELP text names, else the
// name's suffix; "" when none tells.
func InferUnit(name, help string) string {
	for _, re := range ratioHelp {
		if re.MatchString(help) {
			return "ratio"
		}
	}
	for _, re := range percentHelp {
		if re.MatchString(help) {
			return "percent"
		}
	}
	for _, u := range unitHelp {
		if u.re.MatchString(help) {
			return u.unit
		}
	}
	lower := strings.ToLower(name)
	for _, s := range unitSuffixes {
		if strings.HasSuffix(lower, s[0]) {
			return s[1]
		}
	}
	return ""
}

package telemetry

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"net/url"
	"slices"
	"strings"
	"time"
)

// Stats summarises one metric over a run, as AIPerf's JsonMetricResult
// (the count is surge's).
type Stats struct {
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
	Count int     `json:"count"`
}

// Energy sources in the summary.
const (
	// EnergyCounter: last − first reading of the GPU's energy counter.
	EnergyCounter = "energy_counter"
	// EnergyPowerIntegral: power × time between samples (trapezoids),
	// where the counter is absent.
	EnergyPowerIntegral = "power_integral"
	// EnergyMixed: some GPUs from the counter, some from power.
	EnergyMixed = "mixed"
)

// GPUSummary is one GPU's statistics: AIPerf's GpuSummary (gpu_index,
// gpu_name, gpu_uuid, hostname, metrics), then surge's source, sample
// count and energy.
type GPUSummary struct {
	Index int    `json:"gpu_index"`
	Name  string `json:"gpu_name"`
	UUID  string `json:"gpu_uuid"`
	// Hostname is the exporter's host label (null for NVML, as AIPerf's
	// model allows).
	Hostname *string `json:"hostname"`
	// Platform is AIPerf's GPU vendor tag (schema 1.5): "nvidia".
	Platform string `json:"platform"`
	// Metrics is keyed by AIPerf's GPU metric names of schema 1.5, which
	// prefix NVIDIA readings with nvidia_: nvidia_power_usage (W),
	// nvidia_energy_consumption (MJ, the counter's readings),
	// nvidia_gpu_utilization (%), nvidia_memory_utilization (%),
	// nvidia_memory_used (GB), nvidia_temperature (°C); and surge's
	// nvidia_sm_clock_frequency (MHz) and nvidia_memory_total (GB).
	Metrics map[string]Stats `json:"metrics"`
	Source  string           `json:"source"`
	Samples int              `json:"samples"`
	// EnergyJ is the energy consumed during the run (nil: unknown).
	EnergyJ *float64 `json:"energy_consumed_j,omitempty"`
	// EnergySource says how EnergyJ was found: EnergyCounter or
	// EnergyPowerIntegral.
	EnergySource string `json:"energy_source,omitempty"`
}

// ServerSummary is one metrics endpoint's statistics.
type ServerSummary struct {
	URL     string `json:"url"`
	Samples int    `json:"samples"`
	// Metrics is keyed by num_requests_running, num_requests_waiting,
	// kv_cache_usage, prefix_cache_hit_rate.
	Metrics map[string]Stats `json:"metrics"`
	// GenerationTokens and PromptTokens are the counters' increase during
	// the run (nil: not exported).
	GenerationTokens *float64 `json:"generation_tokens,omitempty"`
	PromptTokens     *float64 `json:"prompt_tokens,omitempty"`
	// CachedPromptTokens is the increase of the prompt tokens the server
	// served from its prefix cache: SGLang's cached_tokens counter, or
	// vLLM's prefix-cache hits (counted in tokens); nil: not exported.
	CachedPromptTokens *float64 `json:"cached_prompt_tokens,omitempty"`
	// Family is the server family its metric names belong to (vllm,
	// sglang, tgi, llamacpp, …; "" for generic names).
	Family string `json:"family,omitempty"`
	// PrefixCacheHitRate is hits/queries over the whole run from vLLM's
	// counters (nil: not exported or no queries).
	PrefixCacheHitRate *float64 `json:"prefix_cache_hit_rate_overall,omitempty"`
	// SpecAcceptRate and SpecAcceptLength are the run's speculative-decoding
	// acceptance from vLLM's counters: accepted over proposed draft tokens,
	// and 1 + accepted over verify steps (nil: not exported, or no step).
	// Metrics has the per-scrape values (spec_decode_acceptance_rate,
	// spec_decode_acceptance_length), SGLang's gauges among them.
	SpecAcceptRate   *float64 `json:"spec_decode_acceptance_rate_overall,omitempty"`
	SpecAcceptLength *float64 `json:"spec_decode_acceptance_length_overall,omitempty"`
	// Series summarises every counter and histogram series the endpoint
	// exported, known name or not, keyed name{label="value",…}: a
	// counter's increase over the run, a histogram's observations in it
	// (count, sum, mean, p50/p90/p99 from the buckets' increase).
	Series map[string]SeriesSummary `json:"series,omitempty"`
}

// Data is the telemetry_data value of the summary export, in AIPerf's
// shape (its TelemetryExportData): the collection's span and endpoints,
// then endpoint → GPU → metric statistics. Surge adds each server
// /metrics endpoint's summary and the energy the GPUs used.
type Data struct {
	Summary Span `json:"summary"`
	// Endpoints is keyed by GPU source as AIPerf displays it: a DCGM
	// exporter's host:port (its path but "/metrics"), or "nvml".
	Endpoints map[string]Endpoint `json:"endpoints"`
	// Servers is keyed by endpoint URL.
	Servers map[string]ServerSummary `json:"server_metrics,omitempty"`
	// EnergyJ is the total over GPUs whose energy is known (nil: none).
	EnergyJ      *float64 `json:"energy_consumed_j,omitempty"`
	EnergySource string   `json:"energy_source,omitempty"`
}

// Span is AIPerf's TelemetrySummary: the GPU sources configured, those
// that answered, and the time of the first and last sample.
type Span struct {
	Configured []string `json:"endpoints_configured"`
	Successful []string `json:"endpoints_successful"`
	Start      string   `json:"start_time"`
	End        string   `json:"end_time"`
}

// Endpoint is one GPU source's GPUs, keyed gpu_<index>.
type Endpoint struct {
	GPUs map[string]GPUSummary `json:"gpus"`
}

// EndpointName is a GPU source as telemetry_data keys it, AIPerf's display
// form: a URL without its scheme and trailing /metrics; other names as
// they are ("nvml").
func EndpointName(source string) string {
	u, err := url.Parse(source)
	if err != nil || u.Host == "" {
		return source
	}
	return u.Host + strings.TrimSuffix(u.Path, "/metrics")
}

// gpuKey identifies a GPU across sources and samples.
func gpuKey(g *GPUSample) string {
	if g.UUID != "" {
		return fmt.Sprintf("%d:%s", g.Index, g.UUID)
	}
	return fmt.Sprintf("%s#%d", g.Source, g.Index)
}

// Summary computes telemetry_data from every sample so far; nil when there
// are none (the export then omits telemetry_data).
func (c *Collector) Summary() *Data {
	c.mu.Lock()
	defer c.mu.Unlock()
	d := summarize(c.gpuSamples, c.srvSamples)
	if d == nil {
		return nil
	}
	c.configured(d)
	for u, sv := range d.Servers {
		if last, ok := c.lastFams[u]; ok {
			sv.Series = summarizeSeries(c.firstFams[u], last)
			d.Servers[u] = sv
		}
	}
	return d
}

// SummaryBetween is telemetry_data over the samples taken from from to to
// (offsets from the run's start): one stage of a sweep. Its server
// summaries leave out the series (their deltas span the whole run); nil
// when no sample falls in the window.
func (c *Collector) SummaryBetween(from, to time.Duration) *Data {
	c.mu.Lock()
	defer c.mu.Unlock()
	var gpus []GPUSample
	for _, g := range c.gpuSamples {
		if g.At >= from && g.At <= to {
			gpus = append(gpus, g)
		}
	}
	var servers []ServerSample
	for _, sv := range c.srvSamples {
		if sv.At >= from && sv.At <= to {
			servers = append(servers, sv)
		}
	}
	d := summarize(gpus, servers)
	if d != nil {
		c.configured(d)
	}
	return d
}

// configured lists the collector's GPU sources as d's configured
// endpoints (summarize knows only those that answered).
func (c *Collector) configured(d *Data) {
	d.Summary.Configured = d.Summary.Configured[:0]
	for _, g := range c.gpus {
		d.Summary.Configured = append(d.Summary.Configured, EndpointName(sourceName(g)))
	}
}

// EnergyJoules is the energy all GPUs consumed during the run, and whether
// it is known; output_tokens_per_joule = output tokens / joules, and
// energy_per_output_token = joules / output tokens.
func (c *Collector) EnergyJoules() (float64, bool) {
	d := c.Summary()
	if d == nil || d.EnergyJ == nil {
		return 0, false
	}
	return *d.EnergyJ, true
}

func summarize(gpus []GPUSample, servers []ServerSample) *Data {
	if len(gpus) == 0 && len(servers) == 0 {
		return nil
	}
	d := &Data{Endpoints: map[string]Endpoint{}, Summary: Span{Configured: []string{}, Successful: []string{}}}
	byGPU := map[string][]GPUSample{}
	var order []string
	var first, last int64
	for _, g := range gpus {
		k := gpuKey(&g)
		if _, ok := byGPU[k]; !ok {
			order = append(order, k)
		}
		byGPU[k] = append(byGPU[k], g)
		if g.WallNs > 0 && (first == 0 || g.WallNs < first) {
			first = g.WallNs
		}
		last = max(last, g.WallNs)
	}
	for _, sv := range servers {
		if sv.WallNs > 0 && (first == 0 || sv.WallNs < first) {
			first = sv.WallNs
		}
		last = max(last, sv.WallNs)
	}
	d.Summary.Start = time.Unix(0, first).UTC().Format(time.RFC3339Nano)
	d.Summary.End = time.Unix(0, last).UTC().Format(time.RFC3339Nano)
	total, counters, integrals := 0.0, 0, 0
	for _, k := range order {
		ss := byGPU[k]
		head := ss[0]
		gs := GPUSummary{Source: head.Source, Index: head.Index, Name: head.Name, UUID: head.UUID,
			Platform: platformNVIDIA, Samples: len(ss), Metrics: map[string]Stats{}}
		if head.Hostname != "" {
			h := head.Hostname
			gs.Hostname = &h
		}
		addStats(gs.Metrics, "nvidia_power_usage", "W", ss, func(g *GPUSample) float64 { return g.PowerW })
		addStats(gs.Metrics, "nvidia_energy_consumption", "MJ", ss, func(g *GPUSample) float64 { return g.EnergyJ / 1e6 })
		addStats(gs.Metrics, "nvidia_gpu_utilization", "%", ss, func(g *GPUSample) float64 { return g.SMUtil })
		addStats(gs.Metrics, "nvidia_memory_utilization", "%", ss, func(g *GPUSample) float64 { return g.MemUtil })
		addStats(gs.Metrics, "nvidia_memory_used", "GB", ss, func(g *GPUSample) float64 { return gb(g.MemUsed, g.MemTotal) })
		addStats(gs.Metrics, "nvidia_memory_total", "GB", ss, func(g *GPUSample) float64 { return gb(g.MemTotal, g.MemTotal) })
		addStats(gs.Metrics, "nvidia_temperature", "°C", ss, func(g *GPUSample) float64 { return g.TempC })
		addStats(gs.Metrics, "nvidia_sm_clock_frequency", "MHz", ss, func(g *GPUSample) float64 { return g.SMClockMHz })
		// Energy from one source per GPU: two sources reading the same
		// board would count it twice.
		own := slices.DeleteFunc(slices.Clone(ss), func(g GPUSample) bool { return g.Source != head.Source })
		if e, how, ok := energy(own); ok {
			gs.EnergyJ, gs.EnergySource = &e, how
			total += e
			if how == EnergyCounter {
				counters++
			} else {
				integrals++
			}
		}
		ep := EndpointName(head.Source)
		e, ok := d.Endpoints[ep]
		if !ok {
			e = Endpoint{GPUs: map[string]GPUSummary{}}
			d.Endpoints[ep] = e
			d.Summary.Successful = append(d.Summary.Successful, ep)
			d.Summary.Configured = append(d.Summary.Configured, ep)
		}
		name := fmt.Sprintf("gpu_%d", head.Index)
		if _, dup := e.GPUs[name]; dup {
			name += "_" + head.UUID // two GPUs with one index on one source: keep both
		}
		e.GPUs[name] = gs
	}
	if counters+integrals > 0 {
		d.EnergyJ = &total
		switch {
		case integrals == 0:
			d.EnergySource = EnergyCounter
		case counters == 0:
			d.EnergySource = EnergyPowerIntegral
		default:
			d.EnergySource = EnergyMixed
		}
	}

	byURL := map[string][]ServerSample{}
	var urls []string
	for _, s := range servers {
		if _, ok := byURL[s.URL]; !ok {
			urls = append(urls, s.URL)
		}
		byURL[s.URL] = append(byURL[s.URL], s)
	}
	if len(urls) > 0 {
		d.Servers = make(map[string]ServerSummary, len(urls))
	}
	for _, u := range urls {
		d.Servers[u] = serverSummary(u, byURL[u])
	}
	return d
}

// serverSummary is one endpoint's summary over its samples (in time
// order): its gauges' statistics, its counters' increases.
func serverSummary(u string, ss []ServerSample) ServerSummary {
	sv := ServerSummary{URL: u, Samples: len(ss), Metrics: map[string]Stats{}}
	addStats(sv.Metrics, "num_requests_running", "requests", ss, func(s *ServerSample) float64 { return s.Running })
	addStats(sv.Metrics, "num_requests_waiting", "requests", ss, func(s *ServerSample) float64 { return s.Waiting })
	addStats(sv.Metrics, "kv_cache_usage", "ratio", ss, func(s *ServerSample) float64 { return s.KVCacheUsage })
	addStats(sv.Metrics, "prefix_cache_hit_rate", "ratio", ss, func(s *ServerSample) float64 { return s.PrefixCacheHitRate })
	addStats(sv.Metrics, "spec_decode_acceptance_rate", "ratio", ss, func(s *ServerSample) float64 { return s.SpecAcceptRate })
	addStats(sv.Metrics, "spec_decode_acceptance_length", "ratio", ss, func(s *ServerSample) float64 { return s.SpecAcceptLength })
	sv.GenerationTokens = increase(ss, func(s *ServerSample) float64 { return s.GenerationTokens })
	sv.PromptTokens = increase(ss, func(s *ServerSample) float64 { return s.PromptTokens })
	sv.CachedPromptTokens = increase(ss, func(s *ServerSample) float64 { return s.CachedPromptTokens })
	for _, s := range ss {
		sv.Family = cmp.Or(sv.Family, s.Family)
	}
	hits := increase(ss, func(s *ServerSample) float64 { return s.PrefixCacheHits })
	queries := increase(ss, func(s *ServerSample) float64 { return s.PrefixCacheQueries })
	if hits != nil && queries != nil && *queries > 0 {
		r := *hits / *queries
		sv.PrefixCacheHitRate = &r
	}
	drafts := increase(ss, func(s *ServerSample) float64 { return s.SpecDrafts })
	drafted := increase(ss, func(s *ServerSample) float64 { return s.SpecDraftTokens })
	accepted := increase(ss, func(s *ServerSample) float64 { return s.SpecAcceptedTokens })
	if accepted != nil && drafted != nil && *drafted > 0 {
		r := *accepted / *drafted
		sv.SpecAcceptRate = &r
	}
	if accepted != nil && drafts != nil && *drafts > 0 {
		l := 1 + *accepted / *drafts
		sv.SpecAcceptLength = &l
	}
	if sv.CachedPromptTokens == nil {
		sv.CachedPromptTokens = hits // vLLM counts its hits in tokens
	}
	return sv
}

// gb converts bytes to decimal gigabytes; NaN when total is 0 (unknown).
func gb(b, total uint64) float64 {
	if total == 0 {
		return math.NaN()
	}
	return float64(b) / 1e9
}

// addStats adds name's statistics over the non-NaN values of get, if any.
func addStats[S any](into map[string]Stats, name, unit string, samples []S, get func(*S) float64) {
	vals := make([]float64, 0, len(samples))
	for i := range samples {
		if v := get(&samples[i]); !math.IsNaN(v) && !math.IsInf(v, 0) {
			vals = append(vals, v)
		}
	}
	if len(vals) == 0 {
		return
	}
	into[name] = statsOf(unit, vals)
}

// statsOf computes exact statistics, the std as AIPerf's (numpy's ddof=1,
// 0 for one value); it sorts vals.
func statsOf(unit string, vals []float64) Stats {
	slices.Sort(vals)
	sum := 0.0
	for _, v := range vals {
		sum += v
	}
	avg := sum / float64(len(vals))
	sq := 0.0
	for _, v := range vals {
		sq += (v - avg) * (v - avg)
	}
	return Stats{Unit: unit, Avg: avg, Min: vals[0], Max: vals[len(vals)-1],
		P1: percentile(vals, 1), P5: percentile(vals, 5), P10: percentile(vals, 10), P25: percentile(vals, 25),
		P50: percentile(vals, 50), P75: percentile(vals, 75), P90: percentile(vals, 90), P95: percentile(vals, 95),
		P99: percentile(vals, 99), Std: sampleStd(sq, len(vals)), Count: len(vals)}
}

// sampleStd is the sample standard deviation from the sum of squared
// deviations over n values; 0 for one value.
func sampleStd(sq float64, n int) float64 {
	if n < 2 {
		return 0
	}
	return math.Sqrt(sq / float64(n-1))
}

// percentile interpolates linearly between closest ranks of sorted vals
// (numpy's default).
func percentile(sorted []float64, p float64) float64 {
	if len(sorted) == 1 {
		return sorted[0]
	}
	r := p / 100 * float64(len(sorted)-1)
	lo := int(math.Floor(r))
	hi := min(lo+1, len(sorted)-1)
	return sorted[lo] + (sorted[hi]-sorted[lo])*(r-float64(lo))
}

// increase is a counter's last − first known value (nil: fewer than two
// readings or a reset).
func increase[S any](samples []S, get func(*S) float64) *float64 {
	first, last := math.NaN(), math.NaN()
	for i := range samples {
		v := get(&samples[i])
		if math.IsNaN(v) {
			continue
		}
		if math.IsNaN(first) {
			first = v
		}
		last = v
	}
	if math.IsNaN(first) || last < first {
		return nil
	}
	d := last - first
	return &d
}

// energy finds one GPU's energy over its samples (in time order): the
// counter's increase, or else the trapezoidal integral of power.
func energy(ss []GPUSample) (float64, string, bool) {
	if len(ss) < 2 {
		return 0, "", false
	}
	slices.SortStableFunc(ss, func(a, b GPUSample) int { return cmp.Compare(a.At, b.At) })
	var withCounter int
	for i := range ss {
		if !math.IsNaN(ss[i].EnergyJ) {
			withCounter++
		}
	}
	if withCounter >= 2 {
		if e := increase(ss, func(g *GPUSample) float64 { return g.EnergyJ }); e != nil {
			return *e, EnergyCounter, true
		}
	}
	j, n := 0.0, 0
	prev := -1
	for i := range ss {
		if math.IsNaN(ss[i].PowerW) {
			continue
		}
		if prev >= 0 {
			dt := (ss[i].At - ss[prev].At).Seconds()
			j += (ss[i].PowerW + ss[prev].PowerW) / 2 * dt
			n++
		}
		prev = i
	}
	if n == 0 {
		return 0, "", false
	}
	return j, EnergyPowerIntegral, true
}

// TokenTotals is what the servers' own /metrics counters say they
// processed over the collection: prompt and generated tokens and the
// prompt tokens served from a prefix cache, summed over the endpoints
// that exported each (nil: none did), for a run to set beside its own
// counts. Servers count differently: llama.cpp counts the prompt tokens it
// evaluated (not those its cache reused) and only completed requests'
// generated tokens; vLLM and SGLang every token, aborted requests' too.
type TokenTotals struct {
	Prompt, Output, CachedPrompt *float64
	// Families names the server families that exported them, sorted.
	Families []string
}

// TokenTotals sums the servers' token counters (ok false when no server
// exported a prompt or a generation counter).
func (d *Data) TokenTotals() (t TokenTotals, ok bool) {
	if d == nil {
		return t, false
	}
	add := func(dst **float64, v *float64) {
		if v == nil {
			return
		}
		if *dst == nil {
			*dst = new(float64)
		}
		**dst += *v
	}
	for _, u := range slices.Sorted(maps.Keys(d.Servers)) {
		sv := d.Servers[u]
		add(&t.Prompt, sv.PromptTokens)
		add(&t.Output, sv.GenerationTokens)
		add(&t.CachedPrompt, sv.CachedPromptTokens)
		if sv.Family != "" && !slices.Contains(t.Families, sv.Family) {
			t.Families = append(t.Families, sv.Family)
		}
	}
	slices.Sort(t.Families)
	return t, t.Prompt != nil || t.Output != nil
}

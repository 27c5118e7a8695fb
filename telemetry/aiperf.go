package telemetry

import (
	"math"
	"strings"
)

// The JSONL lines of gpu_telemetry_export.jsonl and
// server_metrics_export.jsonl take AIPerf's record shapes, so its readers
// load surge's files: a GPU reading as its TelemetryRecord (the GPU's
// identity, timestamp_ns, dcgm_url and the readings nested under
// telemetry_data, in its units), a scrape as its SlimRecord (endpoint_url,
// timestamp_ns, endpoint_latency_ns and every family's samples by name).
// surge's own sample, whole, goes beside them under "surge" (AIPerf's
// models allow extra keys), which surge's readers take.

// gpuRecord is AIPerf's TelemetryRecord of one GPU reading, as its
// schema 1.5 writes it: the source under telemetry_source_url (dcgm_url,
// its older name, beside it for older readers) and the vendor's platform.
type gpuRecord struct {
	Index     int       `json:"gpu_index"`
	UUID      string    `json:"gpu_uuid"`
	ModelName string    `json:"gpu_model_name"`
	Hostname  *string   `json:"hostname"`
	WallNs    int64     `json:"timestamp_ns"`
	SourceURL string    `json:"telemetry_source_url"`
	DCGMURL   string    `json:"dcgm_url"`
	Platform  string    `json:"platform"`
	Data      gpuData   `json:"telemetry_data"`
	Surge     GPUSample `json:"surge"`
}

// platformNVIDIA is AIPerf's platform tag of NVIDIA GPUs (NVML, DCGM).
const platformNVIDIA = "nvidia"

// gpuData is AIPerf's TelemetryMetrics in its units: W, MJ, %, GB, °C
// (null for a reading the GPU did not give), under the nvidia_ names of
// its schema 1.5.
type gpuData struct {
	Power       jfloat `json:"nvidia_power_usage"`
	Energy      jfloat `json:"nvidia_energy_consumption"`
	Utilization jfloat `json:"nvidia_gpu_utilization"`
	MemoryUsed  jfloat `json:"nvidia_memory_used"`
	Temperature jfloat `json:"nvidia_temperature"`
	MemUtil     jfloat `json:"nvidia_memory_utilization"`
}

// nvmlURL is the dcgm_url AIPerf gives readings from the local NVML.
const nvmlURL = "pynvml://localhost"

func aiperfGPU(s GPUSample) gpuRecord {
	r := gpuRecord{Index: s.Index, UUID: s.UUID, ModelName: s.Name, WallNs: s.WallNs, DCGMURL: s.Source, Surge: s,
		Platform: platformNVIDIA,
		Data: gpuData{Power: jfloat(s.PowerW), Energy: jfloat(s.EnergyJ / 1e6), Utilization: jfloat(s.SMUtil),
			Temperature: jfloat(s.TempC), MemUtil: jfloat(s.MemUtil), MemoryUsed: jfloat(math.NaN())}}
	if !strings.Contains(s.Source, "://") {
		r.DCGMURL = nvmlURL
	}
	r.SourceURL = r.DCGMURL
	if s.MemUsed > 0 || s.MemTotal > 0 {
		r.Data.MemoryUsed = jfloat(float64(s.MemUsed) / 1e9)
	}
	if s.Hostname != "" {
		r.Hostname = &s.Hostname
	}
	return r
}

// serverRecord is AIPerf's SlimRecord of one scrape.
type serverRecord struct {
	URL       string                    `json:"endpoint_url"`
	WallNs    int64                     `json:"timestamp_ns"`
	LatencyNs *int64                    `json:"endpoint_latency_ns,omitempty"`
	Metrics   map[string][]aiperfSample `json:"metrics"`
	Surge     ServerSample              `json:"surge"`
}

// aiperfSample is AIPerf's MetricSample: a counter's or gauge's value, or
// a histogram's buckets (upper bound → cumulative count), sum and count.
type aiperfSample struct {
	Labels  map[string]string `json:"labels,omitempty"`
	Value   *jfloat           `json:"value,omitempty"`
	Buckets map[string]jfloat `json:"buckets,omitempty"`
	Sum     *jfloat           `json:"sum,omitempty"`
	Count   *jfloat           `json:"count,omitempty"`
}

// aiperfServer builds the scrape's record. AIPerf's MetricSample has no
// quantiles and its slim records leave out the *_info families: a summary
// family, and an info one, stays in surge's sample only; a value that is
// not finite (which AIPerf's model refuses) drops its sample.
func aiperfServer(s ServerSample) serverRecord {
	r := serverRecord{URL: s.URL, WallNs: s.WallNs, Metrics: map[string][]aiperfSample{}, Surge: s}
	var kept []Family
	for _, f := range s.Families {
		if f.Type == "summary" || strings.HasSuffix(f.Name, "_info") {
			kept = append(kept, f)
			continue
		}
		var samples []aiperfSample
		for _, x := range f.Samples {
			if a, ok := aiperfSampleOf(x); ok {
				samples = append(samples, a)
			}
		}
		r.Metrics[f.Name] = samples
	}
	r.Surge.Families = kept
	return r
}

func aiperfSampleOf(x Sample) (aiperfSample, bool) {
	finite := func(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
	a := aiperfSample{Labels: x.Labels}
	if x.Buckets == nil {
		if !finite(x.Value) {
			return a, false
		}
		v := jfloat(x.Value)
		a.Value = &v
		return a, true
	}
	if !finite(x.Sum) || !finite(x.Count) {
		return a, false
	}
	a.Buckets = make(map[string]jfloat, len(x.Buckets))
	for _, b := range x.Buckets {
		if !finite(b.Count) {
			return a, false
		}
		a.Buckets[formatLE(b.UpperBound)] = jfloat(b.Count)
	}
	sum, count := jfloat(x.Sum), jfloat(x.Count)
	a.Sum, a.Count = &sum, &count
	return a, true
}

// Package telemetry samples what the GPU and the inference server were doing
// during a run: NVML on this host, DCGM exporters and the server's own
// Prometheus /metrics on others.
//
// A [Collector] polls [GPUSource]s and [ServerSource]s at a fixed interval,
// keeps every sample (1 Hz for an hour is a few thousand values), streams
// them as JSON Lines and to a callback for the dashboard, and summarises
// them for the run's telemetry_data export. Floating-point readings a source
// does not provide are NaN in memory and null in JSON.
package telemetry

import (
	"encoding/json"
	"math"
	"time"
)

// GPUSample is one reading of one GPU.
type GPUSample struct {
	// At is the offset from the run's start.
	At time.Duration `json:"at_ns"`
	// WallNs is the wall-clock time of the reading, Unix nanoseconds.
	WallNs int64 `json:"timestamp_ns"`
	// Source is "nvml" or the DCGM exporter URL.
	Source string `json:"source"`
	Index  int    `json:"gpu_index"`
	Name   string `json:"gpu_name,omitempty"`
	UUID   string `json:"gpu_uuid,omitempty"`
	// Hostname is the exporter's host label (DCGM only).
	Hostname string `json:"hostname,omitempty"`
	// SMUtil and MemUtil are percentages (0–100).
	SMUtil  float64 `json:"gpu_utilization"`
	MemUtil float64 `json:"memory_utilization"`
	// MemUsed and MemTotal are bytes (0 when unknown).
	MemUsed  uint64 `json:"memory_used_bytes"`
	MemTotal uint64 `json:"memory_total_bytes"`
	// PowerW is the power draw in watts.
	PowerW float64 `json:"power_usage_w"`
	// EnergyJ is the cumulative energy counter in joules (NaN when unknown).
	EnergyJ float64 `json:"energy_consumption_j"`
	// TempC is the GPU temperature in degrees Celsius.
	TempC float64 `json:"temperature_c"`
	// SMClockMHz is the SM clock.
	SMClockMHz float64 `json:"sm_clock_mhz"`
}

// ServerSample is one scrape of an inference server's /metrics, normalised
// across vLLM, SGLang, TGI and llama.cpp names. NaN marks a gauge the server
// does not export. Counts are summed over label sets (several models or
// engines behind one endpoint); fractions are averaged over them.
type ServerSample struct {
	// At is the offset from the run's start.
	At time.Duration `json:"at_ns"`
	// WallNs is the wall-clock time of the scrape, Unix nanoseconds.
	WallNs int64  `json:"timestamp_ns"`
	URL    string `json:"url"`
	// Running and Waiting are requests the server is processing / queueing.
	Running float64 `json:"num_requests_running"`
	Waiting float64 `json:"num_requests_waiting"`
	// KVCacheUsage is the fraction (0–1) of KV-cache blocks in use.
	KVCacheUsage float64 `json:"kv_cache_usage"`
	// PrefixCacheHitRate is the fraction (0–1) of prefix-cache hits: the
	// server's own gauge (SGLang, vLLM v0) or, from vLLM's hit and query
	// counters, the hits over the queries since the previous scrape (NaN
	// when there were none).
	PrefixCacheHitRate float64 `json:"prefix_cache_hit_rate"`
	// PrefixCacheHits and PrefixCacheQueries are vLLM's cumulative
	// prefix-cache counters (tokens).
	PrefixCacheHits    float64 `json:"prefix_cache_hits_total"`
	PrefixCacheQueries float64 `json:"prefix_cache_queries_total"`
	// GenerationTokens is the server's cumulative generated-token counter.
	GenerationTokens float64 `json:"generation_tokens_total"`
	// PromptTokens is the server's cumulative prompt-token counter.
	PromptTokens float64 `json:"prompt_tokens_total"`
	// Families is everything the endpoint exported at this scrape, known
	// names or not. The JSONL line carries it; the samples a Collector
	// keeps for the run drop it (only the first and last scrape's are
	// kept, for the summary's counter and histogram deltas).
	Families []Family `json:"families,omitempty"`
}

// jfloat is a float64 that is null in JSON when it is NaN or infinite
// (encoding/json refuses those) and NaN when read back from null.
type jfloat float64

// MarshalJSON writes null for NaN and ±Inf.
func (f jfloat) MarshalJSON() ([]byte, error) {
	v := float64(f)
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return []byte("null"), nil
	}
	return json.Marshal(v)
}

// UnmarshalJSON reads null as NaN.
func (f *jfloat) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*f = jfloat(math.NaN())
		return nil
	}
	var v float64
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*f = jfloat(v)
	return nil
}

type gpuJSON struct {
	At         time.Duration `json:"at_ns"`
	WallNs     int64         `json:"timestamp_ns"`
	Source     string        `json:"source"`
	Index      int           `json:"gpu_index"`
	Name       string        `json:"gpu_name,omitempty"`
	UUID       string        `json:"gpu_uuid,omitempty"`
	Hostname   string        `json:"hostname,omitempty"`
	SMUtil     jfloat        `json:"gpu_utilization"`
	MemUtil    jfloat        `json:"memory_utilization"`
	MemUsed    uint64        `json:"memory_used_bytes"`
	MemTotal   uint64        `json:"memory_total_bytes"`
	PowerW     jfloat        `json:"power_usage_w"`
	EnergyJ    jfloat        `json:"energy_consumption_j"`
	TempC      jfloat        `json:"temperature_c"`
	SMClockMHz jfloat        `json:"sm_clock_mhz"`
}

// MarshalJSON writes unknown (NaN) readings as null.
func (s GPUSample) MarshalJSON() ([]byte, error) {
	return json.Marshal(gpuJSON{
		At: s.At, WallNs: s.WallNs, Source: s.Source, Index: s.Index, Name: s.Name, UUID: s.UUID,
		Hostname: s.Hostname, SMUtil: jfloat(s.SMUtil), MemUtil: jfloat(s.MemUtil),
		MemUsed: s.MemUsed, MemTotal: s.MemTotal, PowerW: jfloat(s.PowerW), EnergyJ: jfloat(s.EnergyJ),
		TempC: jfloat(s.TempC), SMClockMHz: jfloat(s.SMClockMHz),
	})
}

// UnmarshalJSON reads null and missing readings as NaN.
func (s *GPUSample) UnmarshalJSON(b []byte) error {
	nan := jfloat(math.NaN())
	j := gpuJSON{SMUtil: nan, MemUtil: nan, PowerW: nan, EnergyJ: nan, TempC: nan, SMClockMHz: nan}
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*s = GPUSample{
		At: j.At, WallNs: j.WallNs, Source: j.Source, Index: j.Index, Name: j.Name, UUID: j.UUID,
		Hostname: j.Hostname, SMUtil: float64(j.SMUtil), MemUtil: float64(j.MemUtil),
		MemUsed: j.MemUsed, MemTotal: j.MemTotal, PowerW: float64(j.PowerW), EnergyJ: float64(j.EnergyJ),
		TempC: float64(j.TempC), SMClockMHz: float64(j.SMClockMHz),
	}
	return nil
}

type serverJSON struct {
	At                 time.Duration `json:"at_ns"`
	WallNs             int64         `json:"timestamp_ns"`
	URL                string        `json:"url"`
	Running            jfloat        `json:"num_requests_running"`
	Waiting            jfloat        `json:"num_requests_waiting"`
	KVCacheUsage       jfloat        `json:"kv_cache_usage"`
	PrefixCacheHitRate jfloat        `json:"prefix_cache_hit_rate"`
	PrefixCacheHits    jfloat        `json:"prefix_cache_hits_total"`
	PrefixCacheQueries jfloat        `json:"prefix_cache_queries_total"`
	GenerationTokens   jfloat        `json:"generation_tokens_total"`
	PromptTokens       jfloat        `json:"prompt_tokens_total"`
	Families           []Family      `json:"families,omitempty"`
}

// MarshalJSON writes gauges the server lacks (NaN) as null.
func (s ServerSample) MarshalJSON() ([]byte, error) {
	return json.Marshal(serverJSON{
		At: s.At, WallNs: s.WallNs, URL: s.URL, Running: jfloat(s.Running), Waiting: jfloat(s.Waiting),
		KVCacheUsage: jfloat(s.KVCacheUsage), PrefixCacheHitRate: jfloat(s.PrefixCacheHitRate),
		PrefixCacheHits: jfloat(s.PrefixCacheHits), PrefixCacheQueries: jfloat(s.PrefixCacheQueries),
		GenerationTokens: jfloat(s.GenerationTokens), PromptTokens: jfloat(s.PromptTokens),
		Families: s.Families,
	})
}

// UnmarshalJSON reads null and missing gauges as NaN.
func (s *ServerSample) UnmarshalJSON(b []byte) error {
	nan := jfloat(math.NaN())
	j := serverJSON{Running: nan, Waiting: nan, KVCacheUsage: nan, PrefixCacheHitRate: nan,
		PrefixCacheHits: nan, PrefixCacheQueries: nan, GenerationTokens: nan, PromptTokens: nan}
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*s = ServerSample{
		At: j.At, WallNs: j.WallNs, URL: j.URL, Running: float64(j.Running), Waiting: float64(j.Waiting),
		KVCacheUsage: float64(j.KVCacheUsage), PrefixCacheHitRate: float64(j.PrefixCacheHitRate),
		PrefixCacheHits: float64(j.PrefixCacheHits), PrefixCacheQueries: float64(j.PrefixCacheQueries),
		GenerationTokens: float64(j.GenerationTokens), PromptTokens: float64(j.PromptTokens),
		Families: j.Families,
	}
	return nil
}

// Package telemetry samples what the GPU and the inference server were doing
// during a run: NVML on this host, DCGM exporters and the server's own
// Prometheus /metrics on others.
package telemetry

import "time"

// GPUSample is one reading of one GPU.
type GPUSample struct {
	// At is the offset from the run's start.
	At time.Duration `json:"-"`
	// Source is "nvml" or the DCGM exporter URL.
	Source string `json:"source"`
	Index  int    `json:"gpu_index"`
	Name   string `json:"gpu_name,omitempty"`
	UUID   string `json:"gpu_uuid,omitempty"`
	// SMUtil and MemUtil are percentages (0–100).
	SMUtil  float64 `json:"gpu_utilization"`
	MemUtil float64 `json:"memory_utilization"`
	// MemUsed and MemTotal are bytes.
	MemUsed  uint64 `json:"memory_used_bytes"`
	MemTotal uint64 `json:"memory_total_bytes"`
	// PowerW is the power draw in watts.
	PowerW float64 `json:"power_usage_w"`
	// EnergyJ is the cumulative energy counter in joules (0 when unknown).
	EnergyJ float64 `json:"energy_consumption_j"`
	// TempC is the GPU temperature in degrees Celsius.
	TempC float64 `json:"temperature_c"`
	// SMClockMHz is the SM clock.
	SMClockMHz float64 `json:"sm_clock_mhz"`
}

// ServerSample is one scrape of an inference server's /metrics, normalised
// across vLLM, SGLang, TGI and llama.cpp names. NaN marks a gauge the server
// does not export.
type ServerSample struct {
	// At is the offset from the run's start.
	At  time.Duration `json:"-"`
	URL string        `json:"url"`
	// Running and Waiting are requests the server is processing / queueing.
	Running float64 `json:"num_requests_running"`
	Waiting float64 `json:"num_requests_waiting"`
	// KVCacheUsage is the fraction (0–1) of KV-cache blocks in use.
	KVCacheUsage float64 `json:"kv_cache_usage"`
	// PrefixCacheHitRate is the fraction (0–1) of prefix-cache hits.
	PrefixCacheHitRate float64 `json:"prefix_cache_hit_rate"`
	// GenerationTokens is the server's cumulative generated-token counter.
	GenerationTokens float64 `json:"generation_tokens_total"`
}

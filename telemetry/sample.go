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
	"reflect"
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
	// At is the offset from the run's start of the scrape's answer (a
	// slow answer describes the server when it came, not when it was
	// asked for).
	At time.Duration `json:"at_ns"`
	// WallNs is the wall-clock time of the answer, Unix nanoseconds.
	WallNs int64 `json:"timestamp_ns"`
	// Took is how long the scrape took (a busy server may answer /metrics
	// late).
	Took time.Duration `json:"scrape_ns,omitempty"`
	URL  string        `json:"url"`
	// Family is the server family its metric names belong to (vllm,
	// sglang, tgi, llamacpp, dynamo, tensorrt-llm, triton; "" for generic
	// names).
	Family string `json:"family,omitempty"`
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
	// CachedPromptTokens is the server's cumulative count of prompt
	// tokens served from its prefix cache (SGLang's cached_tokens; vLLM's
	// prefix-cache hits are PrefixCacheHits).
	CachedPromptTokens float64 `json:"cached_prompt_tokens_total"`
	// SpecDrafts, SpecDraftTokens and SpecAcceptedTokens are vLLM's
	// cumulative speculative-decoding counters: verify steps, draft tokens
	// proposed and accepted (spec_decode_num_*).
	SpecDrafts         float64 `json:"spec_decode_num_drafts_total"`
	SpecDraftTokens    float64 `json:"spec_decode_num_draft_tokens_total"`
	SpecAcceptedTokens float64 `json:"spec_decode_num_accepted_tokens_total"`
	// SpecAcceptRate is the fraction (0–1) of draft tokens accepted and
	// SpecAcceptLength the tokens a verify step emits (its accepted drafts
	// and the bonus token): SGLang's own gauges (spec_accept_rate,
	// spec_accept_length), or from vLLM's counters over the interval since
	// the previous scrape (NaN when no step ran in it).
	SpecAcceptRate   float64 `json:"spec_decode_acceptance_rate"`
	SpecAcceptLength float64 `json:"spec_decode_acceptance_length"`
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

// Both sample types go through one twin: a struct type built once, by
// reflection, with the sample's fields and tags but jfloat for float64, so
// a field added to a sample needs no second declaration or converter.
var (
	gpuJSON    = newNullJSON[GPUSample]()
	serverJSON = newNullJSON[ServerSample]()
)

// MarshalJSON writes unknown (NaN) readings as null.
func (s GPUSample) MarshalJSON() ([]byte, error) { return gpuJSON.marshal(s) }

// UnmarshalJSON reads null and missing readings as NaN.
func (s *GPUSample) UnmarshalJSON(b []byte) error { return gpuJSON.unmarshal(b, s) }

// MarshalJSON writes gauges the server lacks (NaN) as null.
func (s ServerSample) MarshalJSON() ([]byte, error) { return serverJSON.marshal(s) }

// UnmarshalJSON reads null and missing gauges as NaN.
func (s *ServerSample) UnmarshalJSON(b []byte) error { return serverJSON.unmarshal(b, s) }

// nullJSON is T's JSON twin: T's fields in order with their tags, float64
// fields as jfloat. The twin has no methods, so encoding it does not recurse
// into T's MarshalJSON.
type nullJSON[T any] struct {
	twin   reflect.Type
	floats []int // indices of the float64 fields
}

func newNullJSON[T any]() nullJSON[T] {
	t := reflect.TypeFor[T]()
	jf := reflect.TypeFor[jfloat]()
	fields := make([]reflect.StructField, t.NumField())
	var floats []int
	for i := range fields {
		f := t.Field(i)
		fields[i] = reflect.StructField{Name: f.Name, Type: f.Type, Tag: f.Tag}
		if f.Type.Kind() == reflect.Float64 {
			fields[i].Type = jf
			floats = append(floats, i)
		}
	}
	return nullJSON[T]{twin: reflect.StructOf(fields), floats: floats}
}

func (n nullJSON[T]) marshal(v T) ([]byte, error) {
	src := reflect.ValueOf(v)
	tw := reflect.New(n.twin).Elem()
	for i := range tw.NumField() {
		tw.Field(i).Set(src.Field(i).Convert(tw.Field(i).Type()))
	}
	return json.Marshal(tw.Interface())
}

func (n nullJSON[T]) unmarshal(b []byte, v *T) error {
	tw := reflect.New(n.twin)
	for _, i := range n.floats {
		tw.Elem().Field(i).SetFloat(math.NaN()) // missing reads as unknown
	}
	if err := json.Unmarshal(b, tw.Interface()); err != nil {
		return err
	}
	dst := reflect.ValueOf(v).Elem()
	for i := range dst.NumField() {
		dst.Field(i).Set(tw.Elem().Field(i).Convert(dst.Field(i).Type()))
	}
	return nil
}

// Gauge is the gauge the server-metrics export names name (0 for a name
// it does not know): what --stop-on's server conditions watch.
func (s ServerSample) Gauge(name string) float64 {
	switch name {
	case "kv_cache_usage":
		return s.KVCacheUsage
	case "num_requests_running":
		return s.Running
	case "num_requests_waiting":
		return s.Waiting
	case "prefix_cache_hit_rate":
		return s.PrefixCacheHitRate
	}
	return 0
}

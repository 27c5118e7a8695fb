package telemetry

import (
	"encoding/json"
	"math"
	"slices"
	"testing"
)

// TestAIPerfRecordShapes: a GPU reading is AIPerf's TelemetryRecord (the
// readings under telemetry_data in its units: W, MJ, GB) and a scrape its
// SlimRecord (each family's samples by name: value, or buckets by upper
// bound with sum and count), surge's sample beside under "surge".
func TestAIPerfRecordShapes(t *testing.T) {
	t.Parallel()
	g := GPUSample{WallNs: 1_800_000_000_000_000_000, Source: "nvml", Index: 1, Name: "H100", UUID: "GPU-1",
		SMUtil: 50, MemUtil: math.NaN(), MemUsed: 2e9, MemTotal: 8e9, PowerW: 300, EnergyJ: 4e6, TempC: 60, SMClockMHz: 1980}
	var gr map[string]any
	b, err := json.Marshal(aiperfGPU(g))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &gr); err != nil {
		t.Fatal(err)
	}
	keys := func(m map[string]any) []string {
		var ks []string
		for k := range m {
			ks = append(ks, k)
		}
		slices.Sort(ks)
		return ks
	}
	if got, want := keys(gr), []string{"dcgm_url", "gpu_index", "gpu_model_name", "gpu_uuid", "hostname", "platform", "surge", "telemetry_data", "telemetry_source_url", "timestamp_ns"}; !slices.Equal(got, want) {
		t.Errorf("GPU record keys %v, want %v", got, want)
	}
	data := gr["telemetry_data"].(map[string]any)
	for k, want := range map[string]any{"nvidia_power_usage": 300.0, "nvidia_energy_consumption": 4.0, "nvidia_gpu_utilization": 50.0,
		"nvidia_memory_used": 2.0, "nvidia_temperature": 60.0, "nvidia_memory_utilization": nil} {
		if data[k] != want {
			t.Errorf("telemetry_data.%s = %v, want %v", k, data[k], want)
		}
	}
	if gr["dcgm_url"] != nvmlURL || gr["telemetry_source_url"] != nvmlURL || gr["platform"] != "nvidia" ||
		gr["gpu_model_name"] != "H100" || gr["hostname"] != nil {
		t.Errorf("GPU identity %v", gr)
	}

	s := ServerSample{URL: "http://h/metrics", WallNs: 7, Running: 2, Families: []Family{
		{Name: "vllm:num_requests_running", Type: "gauge", Samples: []Sample{{Labels: map[string]string{"model_name": "m"}, Value: 2}}},
		{Name: "vllm:e2e_request_latency_seconds", Type: "histogram", Samples: []Sample{{Count: 3, Sum: 1.5,
			Buckets: []Bucket{{0.5, 1}, {math.Inf(1), 3}}}}},
		{Name: "vllm:lag", Type: "gauge", Samples: []Sample{{Value: math.NaN()}}},
		{Name: "go_gc_duration_seconds", Type: "summary", Samples: []Sample{{Count: 1, Sum: 0.1, Quantiles: []Quantile{{0.5, 0.1}}}}},
		{Name: "python_info", Type: "gauge", Samples: []Sample{{Value: 1}}},
	}}
	b, err = json.Marshal(aiperfServer(s))
	if err != nil {
		t.Fatal(err)
	}
	var sr struct {
		URL     string                      `json:"endpoint_url"`
		WallNs  int64                       `json:"timestamp_ns"`
		Metrics map[string][]map[string]any `json:"metrics"`
		Surge   map[string]any              `json:"surge"`
	}
	if err := json.Unmarshal(b, &sr); err != nil {
		t.Fatal(err)
	}
	if sr.URL != s.URL || sr.WallNs != 7 || sr.Surge["num_requests_running"] != 2.0 {
		t.Errorf("server record %s", b)
	}
	if got, want := len(sr.Metrics), 3; got != want {
		t.Errorf("%d families, want %d (the summary and the _info family stay surge's): %s", got, want, b)
	}
	if v := sr.Metrics["vllm:num_requests_running"]; len(v) != 1 || v[0]["value"] != 2.0 || v[0]["labels"].(map[string]any)["model_name"] != "m" {
		t.Errorf("gauge %v", v)
	}
	h := sr.Metrics["vllm:e2e_request_latency_seconds"]
	if len(h) != 1 || h[0]["count"] != 3.0 || h[0]["sum"] != 1.5 || h[0]["buckets"].(map[string]any)["+Inf"] != 3.0 || h[0]["buckets"].(map[string]any)["0.5"] != 1.0 {
		t.Errorf("histogram %v", h)
	}
	if v := sr.Metrics["vllm:lag"]; len(v) != 0 {
		t.Errorf("a NaN gauge kept %v; AIPerf's MetricSample refuses it", v)
	}
	if fams := sr.Surge["families"].([]any); len(fams) != 2 {
		t.Errorf("surge keeps %d families, want the summary and the info one", len(fams))
	}
}

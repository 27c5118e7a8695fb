package telemetry

import (
	"encoding/json"
	"math"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func gpuAt(src string, idx int, uuid string, at time.Duration, power, energy float64) GPUSample {
	g := nanGPUSample(src, idx)
	g.UUID, g.At, g.PowerW, g.EnergyJ = uuid, at, power, energy
	return g
}

func TestSummaryEnergy(t *testing.T) {
	t.Parallel()
	nan := math.NaN()
	s := time.Second
	tests := []struct {
		name    string
		samples []GPUSample
		want    float64
		source  string
		known   bool
	}{
		{"counter", []GPUSample{gpuAt("nvml", 0, "A", 0, 100, 5000), gpuAt("nvml", 0, "A", s, 300, 5200), gpuAt("nvml", 0, "A", 2*s, 300, 5500)},
			500, EnergyCounter, true},
		{"power integral without counter", []GPUSample{gpuAt("d", 0, "A", 0, 100, nan), gpuAt("d", 0, "A", s, 200, nan), gpuAt("d", 0, "A", 3*s, 300, nan)},
			150 + 500, EnergyPowerIntegral, true},
		{"counter reset falls back to power", []GPUSample{gpuAt("d", 0, "A", 0, 100, 900), gpuAt("d", 0, "A", s, 100, 10)},
			100, EnergyPowerIntegral, true},
		{"two GPUs, mixed", []GPUSample{gpuAt("n", 0, "A", 0, 100, 0), gpuAt("n", 1, "B", 0, 100, nan),
			gpuAt("n", 0, "A", s, 100, 250), gpuAt("n", 1, "B", s, 300, nan)}, 250 + 200, EnergyMixed, true},
		{"same GPU from two sources counts once", []GPUSample{gpuAt("nvml", 0, "A", 0, 100, 0), gpuAt("http://d", 0, "A", 0, 100, 0),
			gpuAt("nvml", 0, "A", s, 100, 100), gpuAt("http://d", 0, "A", s, 100, 100)}, 100, EnergyCounter, true},
		{"one sample", []GPUSample{gpuAt("n", 0, "A", 0, 100, 10)}, 0, "", false},
		{"nothing readable", []GPUSample{gpuAt("n", 0, "A", 0, nan, nan), gpuAt("n", 0, "A", s, nan, nan)}, 0, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			d := summarize(tt.samples, nil)
			if (d.EnergyJ != nil) != tt.known {
				t.Fatalf("energy known = %v, want %v", d.EnergyJ != nil, tt.known)
			}
			if !tt.known {
				return
			}
			if math.Abs(*d.EnergyJ-tt.want) > 1e-9 || d.EnergySource != tt.source {
				t.Errorf("energy %v J (%s), want %v J (%s)", *d.EnergyJ, d.EnergySource, tt.want, tt.source)
			}
		})
	}
}

func TestSummaryJSON(t *testing.T) {
	t.Parallel()
	nan := math.NaN()
	gpus := []GPUSample{
		{Source: "nvml", Index: 0, UUID: "GPU-1", Name: "H100", SMUtil: 50, MemUtil: nan, MemUsed: 2e9, MemTotal: 8e9,
			PowerW: 100, EnergyJ: 0, TempC: 40, SMClockMHz: 1980},
		{At: time.Second, Source: "nvml", Index: 0, UUID: "GPU-1", Name: "H100", SMUtil: 100, MemUtil: nan, MemUsed: 4e9, MemTotal: 8e9,
			PowerW: 300, EnergyJ: 200, TempC: 60, SMClockMHz: 1980},
	}
	servers := []ServerSample{nanServerSample("http://s/metrics"), nanServerSample("http://s/metrics")}
	servers[0].Running, servers[1].Running = 2, 4
	servers[0].PrefixCacheHits, servers[0].PrefixCacheQueries = 10, 100
	servers[1].PrefixCacheHits, servers[1].PrefixCacheQueries = 40, 200
	b, err := json.Marshal(summarize(gpus, servers))
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"energy_consumed_j": 200.0, "energy_source": "energy_counter",
		"gpus": map[string]any{"0:GPU-1": map[string]any{
			"source": "nvml", "gpu_index": 0.0, "gpu_name": "H100", "gpu_uuid": "GPU-1", "samples": 2.0,
			"energy_consumed_j": 200.0, "energy_source": "energy_counter",
			"metrics": map[string]any{
				"gpu_utilization": map[string]any{"unit": "%", "avg": 75.0, "min": 50.0, "max": 100.0, "p50": 75.0, "p99": 99.5, "count": 2.0},
				"memory_used":     map[string]any{"unit": "GB", "avg": 3.0, "min": 2.0, "max": 4.0, "p50": 3.0, "p99": 3.98, "count": 2.0},
				"memory_total":    map[string]any{"unit": "GB", "avg": 8.0, "min": 8.0, "max": 8.0, "p50": 8.0, "p99": 8.0, "count": 2.0},
				"power_usage":     map[string]any{"unit": "W", "avg": 200.0, "min": 100.0, "max": 300.0, "p50": 200.0, "p99": 298.0, "count": 2.0},
				"temperature":     map[string]any{"unit": "C", "avg": 50.0, "min": 40.0, "max": 60.0, "p50": 50.0, "p99": 59.8, "count": 2.0},
				"sm_clock":        map[string]any{"unit": "MHz", "avg": 1980.0, "min": 1980.0, "max": 1980.0, "p50": 1980.0, "p99": 1980.0, "count": 2.0},
			},
		}},
		"server_metrics": map[string]any{"http://s/metrics": map[string]any{
			"url": "http://s/metrics", "samples": 2.0, "prefix_cache_hit_rate_overall": 0.3,
			"metrics": map[string]any{
				"num_requests_running": map[string]any{"unit": "requests", "avg": 3.0, "min": 2.0, "max": 4.0, "p50": 3.0, "p99": 3.98, "count": 2.0},
			},
		}},
	}
	if d := cmp.Diff(want, got, cmpopts.EquateApprox(1e-9, 0)); d != "" {
		t.Errorf("telemetry_data (-want +got):\n%s", d)
	}
}

func TestSampleJSONRoundTrip(t *testing.T) {
	t.Parallel()
	g := nanGPUSample("nvml", 2)
	g.PowerW, g.At, g.WallNs = 123.5, 1500*time.Millisecond, 1_700_000_000_000_000_000
	s := nanServerSample("u")
	s.Running = 3
	gb, err := json.Marshal(g)
	if err != nil {
		t.Fatal(err)
	}
	sb, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(gb), `"energy_consumption_j":null`) || !strings.Contains(string(gb), `"at_ns":1500000000`) {
		t.Errorf("GPU JSON %s", gb)
	}
	if !strings.Contains(string(sb), `"kv_cache_usage":null`) || !strings.Contains(string(sb), `"num_requests_running":3`) {
		t.Errorf("server JSON %s", sb)
	}
	var g2 GPUSample
	var s2 ServerSample
	if err := json.Unmarshal(gb, &g2); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(sb, &s2); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(g, g2, cmpopts.EquateNaNs()); d != "" {
		t.Errorf("GPU round trip (-want +got):\n%s", d)
	}
	if d := cmp.Diff(s, s2, cmpopts.EquateNaNs()); d != "" {
		t.Errorf("server round trip (-want +got):\n%s", d)
	}
	if err := json.Unmarshal([]byte(`{"gpu_utilization":"high"}`), &g2); err == nil {
		t.Error("bad field type accepted")
	}
}

func TestMetricsURL(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"http://localhost:8000", "http://localhost:8000/metrics"},
		{"http://10.0.0.5:8000/v1", "http://10.0.0.5:8000/metrics"},
		{"https://api.example.com/v1/chat/completions?x=1", "https://api.example.com/metrics"},
	}
	for _, tt := range tests {
		u, err := url.Parse(tt.in)
		if err != nil {
			t.Fatal(err)
		}
		if got := MetricsURL(u); got != tt.want {
			t.Errorf("MetricsURL(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

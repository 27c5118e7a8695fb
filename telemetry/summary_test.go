package telemetry

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/surgebench/surge/metrics"
	"github.com/surgebench/surge/metrics/export"
	"github.com/surgebench/surge/metrics/export/shape"
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

var update = flag.Bool("update", false, "rewrite the golden files")

// telemetryShape is AIPerf's TelemetryExportData (common/models/
// export_models.py): summary (TelemetrySummary), endpoints → EndpointData
// → gpus → GpuSummary → metrics → JsonMetricResult. Surge adds the server
// /metrics summaries, the energy used, and each GPU's source and samples.
var telemetryShape = func() shape.Shape {
	stats := shape.Model{
		Fields: map[string]shape.Shape{"unit": shape.String, "avg": shape.Number, "min": shape.Number, "max": shape.Number,
			"p1": shape.Number, "p5": shape.Number, "p10": shape.Number, "p25": shape.Number, "p50": shape.Number,
			"p75": shape.Number, "p90": shape.Number, "p95": shape.Number, "p99": shape.Number, "std": shape.Number},
		Extra: map[string]shape.Shape{"count": shape.Integer},
	}
	gpu := shape.Model{
		Fields: map[string]shape.Shape{"gpu_index": shape.Integer, "gpu_name": shape.String, "gpu_uuid": shape.String,
			"hostname": shape.OrNull(shape.String), "platform": shape.String, "metrics": shape.Dict(stats)},
		Optional: []string{"hostname"},
		Extra: map[string]shape.Shape{"source": shape.String, "samples": shape.Integer,
			"energy_consumed_j": shape.Number, "energy_source": shape.String},
	}
	return shape.Model{
		Fields: map[string]shape.Shape{
			"summary": shape.Model{Fields: map[string]shape.Shape{
				"endpoints_configured": shape.List(shape.String), "endpoints_successful": shape.List(shape.String),
				"start_time": shape.String, "end_time": shape.String,
			}},
			"endpoints": shape.Dict(shape.Model{Fields: map[string]shape.Shape{"gpus": shape.Dict(gpu)}}),
		},
		Extra: map[string]shape.Shape{"server_metrics": shape.Dict(shape.Object), "energy_consumed_j": shape.Number,
			"energy_source": shape.String},
	}
}()

// TestSummaryJSON pins telemetry_data (a golden file, -update rewrites it)
// and checks it against AIPerf's model: two GPUs of a DCGM exporter
// (hostname, endpoint host:port) and one of NVML (no hostname), a server's
// /metrics beside them.
func TestSummaryJSON(t *testing.T) {
	t.Parallel()
	nan := math.NaN()
	wall := int64(1_800_000_000_000_000_000)
	gpus := []GPUSample{
		{WallNs: wall, Source: "nvml", Index: 0, UUID: "GPU-1", Name: "H100", SMUtil: 50, MemUtil: nan, MemUsed: 2e9, MemTotal: 8e9,
			PowerW: 100, EnergyJ: 0, TempC: 40, SMClockMHz: 1980},
		{WallNs: wall + 1e9, At: time.Second, Source: "nvml", Index: 0, UUID: "GPU-1", Name: "H100", SMUtil: 100, MemUtil: nan, MemUsed: 4e9, MemTotal: 8e9,
			PowerW: 300, EnergyJ: 200, TempC: 60, SMClockMHz: 1980},
	}
	for i := range 2 {
		for k := range 3 {
			g := nanGPUSample("http://dcgm:9400/metrics", i)
			g.WallNs, g.At, g.UUID, g.Name, g.Hostname = wall+int64(k)*5e8, time.Duration(k)*500*time.Millisecond, fmt.Sprintf("GPU-d%d", i), "B200", "node-a"
			g.SMUtil, g.PowerW, g.EnergyJ = float64(10*(k+1)+i), float64(500+10*k), float64(1000*k)
			gpus = append(gpus, g)
		}
	}
	servers := []ServerSample{nanServerSample("http://s/metrics"), nanServerSample("http://s/metrics")}
	servers[0].Running, servers[1].Running = 2, 4
	servers[0].WallNs, servers[1].WallNs = wall-1e8, wall+2e9
	servers[0].PrefixCacheHits, servers[0].PrefixCacheQueries = 10, 100
	servers[1].PrefixCacheHits, servers[1].PrefixCacheQueries = 40, 200
	b, err := json.MarshalIndent(summarize(gpus, servers), "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	b = append(b, '\n')
	path := filepath.Join("testdata", "telemetry_data.json")
	if *update {
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./telemetry -update)", err)
	}
	if d := cmp.Diff(string(want), string(b)); d != "" {
		t.Errorf("telemetry_data differs from %s (-want +got):\n%s", path, d)
	}
	for _, e := range shape.Check("telemetry_data", b, telemetryShape) {
		t.Error(e)
	}
	var got Data
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	d := got.Endpoints["dcgm:9400"]
	if len(got.Endpoints) != 2 || len(d.GPUs) != 2 || d.GPUs["gpu_1"].Metrics["nvidia_gpu_utilization"].Avg != 21 ||
		*d.GPUs["gpu_0"].Hostname != "node-a" || got.Endpoints["nvml"].GPUs["gpu_0"].Hostname != nil {
		t.Errorf("endpoints %+v", got.Endpoints)
	}
	if got.Summary.Start != "2027-01-15T07:59:59.9Z" || got.Summary.End != "2027-01-15T08:00:02Z" {
		t.Errorf("start %s, want the first sample's (the server's, 100 ms before the GPUs')", got.Summary.Start)
	}
	if *got.EnergyJ != 200+2000+2000 || got.EnergySource != EnergyCounter {
		t.Errorf("energy %v (%s)", *got.EnergyJ, got.EnergySource)
	}
	// The summary CSV's GPU section reads this shape.
	var csv bytes.Buffer
	if err := export.CSV(&csv, &metrics.Summary{Run: map[metrics.Tag]float64{}}, export.WithTelemetry(&got)); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"dcgm:9400,1,B200,GPU-d1,NVIDIA GPU Utilization (%),21.00,", "nvml,0,H100,GPU-1,NVIDIA GPU Power Usage (W),200.00,", ",None\r\n"} {
		if !strings.Contains(csv.String(), want) {
			t.Errorf("CSV GPU section lacks %q:\n%s", want, csv.String())
		}
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

// TestSummaryBetween: a sweep stage's telemetry_data holds only the
// samples taken while its requests were out.
func TestSummaryBetween(t *testing.T) {
	t.Parallel()
	c := New(GPU(GPUSourceFunc(func(context.Context) ([]GPUSample, error) { return nil, nil })))
	for i := range 10 {
		g := nanGPUSample("nvml", 0)
		g.At, g.WallNs, g.PowerW = time.Duration(i)*time.Second, int64(i+1)*1e9, float64(100*i)
		c.gpuSamples = append(c.gpuSamples, g)
	}
	d := c.SummaryBetween(2*time.Second, 4*time.Second)
	p := d.Endpoints["nvml"].GPUs["gpu_0"].Metrics["nvidia_power_usage"]
	if p.Count != 3 || p.Min != 200 || p.Max != 400 || len(d.Summary.Configured) != 1 {
		t.Errorf("window 2–4 s: %+v (configured %v)", p, d.Summary.Configured)
	}
	if c.SummaryBetween(20*time.Second, 30*time.Second) != nil {
		t.Error("a window with no samples has telemetry_data")
	}
}

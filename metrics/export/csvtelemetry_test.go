package export

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/surgebench/surge/metrics"
)

// TestCSVTelemetrySection: telemetry_data in AIPerf's shape adds its GPU
// section after the run-level rows (two blank lines, a header with the
// optional columns any GPU has, one row per metric in AIPerf's order);
// another shape adds nothing.
func TestCSVTelemetrySection(t *testing.T) {
	t.Parallel()
	s := &metrics.Summary{Metrics: map[metrics.Tag]metrics.Distribution{}, Run: map[metrics.Tag]float64{metrics.RequestCount: 3}}
	host := "node-1"
	tel := map[string]any{"endpoints": map[string]any{"localhost:9400": map[string]any{"gpus": map[string]any{
		"gpu_0": map[string]any{"gpu_index": 0, "gpu_name": "NVIDIA H100", "gpu_uuid": "GPU-0", "hostname": &host,
			"metrics": map[string]any{
				"nvidia_temperature": map[string]any{"unit": "°C", "avg": 61.5, "min": 60.0, "max": 63.0},
				"nvidia_power_usage": map[string]any{"unit": "W", "avg": 310.25, "min": 300.0, "max": 320.0, "p50": 311.0},
				"not_aiperfs":        map[string]any{"unit": "x", "avg": 1.0},
			}},
	}}}}
	var b bytes.Buffer
	if err := CSV(&b, s, WithTelemetry(tel)); err != nil {
		t.Fatal(err)
	}
	want := strings.Join([]string{
		"Metric,Value",
		"Request Count,3.00",
		"",
		"",
		"Endpoint,GPU_Index,GPU_Name,GPU_UUID,Metric,avg,min,max,sum,p1,p5,p10,p25,p50,p75,p90,p95,p99,std,Hostname",
		"localhost:9400,0,NVIDIA H100,GPU-0,NVIDIA GPU Power Usage (W),310.25,300.00,320.00,,,,,,311.00,,,,,,node-1",
		"localhost:9400,0,NVIDIA H100,GPU-0,NVIDIA GPU Temperature (°C),61.50,60.00,63.00,,,,,,,,,,,,node-1",
		"",
	}, "\r\n")
	if d := cmp.Diff(want, b.String()); d != "" {
		t.Errorf("CSV with telemetry (-want +got)\n%s", d)
	}
	var plain bytes.Buffer
	if err := CSV(&plain, s, WithTelemetry(map[string]any{"gpus": map[string]any{}})); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(plain.String(), "GPU_Index") {
		t.Errorf("a telemetry_data of another shape added a section:\n%s", plain.String())
	}
}

package telemetry

import (
	"context"
	"errors"
	"math"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestDCGMCapture(t *testing.T) {
	t.Parallel()
	srv := serveFile(t, "dcgm_exporter.txt", promType)
	url := srv.URL + "/metrics"
	got, err := DCGM(url, srv.Client()).Sample(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	const mi = 1 << 20
	want := []GPUSample{
		{Source: url, Index: 0, Name: "NVIDIA H100 80GB HBM3", UUID: "GPU-5c3a2f9e-1b7d-4e6a-9c0f-2d8e7a1b3c4d",
			Hostname: "dgx-h100-07", SMUtil: 97, MemUtil: 58, MemUsed: 74240 * mi, MemTotal: (74240 + 6403 + 516) * mi,
			PowerW: 612.345, EnergyJ: 91234567.890, TempC: 52, SMClockMHz: 1980},
		{Source: url, Index: 1, Name: "NVIDIA H100 80GB HBM3", UUID: "GPU-a1e4b6c2-8f3d-4b9a-b2e7-6c5d4f3a2b1e",
			Hostname: "dgx-h100-07", SMUtil: 64, MemUtil: 31, MemUsed: 73732 * mi, MemTotal: (73732 + 6911 + 516) * mi,
			PowerW: 398.12, EnergyJ: 88765432.100, TempC: 47, SMClockMHz: 1755},
	}
	if d := cmp.Diff(want, got, cmpopts.EquateApprox(1e-12, 0)); d != "" {
		t.Errorf("samples (-want +got):\n%s", d)
	}
}

func TestDCGMPartial(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		body string
		want []GPUSample
		err  error
	}{
		{"profiling only, no free memory", `# TYPE DCGM_FI_PROF_GR_ENGINE_ACTIVE gauge
DCGM_FI_PROF_GR_ENGINE_ACTIVE{gpu="3",UUID="GPU-x"} 0.25
DCGM_FI_DEV_FB_USED{gpu="3",UUID="GPU-x"} 1024
`, []GPUSample{{Index: 3, UUID: "GPU-x", SMUtil: 25, MemUtil: math.NaN(), MemUsed: 1 << 30, PowerW: math.NaN(),
			EnergyJ: math.NaN(), TempC: math.NaN(), SMClockMHz: math.NaN()}}, nil},
		{"no gpu label", `DCGM_FI_DEV_POWER_USAGE 100
`, []GPUSample{{Index: -1, SMUtil: math.NaN(), MemUtil: math.NaN(), PowerW: 100,
			EnergyJ: math.NaN(), TempC: math.NaN(), SMClockMHz: math.NaN()}}, nil},
		{"not dcgm", "node_load1 1\n", nil, ErrNoDCGMMetrics},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_, _ = w.Write([]byte(tt.body))
			}))
			defer srv.Close()
			got, err := DCGM(srv.URL, srv.Client()).Sample(context.Background())
			if !errors.Is(err, tt.err) {
				t.Fatalf("error %v, want %v", err, tt.err)
			}
			for i := range tt.want {
				tt.want[i].Source = srv.URL
			}
			if d := cmp.Diff(tt.want, got, cmpopts.EquateNaNs()); d != "" {
				t.Errorf("samples (-want +got):\n%s", d)
			}
		})
	}
}

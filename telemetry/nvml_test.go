//go:build cgo

package telemetry

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxa100"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// mockA100 is go-nvml's 8-GPU DGX A100 whose device i reads utilisation 10+i %,
// memory 20+i %, 40 GiB used, 300+i W, (1000+i)·10⁶ mJ, 50+i °C and
// 1980−i MHz; GPU 7 has no energy counter (ERROR_NOT_SUPPORTED).
func mockA100() *dgxa100.Server {
	srv := dgxa100.New()
	for i, d := range srv.Devices {
		dev := d.(*dgxa100.Device)
		u := uint32(i)
		dev.MemoryInfo.Used = 40 << 30
		dev.MemoryInfo.Free = dev.MemoryInfo.Total - dev.MemoryInfo.Used
		dev.GetUtilizationRatesFunc = func() (nvml.Utilization, nvml.Return) {
			return nvml.Utilization{Gpu: 10 + u, Memory: 20 + u}, nvml.SUCCESS
		}
		dev.GetPowerUsageFunc = func() (uint32, nvml.Return) { return (300 + u) * 1000, nvml.SUCCESS }
		dev.GetTotalEnergyConsumptionFunc = func() (uint64, nvml.Return) {
			if i == 7 {
				return 0, nvml.ERROR_NOT_SUPPORTED
			}
			return uint64(1000+i) * 1e6, nvml.SUCCESS
		}
		dev.GetTemperatureFunc = func(nvml.TemperatureSensors) (uint32, nvml.Return) { return 50 + u, nvml.SUCCESS }
		dev.GetClockInfoFunc = func(c nvml.ClockType) (uint32, nvml.Return) {
			if c != nvml.CLOCK_SM {
				return 0, nvml.ERROR_INVALID_ARGUMENT
			}
			return 1980 - u, nvml.SUCCESS
		}
	}
	return srv
}

func TestNVMLMockReadings(t *testing.T) {
	t.Parallel()
	lib := mockA100()
	src, err := openNVML(lib)
	if err != nil {
		t.Fatal(err)
	}
	got, err := src.Sample(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 8 {
		t.Fatalf("%d samples, want 8", len(got))
	}
	var want []GPUSample
	for i, d := range lib.Devices {
		dev := d.(*dgxa100.Device)
		e := float64(1000 + i)
		if i == 7 {
			e = math.NaN()
		}
		want = append(want, GPUSample{Source: "nvml", Index: i, Name: "Mock NVIDIA A100-SXM4-40GB", UUID: dev.UUID,
			SMUtil: float64(10 + i), MemUtil: float64(20 + i), MemUsed: 40 << 30, MemTotal: dev.MemoryInfo.Total,
			PowerW: float64(300 + i), EnergyJ: e * 1000, TempC: float64(50 + i), SMClockMHz: float64(1980 - i)})
	}
	if d := cmp.Diff(want, got, cmpopts.EquateNaNs()); d != "" {
		t.Errorf("samples (-want +got):\n%s", d)
	}
	dr, ok := src.(DriverReporter)
	if !ok {
		t.Fatal("the NVML source does not report the driver's version")
	}
	if v, err := dr.DriverVersion(); err != nil || v != lib.DriverVersion || v == "" {
		t.Errorf("driver %q, %v; want the mock's %q", v, err, lib.DriverVersion)
	}
	if err := src.(interface{ Close() error }).Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := src.Sample(context.Background()); err == nil {
		t.Error("sample after Close succeeded")
	}
	if _, err := dr.DriverVersion(); err == nil {
		t.Error("driver version after Close succeeded")
	}
}

func TestNVMLUnavailable(t *testing.T) {
	t.Parallel()
	noGPUs := mockA100()
	noGPUs.DeviceGetCountFunc = func() (int, nvml.Return) { return 0, nvml.SUCCESS }
	initFails := mockA100()
	initFails.InitFunc = func() nvml.Return { return nvml.ERROR_DRIVER_NOT_LOADED }
	panics := mockA100()
	panics.DeviceGetCountFunc = nil // the moq mock panics on a nil func
	tests := []struct {
		name string
		lib  nvml.Interface
		want string
	}{
		{"library absent", nvml.New(nvml.WithLibraryPath("/nonexistent/libnvidia-ml.so.1")),
			"NVML not available (libnvidia-ml.so.1 not found)"},
		{"no GPUs", noGPUs, "NVML not available (no GPUs found)"},
		{"driver not loaded", initFails, "NVML not available (ERROR_DRIVER_NOT_LOADED)"},
		{"panic", panics, "NVML not available ("},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			src, err := openNVML(tt.lib)
			if err == nil {
				t.Fatalf("got a source %v", src)
			}
			if !errors.Is(err, ErrNVMLUnavailable) {
				t.Errorf("%v does not wrap ErrNVMLUnavailable", err)
			}
			if !strings.HasPrefix(err.Error(), tt.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("error %q, want one line starting %q", err, tt.want)
			}
		})
	}
}

// TestNVMLHost runs the real library: on a machine without it (CI, this
// dev box) it must say "not available"; with a GPU it must read one.
func TestNVMLHost(t *testing.T) {
	t.Parallel()
	src, err := NVML()
	if err != nil {
		if !errors.Is(err, ErrNVMLUnavailable) {
			t.Fatalf("error %v does not wrap ErrNVMLUnavailable", err)
		}
		t.Logf("GPU telemetry: %v", err)
		return
	}
	defer src.(interface{ Close() error }).Close()
	got, err := src.Sample(context.Background())
	if err != nil || len(got) == 0 {
		t.Fatalf("sample: %v, %d GPUs", err, len(got))
	}
	driver, err := src.(DriverReporter).DriverVersion()
	if err != nil || driver == "" {
		t.Errorf("driver version %q, %v", driver, err)
	}
	t.Logf("driver %s, %+v", driver, got[0])
}
